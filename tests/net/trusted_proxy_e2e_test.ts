/**
 * `--trusted-proxy` with real `cfgtool serve` processes: the per-IP limit
 * of command-line device sign-ins (30 starts per client IP per 10 minutes)
 * counts the address a trusted proxy forwards, and request log lines show
 * it; a server without the option ignores X-Forwarded-For (a client cannot
 * dodge the limit by writing one); a malformed header is never a 5xx.
 * The test's own requests come from 127.0.0.1, so `--trusted-proxy
 * 127.0.0.1/32` makes the test the "load balancer".
 */
import { assert, assertEquals } from "../assert.ts";
import { type ServerProcess, startServer } from "../e2e/server_process.ts";
import { CLI_RATE_LIMITS } from "../../lib/login/cli_grants.ts";

const LIMIT = CLI_RATE_LIMITS.cli_device;

async function startDevice(url: string, forwardedFor?: string): Promise<number> {
  const res = await fetch(`${url}/auth/cli/device`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor }),
    },
    body: "{}",
  });
  await res.body?.cancel();
  return res.status;
}

/** Uses up the limit of one client (as the server sees it); returns the statuses. */
async function exhaust(url: string, forwardedFor?: string): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i <= LIMIT; i++) out.push(await startDevice(url, forwardedFor));
  return out;
}

const requestLines = (logs: string) =>
  logs.split("\n").filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l));

Deno.test("behind a trusted proxy the per-IP limit counts the forwarded client", async (t) => {
  let trusting: ServerProcess | undefined;
  let plain: ServerProcess | undefined;
  try {
    trusting = await startServer({ args: ["--trusted-proxy", "127.0.0.1/32"] });
    plain = await startServer();

    await t.step("each forwarded client has its own limit, and the log names it", async () => {
      const first = await exhaust(trusting!.url, "203.0.113.9");
      assertEquals(first.slice(0, LIMIT).every((s) => s === 200), true, first.join());
      assertEquals(first[LIMIT], 429);
      // another client behind the same proxy is not affected
      assertEquals(await startDevice(trusting!.url, "198.51.100.4"), 200);
      // a spoofed entry left of the one the proxy appended changes nothing
      assertEquals(await startDevice(trusting!.url, "198.51.100.4, 203.0.113.9"), 429);
      // the proxy's own requests (no header) count for the proxy, not for the client
      assertEquals(await startDevice(trusting!.url), 200);
      const lines = requestLines(await trusting!.logsSettled())
        .filter((l) => l.path === "/auth/cli/device");
      assertEquals(lines[0].client_ip, "203.0.113.9");
      assertEquals(lines.at(-1).client_ip, "127.0.0.1");
      assert(lines.some((l) => l.client_ip === "198.51.100.4"));
    });

    await t.step(
      "a malformed X-Forwarded-For is never a 5xx, and never a fresh identity",
      async () => {
        const hostile = [
          "",
          ",,,",
          "not-an-ip",
          "999.1.1.1",
          "[::1",
          "1.2.3.4:99999999",
          "fe80::1%eth0",
          "x".repeat(4000),
          ",".repeat(4000),
          "1.1.1.1, ".repeat(500) + "garbage",
          "\u00ff\u00fe",
        ];
        for (const h of hostile) {
          const res = await fetch(`${trusting!.url}/healthz`, {
            headers: { "x-forwarded-for": h },
          });
          await res.body?.cancel();
          assertEquals(res.status, 200, h.slice(0, 30));
        }
        // garbage from the proxy's side falls back to the proxy's address (counted as such)
        const status = await startDevice(trusting!.url, "not-an-ip");
        assert(status === 200 || status === 429, String(status));
        const last = requestLines(await trusting!.logsSettled()).at(-1);
        assertEquals(last.client_ip, "127.0.0.1");
      },
    );

    await t.step("without --trusted-proxy a spoofed X-Forwarded-For is ignored", async () => {
      const statuses: number[] = [];
      // a new fake address each time: were the header read, no limit would ever trip
      for (let i = 0; i <= LIMIT; i++) {
        statuses.push(await startDevice(plain!.url, `192.0.2.${i + 1}`));
      }
      assertEquals(statuses[LIMIT], 429, statuses.join());
      const lines = requestLines(await plain!.logsSettled());
      assert(lines.length > LIMIT);
      assert(lines.every((l) => !("client_ip" in l)), "no client_ip without trusted proxies");
    });

    await t.step("a bad --trusted-proxy is a usage error at start", async () => {
      const err = await startServer({ args: ["--trusted-proxy", "10.0.0.0/33"] }).then(
        (s) => s.stop().then(() => ""),
        (e) => String(e),
      );
      assert(err.includes("--trusted-proxy") && err.includes("10.0.0.0/33"), err);
    });
  } finally {
    await trusting?.stop();
    await plain?.stop();
  }
});
