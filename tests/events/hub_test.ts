import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import { EventHub, type OpenRequest } from "../../lib/events/hub.ts";
import { ClosureMemo } from "../../lib/closure/memo.ts";
import { HeadWatcher } from "../../lib/store/head_watcher.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { readSse, type Received, type SseClient } from "./sse_client.ts";
import { CredentialCache } from "../../lib/auth/credential_cache.ts";
import { StreamGuard } from "../../lib/auth/stream_guard.ts";
import { revokeTokenRecord } from "../../lib/store/tokens.ts";
import { flagToml, NS_TOML, world } from "./world.ts";

/**
 * A hub of its own over a world's KV, on a clock the test sets. `guarded`:
 * a stream guard (on a credential cache that polls once a minute) watches
 * the streams `open` opens and re-authorises them before each delivery.
 */
async function hubWorld(options: { guarded?: boolean } = {}) {
  const w = await world();
  await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
  const credentials = new CredentialCache(w.kv, { pollMs: 60_000 });
  await credentials.start();
  const guard = options.guarded
    ? new StreamGuard(w.kv, { intervalMs: 60_000, credentials })
    : undefined;
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
    ...(guard === undefined ? {} : { access: guard }),
    now: () => new Date(clock),
  });
  const clients: SseClient[] = [];
  return {
    w,
    hub,
    guard,
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
        ...(guard === undefined ? {} : {
          watch: (close: () => void) =>
            guard.watch(principalId, close, [
              { action: "manifest.read", target: { tenant: "acme", namespace: "web" } },
            ]),
        }),
      };
      const client = readSse(new Response(await hub.open(req)));
      clients.push(client);
      return client;
    },
    async close() {
      ac.abort();
      await Promise.all(clients.map((c) => c.ended));
      guard?.close();
      credentials.close();
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

Deno.test("300 streams opening at once each get their first event, the same one for one principal", async () => {
  const h = await hubWorld();
  try {
    const clients = await Promise.all(Array.from({ length: 300 }, () => h.open("tok_a")));
    const firsts = await Promise.all(clients.map((c) => c.next((r) => r.kind === "event")));
    assertEquals(new Set(firsts.map((f) => f.data)).size, 1, "one snapshot event, shared");
    const data = JSON.parse(firsts[0]!.data);
    assertEquals([data.version, data.prev_version], [1, null]);
    assertEquals(h.hub.stats.connections, 300);
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

Deno.test("a fan-out larger than a slice re-authorises once per credential, and only after a change", async () => {
  const h = await hubWorld({ guarded: true });
  const guard = h.guard!;
  try {
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await h.w.request("POST", "/api/v1/tokens", h.w.admin, {
        name: `reader-${i}`,
        type: "namespace-read",
        tenant_slug: "acme",
        namespace_slug: "web",
      });
      ids.push(res.body.token.id);
    }
    const clients: SseClient[] = [];
    for (let i = 0; i < 1100; i++) clients.push(await h.open(ids[i % 7]!));
    for (const c of clients) await c.next((r) => r.kind === "event"); // first snapshots
    assertEquals(guard.stats.verdicts, 7, "one verdict per credential for 1100 joins");
    const system = { id: "test", principal_type: "system" as const, request_id: null };
    await revokeTokenRecord(h.w.kv, ids[0]!, system, new Date()); // as another process would
    const version = await h.w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A2") });
    const isNew = (r: Received) => r.kind === "event" && r.id === `web:${version}`;
    const revoked = clients.filter((_, i) => i % 7 === 0);
    const kept = clients.filter((_, i) => i % 7 !== 0);
    for (const c of kept) await c.next(isNew, 10_000);
    await Promise.all(revoked.map((c) => c.ended));
    assert(
      revoked.every((c) => !c.received.some(isNew)),
      "the revoked token's streams get nothing",
    );
    assertEquals(guard.stats.verdicts, 14, "the epoch moved: each credential's verdict once more");
    const again = await h.w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A3") });
    for (const c of kept) {
      await c.next((r) => r.kind === "event" && r.id === `web:${again}`, 10_000);
    }
    assertEquals(guard.stats.verdicts, 14, "nothing changed: one comparison per subscriber");
  } finally {
    await h.close();
  }
});
