/**
 * The README's tours, and the events.md example that builds on them, run as
 * written (tests/docs/tour.ts says how, and what it adapts). The flag-service
 * tour starts its own `cfgtool serve` (the README's second terminal) and
 * `cfgtool watch` (the third). docs/sdk.md and docs/ofrep.md run on their own
 * tours: sdk_doc_test.ts, ofrep_doc_test.ts.
 */
import { assert, assertEquals } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";
import type { DocBlock } from "./doc_blocks.ts";
import { blocksOf, serviceTourBlocks, Tour } from "./tour.ts";

Deno.test("every console block of the README says how the doc test runs it", async () => {
  const unmarked = (await blocksOf("README.md")).filter((b) =>
    b.lang === "console" && b.directives === null
  );
  assertEquals(unmarked.map((b) => b.where), []);
});

Deno.test("the README's workspace tour and library example print what they document", async () => {
  const tour = new Tour(await Deno.makeTempDir({ prefix: "cfgtool-tour-" }));
  try {
    const blocks = (await blocksOf("README.md")).filter((b) =>
      b.directives?.get("shell") === "workspace" || b.directives?.has("file")
    );
    assert(blocks.length >= 3);
    for (const b of blocks) await tour.runBlock(b);
  } finally {
    await tour.close();
    await Deno.remove(tour.tmp, { recursive: true });
  }
});

Deno.test("the README's flag-service tour reproduces as written against a real cfgtool serve", async (t) => {
  const tour = new Tour(await Deno.makeTempDir({ prefix: "cfgtool-tour-" }));
  const readme = await serviceTourBlocks();
  try {
    const toured = await t.step("README.md: the three terminals", async () => {
      for (const b of readme) await tour.runBlock(b);
    });
    if (!toured) return; // the steps below build on the tour's service

    await t.step(
      "docs/events.md: a namespace-read token streams its namespace; two namespaces take a tenant-admin token",
      async () => {
        const env = await tour.shells.get("first")!.exported();
        const server = env.CFGTOOL_SERVER!;
        const admin = { CFGTOOL_SERVER: server, CFGTOOL_TOKEN: env.CFGTOOL_TOKEN! };
        // The example's second namespace and its tenant-admin token.
        const ns = await runCfgtool(["namespace", "create", "search", "--tenant", "acme"], {
          env: admin,
        });
        assertEquals(ns.code, 0, ns.stderr);
        const created = await runCfgtool([
          "token",
          "create",
          "--type",
          "tenant-admin",
          "--name",
          "streams",
          "--tenant",
          "acme",
          "--expires-in",
          "1d",
        ], { env: admin });
        assertEquals(created.code, 0, created.stderr);
        const tokens: Record<string, string> = {
          READ_TOKEN: env.READ_TOKEN!,
          TENANT_TOKEN: created.stdout.trim().split("\n").at(-1)!,
          ADMIN: env.CFGTOOL_TOKEN!,
        };
        const requests = curlsOf((await blocksOf("docs/events.md"))[0]!, tour);
        assertEquals(requests.length, 4);
        for (const r of requests) {
          const token = tokens[r.tokenVar];
          assert(token, `docs/events.md uses an unknown variable $${r.tokenVar}`);
          const first = await firstEvent(r.url, { ...r.headers, Authorization: `Bearer ${token}` });
          assertEquals(first.status, 200, `${r.url} with $${r.tokenVar}: ${first.text}`);
          assert(first.text.startsWith("event: version\nid: checkout:2\n"), first.text);
        }
        // …and what the page says a namespace-read token gets for two namespaces.
        const two = requests.find((r) => r.tokenVar === "TENANT_TOKEN")!;
        const refused = await firstEvent(two.url, { Authorization: `Bearer ${tokens.READ_TOKEN}` });
        assertEquals(refused.status, 403);
        const body = JSON.parse(refused.text);
        assertEquals(body.code, "forbidden");
        assert(
          /^Token tok_\w+ is bound to namespace checkout, not search$/.test(body.message),
          body.message,
        );
      },
    );
  } finally {
    await tour.close();
    await Deno.remove(tour.tmp, { recursive: true });
  }
});

interface CurlRequest {
  tokenVar: string;
  url: string;
  headers: Record<string, string>;
}

/** The `curl -N` commands of an events.md block: bearer variable, extra headers, URL. */
function curlsOf(block: DocBlock, tour: Tour): CurlRequest[] {
  assertEquals(block.lang, "sh");
  return block.text.replaceAll("\\\n", " ").split("\n").filter((l) => l.startsWith("curl ")).map(
    (l) => {
      const headers: Record<string, string> = {};
      for (const [, h] of l.matchAll(/-H '([^']+)'/g)) {
        const [k, v] = h!.split(/:\s*/, 2);
        headers[k!] = v!;
      }
      return {
        tokenVar: l.match(/Bearer \$(\w+)/)![1]!,
        url: tour.adapt(l.match(/'(http[^']+)'/)![1]!),
        headers,
      };
    },
  );
}

/** Status and the first event (or the error body) of an event-stream request. */
async function firstEvent(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(20_000) });
  if (res.status !== 200) return { status: res.status, text: await res.text() };
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return { status: res.status, text };
}
