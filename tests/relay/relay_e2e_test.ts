/**
 * `cfgtool relay` with real processes: one primary (`cfgtool serve`), two
 * relays that follow it and a third that follows the second (a chain). The
 * SDK (`FlagClient`) and `cfgtool watch` follow relays; the primary is
 * killed while they stream and evaluate through relays; a relay is
 * restarted while the primary is down. One primary for the whole file:
 * the steps run in order, the destructive ones last.
 */
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { ALLOWED_ORIGIN, manifestFiles, startFixture } from "../e2e/evaluation_fixture.ts";
import { FlagClient } from "../../lib/client/flag_client.ts";
import { type RelayProcess, startRelay, until } from "./relay_process.ts";
import { themeToml } from "./theme_fixture.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
async function health(url: string): Promise<any> {
  return await (await fetch(`${url}/healthz`)).json();
}

async function post(
  base: string,
  path: string,
  token: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const EVAL = "/api/v1/tenants/acme/namespaces/web/environments/staging/evaluate";
const STAFF = { targeting_key: "u1", user: { email: "a@example.com" } };

/** The answers a client gets for a fixed set of reads (bodies, statuses, bulk ETag). */
async function answers(base: string, t: { read: string; client: string }): Promise<string[]> {
  const a = await post(base, EVAL, t.read, { flag: "theme", context: STAFF });
  const all = await post(base, `${EVAL}/all`, t.read, { context: STAFF });
  const one = await post(base, "/ofrep/v1/evaluate/flags/cart-limit", t.client, {
    context: { targetingKey: "u7" },
  });
  const bulk = await post(base, "/ofrep/v1/evaluate/flags", t.client, {
    context: { targetingKey: "u7" },
  });
  const flags = JSON.parse(bulk.text).flags;
  // with the browser's Origin, and refusals: the CORS headers and the error shapes match too
  const origin = { origin: ALLOWED_ORIGIN };
  const cors = (r: { headers: Headers }) =>
    ["vary", "access-control-allow-origin", "access-control-expose-headers", "content-type"]
      .map((h) => `${h}=${r.headers.get(h)}`).join(" ");
  const fromBrowser = await post(base, EVAL, t.client, { flag: "theme", context: STAFF }, origin);
  const unknownFlag = await post(base, "/ofrep/v1/evaluate/flags/nope", t.client, {}, origin);
  const badFlag = await post(base, EVAL, t.client, { flag: 5 }, origin);
  const unknownToken = await post(base, EVAL, "svc_read_notatoken0000000000000000", {}, origin);
  const code = (r: { text: string }) => {
    const body = JSON.parse(r.text);
    return body.code ?? body.errorCode;
  };
  // (the bulk ETag also covers the eventStreams URL, which names the host that answered)
  return [
    `${a.status} ${a.text}`,
    `${all.status} ${all.text}`,
    `${one.status} ${one.text}`,
    `${bulk.status} ${JSON.stringify(flags)}`,
    `${fromBrowser.status} ${fromBrowser.text} ${cors(fromBrowser)}`,
    ...[unknownFlag, badFlag, unknownToken].map((r) => `${r.status} ${code(r)} ${cors(r)}`),
  ];
}

/** Reads SSE events from a stream until `n` events arrived. */
async function readEvents(
  url: string,
  token: string,
  n: number,
  headers: Record<string, string> = {},
): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const ac = new AbortController();
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}`, ...headers },
    signal: ac.signal,
  });
  assertEquals(res.status, 200);
  const out: { event: string; data: Record<string, unknown> }[] = [];
  let buf = "";
  const dec = new TextDecoder();
  const timer = setTimeout(() => ac.abort(), 15_000);
  try {
    for await (const chunk of res.body!) {
      buf += dec.decode(chunk, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const event = /^event: (.*)$/m.exec(frame)?.[1];
        const data = /^data: (.*)$/m.exec(frame)?.[1];
        if (event && data) out.push({ event, data: JSON.parse(data) });
      }
      if (out.length >= n) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return out;
}

Deno.test("relays: follow, serve the wire of serve, chain, refuse writes, outlive the primary", async (t) => {
  const f = await startFixture();
  const relays: RelayProcess[] = [];
  const clients: FlagClient[] = [];
  let watch: Deno.ChildProcess | null = null;
  const watchDir = await Deno.makeTempDir({ prefix: "cfgtool-relay-watch-" });
  const ttl = ["--token-ttl", "1s", "--refusal-ttl", "1s"];
  try {
    const a = await startRelay({ upstream: f.inst.url, token: f.inst.admin, args: ttl });
    relays.push(a);
    const b = await startRelay({ upstream: f.inst.url, token: f.inst.admin, args: ttl });
    relays.push(b);
    const c = await startRelay({ upstream: b.url, token: f.inst.admin, args: ttl }); // a chain
    relays.push(c);

    await t.step("each relay follows every namespace its token may read", async () => {
      for (const r of [a, b, c]) {
        await until(async () => {
          const h = await health(r.url);
          return h.upstream.connected && h.namespaces.length === 3;
        }, `${r.url} follows 3 namespaces`);
        const h = await health(r.url);
        assertEquals(h.role, "relay");
        assertEquals(
          h.namespaces.map((n: { tenant: string; namespace: string }) =>
            `${n.tenant}/${n.namespace}`
          ),
          ["acme/api", "acme/web", "other/web"],
        );
        assertEquals(h.namespaces[0].lag_ms, 0);
      }
    });

    await t.step("evaluate, evaluate/all and OFREP answer exactly as the primary", async () => {
      const want = await answers(f.inst.url, f.tokens);
      assertEquals(await answers(a.url, f.tokens), want);
      assertEquals(await answers(c.url, f.tokens), want);
      const first = await post(a.url, "/ofrep/v1/evaluate/flags", f.tokens.client, {
        context: { targetingKey: "u7" },
      });
      assertEquals(
        JSON.parse(first.text).eventStreams,
        [{ type: "sse", url: `${a.url}/ofrep/v1/event-stream?token=${f.tokens.client}` }],
      );
      const bulk = await post(a.url, "/ofrep/v1/evaluate/flags", f.tokens.client, {
        context: { targetingKey: "u7" },
      }, { "if-none-match": first.headers.get("etag")! });
      assertEquals(bulk.status, 304);
      // the refusals too: another environment of a client token, an unknown environment
      const prod = await post(a.url, EVAL.replace("staging", "production"), f.tokens.client, {
        flag: "theme",
      });
      assertEquals(prod.status, 403);
      const none = await post(a.url, EVAL.replace("staging", "qa"), f.tokens.read, {
        flag: "theme",
      });
      assertEquals(JSON.parse(none.text).code, "environment_not_found");
      const wrongNs = await post(
        a.url,
        "/api/v1/tenants/acme/namespaces/api/environments/staging/evaluate",
        f.tokens.read,
        { flag: "theme" },
      );
      assertEquals(wrongNs.status, 403);
      const nobody = await post(a.url, EVAL, "svc_read_notatoken0000000000000000", { flag: "x" });
      assertEquals(nobody.status, 401);
    });

    await t.step("writes and other requests are 405 read_only naming the upstream", async () => {
      for (
        const [method, path] of [
          ["PUT", "/api/v1/tenants/acme/namespaces/web/manifest"],
          ["POST", "/api/v1/tokens"],
          ["DELETE", "/api/v1/tenants/acme/namespaces/web"],
          ["GET", "/ui"],
        ] as const
      ) {
        for (const [r, upstream] of [[a, f.inst.url], [c, b.url]] as const) {
          const res = await fetch(`${r.url}${path}`, {
            method,
            headers: { authorization: `Bearer ${f.inst.admin}` },
            body: method === "GET" ? null : "{}",
          });
          const body = await res.json();
          assertEquals(res.status, 405, `${method} ${path}`);
          assertEquals(body.code, "read_only");
          assertEquals(body.details.upstream, upstream);
        }
      }
    });

    let pushed = 1;
    const push = async (stagingPublic: boolean, theme: string) => {
      const files = manifestFiles({
        "flags/theme.toml": themeToml({ default: theme, more: ["sepia"] }),
      }, stagingPublic);
      const res = await f.push(files);
      pushed = res.body.version ?? pushed + 1;
      return pushed;
    };

    const sdk = new FlagClient({ server: c.url, token: f.tokens.read, namespaces: ["web:*"] });
    clients.push(sdk);
    await t.step("the SDK and cfgtool watch follow a relay (and a chained one)", async () => {
      await sdk.ready(15_000);
      assertEquals(sdk.closure("web")?.version, 1);
      watch = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          CLI,
          "watch",
          watchDir,
          "--server",
          a.url,
          "--token",
          f.tokens.read,
          "--ns",
          "web:theme",
        ],
        stdout: "null",
        stderr: "null",
        stdin: "null",
        env: { NO_COLOR: "1" },
      }).spawn();
      await until(
        async () => (await Deno.readTextFile(`${watchDir}/web/flags/theme.toml`)).includes("light"),
        "watch mirrors v1",
      );
      const deliveries: string[] = [];
      sdk.onChange((ch) => deliveries.push(ch.delivery));
      const v = await push(true, "sepia");
      await until(
        () => Promise.resolve(sdk.closure("web")?.version === v),
        "the SDK sees the push",
      );
      assertEquals(sdk.evaluate("web", "staging", "theme", {}).value, "sepia");
      assertEquals(deliveries, ["inline"], "the relay computed an inline delta");
      await until(
        async () => (await Deno.readTextFile(`${watchDir}/web/flags/theme.toml`)).includes("sepia"),
        "watch mirrors the push",
      );
    });

    await t.step(
      "the event stream of a relay: snapshot first, its own signed snapshot URL",
      async () => {
        const [first] = await readEvents(`${a.url}/api/v1/events?ns=web:theme`, f.tokens.read, 1);
        assertEquals(first!.event, "version");
        assertEquals(first!.data.delivery, "snapshot");
        assertEquals(first!.data.version, pushed);
        const url = first!.data.snapshot_url as string;
        assert(url.startsWith(`${a.url}/api/v1/tenants/acme/namespaces/web/closure?`), url);
        const archive = await fetch(url);
        assertEquals(archive.status, 200);
        assertMatch(archive.headers.get("etag")!, new RegExp(`^"v${pushed}-sha256:`));
        await archive.body?.cancel();
        // resuming from a version the relay holds: prev_version and prev_closure_hash are set
        const [resumed] = await readEvents(
          `${a.url}/api/v1/events?ns=web:theme`,
          f.tokens.read,
          1,
          { "last-event-id": `web:${pushed}` },
        );
        assertEquals(resumed!.data.prev_version, pushed);
        assertEquals(resumed!.data.prev_closure_hash, resumed!.data.closure_hash);
      },
    );

    await t.step("a public_evaluate flip at the primary is honoured at the relay", async () => {
      const v = await push(false, "sepia");
      await until(async () => (await health(a.url)).namespaces[1].version === v, "relay v");
      const off = await post(a.url, EVAL, f.tokens.client, { flag: "theme" });
      assertEquals(off.status, 403);
      const ofrep = await post(a.url, "/ofrep/v1/evaluate/flags", f.tokens.client, { context: {} });
      assertEquals(ofrep.status, 403);
      const v2 = await push(true, "sepia");
      await until(async () => (await health(a.url)).namespaces[1].version === v2, "relay v2");
      await until(
        async () => (await post(a.url, EVAL, f.tokens.client, { flag: "theme" })).status === 200,
        "public again",
      );
    });

    await t.step(
      "a token revoked at the primary is refused at the relay within the TTL",
      async () => {
        const ok = await post(a.url, EVAL, f.tokens.write, { flag: "theme" });
        assertEquals(ok.status, 200);
        const revoked = await f.inst.api("DELETE", `/api/v1/tokens/${f.ids.write}`, f.inst.admin);
        assertEquals(revoked.status, 200);
        const started = Date.now();
        await until(
          async () => (await post(a.url, EVAL, f.tokens.write, { flag: "theme" })).status === 401,
          "revoked token refused",
          10_000,
        );
        assert(Date.now() - started < 10_000);
      },
    );

    await t.step("hostile input to a relay: no 5xx", async () => {
      const paths = [
        `${EVAL}`,
        `${EVAL}/all`,
        "/ofrep/v1/evaluate/flags",
        "/ofrep/v1/evaluate/flags/%00%ff",
        "/api/v1/tenants/acme/namespaces/web/closure?version=99999999999999999&subscription=%%%",
        "/api/v1/tenants/acme/namespaces/web/closure?version=1&subscription=Kg&token=a.b",
        "/api/v1/tenants/acme/namespaces/web/manifest?version=-1",
        `/api/v1/tenants/${"a".repeat(300)}/namespaces/web/manifest`,
        "/api/v1/events?ns=" + "x,".repeat(5000),
        "/api/v1/events?ns=web:*&ns=web:*",
        "/api/v1/events?ns=../../etc:*",
        "/ofrep/v1/event-stream?token=%00",
      ];
      const bodies = [
        "{",
        "[]",
        '{"context":' + "[".repeat(5000) + "]".repeat(5000) + "}",
        '{"flag":{"a":1},"context":{"targetingKey":7}}',
        "\u0000",
        '{"context":"x"}',
      ];
      for (const p of paths) {
        for (const method of ["GET", "POST", "OPTIONS"]) {
          for (const body of method === "POST" ? bodies : [null]) {
            const res = await fetch(`${a.url}${p}`, {
              method,
              headers: {
                authorization: `Bearer ${f.tokens.read}`,
                "content-type": "application/json",
                "last-event-id": "\u00ff:::",
              },
              body,
            });
            await res.body?.cancel();
            assert(res.status < 500, `${method} ${p} ${body?.slice(0, 20)} → ${res.status}`);
          }
        }
      }
      const bad = await fetch(`${a.url}${EVAL}`, {
        method: "POST",
        headers: { authorization: "Bearer \u00e9\u00e9" },
      }).catch(() => null);
      assert(bad === null || bad.status < 500);
      await bad?.body?.cancel();
    });

    await t.step(
      "the primary killed: relays keep answering the same, clients keep streaming",
      async () => {
        const before = [await answers(a.url, f.tokens), await answers(c.url, f.tokens)];
        const sdkVersion = sdk.closure("web")!.version;
        await f.inst.server.kill();
        await until(async () => !(await health(a.url)).upstream.connected, "relay A sees it");
        assertEquals(await answers(a.url, f.tokens), before[0]);
        assertEquals(await answers(c.url, f.tokens), before[1]);
        const h = await health(a.url);
        assertEquals(h.serving, "last_verified");
        // the SDK streaming from the chained relay keeps its model and its stream
        assertEquals(sdk.closure("web")!.version, sdkVersion);
        assertEquals(sdk.evaluate("web", "staging", "theme", {}).value, "sepia");
        assert(sdk.connected, "the SDK's stream to the relay stays up");
        // a new subscriber still gets a snapshot it can download
        const [ev] = await readEvents(`${c.url}/api/v1/events?ns=web:*`, f.tokens.read, 1);
        const snap = await fetch(ev!.data.snapshot_url as string);
        assertEquals(snap.status, 200);
        await snap.body?.cancel();
      },
    );

    await t.step(
      "a relay restarted while the primary is down serves from its data directory",
      async () => {
        const want = await answers(a.url, f.tokens);
        assertEquals(await a.stop(), 0);
        const again = await startRelay({
          upstream: f.inst.url,
          token: f.inst.admin,
          dataDir: a.dataDir,
          args: ttl,
        });
        relays.push(again);
        assertEquals(await answers(again.url, f.tokens), want);
        const h = await health(again.url);
        assertEquals(h.upstream.connected, false);
        assertEquals(h.serving, "last_verified");
        assertEquals(h.namespaces.map((n: { source: string }) => n.source), [
          "disk",
          "disk",
          "disk",
        ]);
        assert(
          again.logs().includes("serving the last verified versions from the data directory"),
          again.logs(),
        );
        // a token it never saw cannot be checked: 503, never served blind
        const unknown = await post(again.url, EVAL, f.tokens.readOtherNamespace, { flag: "theme" });
        assertEquals(unknown.status, 503);
        assertEquals(JSON.parse(unknown.text).code, "upstream_unavailable");
      },
    );
  } finally {
    for (const cl of clients) await cl.close();
    if (watch !== null) {
      const w = watch as Deno.ChildProcess;
      try {
        w.kill("SIGTERM");
      } catch {
        // gone
      }
      await w.status;
    }
    for (const r of relays) {
      await r.stop();
      await Deno.remove(r.dataDir, { recursive: true }).catch(() => {});
    }
    await f.inst.close();
    await Deno.remove(watchDir, { recursive: true });
  }
});
