import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import { EventHub, type OpenRequest } from "../../lib/events/hub.ts";
import { ClosureMemo } from "../../lib/closure/memo.ts";
import { HeadWatcher } from "../../lib/store/head_watcher.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { readSse, type SseClient } from "./sse_client.ts";
import { flagToml, NS_TOML, world } from "./world.ts";

/** A hub of its own over a world's KV, on a clock the test sets. */
async function hubWorld() {
  const w = await world();
  await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
  const heads = new HeadWatcher(w.kv, { pollIntervalMs: 20 });
  const ac = new AbortController();
  let clock = Date.parse("2030-01-01T00:00:00.100Z");
  const hub = new EventHub({
    kv: w.kv,
    key: w.key,
    heads,
    settings: { ...DEFAULT_SETTINGS, maxConnectionsPerToken: 5000 },
    log: () => {},
    closures: new ClosureMemo(),
    shutdown: ac.signal,
    now: () => new Date(clock),
  });
  const clients: SseClient[] = [];
  return {
    w,
    hub,
    setClock: (ms: number) => (clock = ms),
    get clock() {
      return clock;
    },
    async open(principalId: string): Promise<SseClient> {
      const req: OpenRequest = {
        principalId,
        credentialId: principalId,
        tenant: "acme",
        origin: "http://cfg.test",
        namespaces: [{ slug: "web", flags: "*", hint: null }],
      };
      const client = readSse(new Response(await hub.open(req)));
      clients.push(client);
      return client;
    },
    async close() {
      ac.abort();
      await Promise.all(clients.map((c) => c.ended));
      heads.close();
      await w.close();
    },
  };
}

const snapshotUrl = async (c: SseClient) =>
  JSON.parse((await c.next((r) => r.kind === "event")).data).snapshot_url as string;

Deno.test("subscribers of one principal joining within one second get the same snapshot event; another principal or second, their own", async () => {
  const h = await hubWorld();
  try {
    const [a, b] = [await h.open("tok_a"), await h.open("tok_a")];
    const other = await h.open("tok_b");
    const [urlA, urlB, urlOther] = [
      await snapshotUrl(a),
      await snapshotUrl(b),
      await snapshotUrl(other),
    ];
    assertEquals(urlA, urlB, "same principal, same second: the same signed URL");
    assertNotEquals(urlA, urlOther, "the signed URL names its principal");
    h.setClock(h.clock + 1000);
    const later = await h.open("tok_a");
    assertNotEquals(await snapshotUrl(later), urlA, "a later second signs a later expiry");
  } finally {
    await h.close();
  }
});

Deno.test("one push reaches every member of a group larger than a fan-out slice, as one delta", async () => {
  const h = await hubWorld();
  try {
    const n = 1100; // more than two slices of 512
    const clients: SseClient[] = [];
    for (let i = 0; i < n; i++) clients.push(await h.open(`tok_${i % 7}`));
    for (const c of clients) await c.next((r) => r.kind === "event"); // first snapshots
    assertEquals(h.hub.stats.connections, n);
    const version = await h.w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    const events = await Promise.all(
      clients.map((c) => c.next((r) => r.kind === "event" && r.id === `web:${version}`, 10_000)),
    );
    for (const e of events) {
      const d = JSON.parse(e.data);
      assertEquals([d.delivery, d.version, d.prev_version], ["inline", 2, 1]);
    }
    assertEquals(h.hub.stats.deltas, 1, "one delta for the whole group");
    assert(clients.every((c) => !c.done));
  } finally {
    await h.close();
  }
});
