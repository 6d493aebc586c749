import { assert, assertEquals } from "../assert.ts";
import { ModelCache } from "../../lib/runtime/model_cache.ts";
import { evaluateFlag } from "../../lib/flags/evaluate.ts";
import { HeadWatcher } from "../../lib/store/head_watcher.ts";
import { initialVersionOps } from "../../lib/store/versions.ts";
import { commitVersion } from "../store/commit.ts";
import { olderReleaseFileSet } from "../flags/older_release_fixture.ts";

const enc = new TextEncoder();
const NS = "schema_version = 1\n[namespace.environments.production]\npublic_evaluate = false\n";

function files(defaultVariation: string): Map<string, Uint8Array> {
  return new Map([
    ["namespace.toml", enc.encode(NS)],
    [
      "flags/theme.toml",
      enc.encode(
        `schema_version = 1\ntype = "string"\ndefault = "${defaultVariation}"\n` +
          `[variations]\nlight = "light"\ndark = "dark"\n`,
      ),
    ],
  ]);
}

async function push(kv: Deno.Kv, ns: string, variation: string): Promise<number> {
  const r = await commitVersion(kv, {
    tenant: "acme",
    namespace: ns,
    files: files(variation),
    environments: { production: { public_evaluate: false } },
    created_by: "usr_1",
  });
  return r.version.version;
}

async function setup(names: string[]) {
  const kv = await Deno.openKv(":memory:");
  for (const ns of names) {
    await (await initialVersionOps(kv, "acme", ns, "usr_1", new Date()))(kv.atomic()).commit();
    await push(kv, ns, "light");
  }
  return kv;
}

const theme = async (cache: ModelCache, ns = "web") => {
  const m = await cache.get("acme", ns);
  return m === null ? null : evaluateFlag(m.model, "production", "theme", {}).value;
};

Deno.test("ModelCache.get() compiles once per version and shares concurrent misses", async () => {
  const kv = await setup(["web"]);
  const heads = new HeadWatcher(kv, { pollIntervalMs: 20 });
  const cache = new ModelCache(kv, heads, { settleMs: 0 });
  try {
    const all = await Promise.all(Array.from({ length: 20 }, () => cache.get("acme", "web")));
    assert(all.every((m) => m !== null && m.model === all[0]!.model));
    assertEquals(cache.compilations, 1);
    assertEquals(await theme(cache), "light");
    assertEquals(cache.compilations, 1);
    assertEquals(await cache.get("acme", "nope"), null);
  } finally {
    cache.close();
    heads.close();
    kv.close();
  }
});

Deno.test("ModelCache serves from its watch without reading the head, and follows pushes", async () => {
  const kv = await setup(["web"]);
  const heads = new HeadWatcher(kv, { pollIntervalMs: 20 });
  const cache = new ModelCache(kv, heads, { settleMs: 60 });
  try {
    assertEquals(await theme(cache), "light");
    await new Promise((r) => setTimeout(r, 80)); // past the settle time
    await cache.get("acme", "web");
    const reads = cache.headReads;
    for (let i = 0; i < 50; i++) await cache.get("acme", "web");
    assertEquals(cache.headReads, reads, "no head read on the hot path");
    const v = await push(kv, "web", "dark");
    // a push seen by the watch (at once in-process; the poller otherwise)
    const deadline = Date.now() + 2000;
    while ((await cache.get("acme", "web"))?.head.version !== v) {
      assert(Date.now() < deadline, "the watch did not deliver the push");
      await new Promise((r) => setTimeout(r, 5));
    }
    assertEquals(await theme(cache), "dark");
  } finally {
    cache.close();
    heads.close();
    kv.close();
  }
});

Deno.test("ModelCache.invalidate() and minVersion make the next get read the head", async () => {
  const kv = await setup(["web"]);
  // a watcher that never notifies: only invalidation and minVersion can move the cache
  const heads = new HeadWatcher(kv, { pollIntervalMs: 3_600_000, useWatch: false });
  const cache = new ModelCache(kv, heads, { settleMs: 0 });
  try {
    assertEquals(await theme(cache), "light");
    const v3 = await push(kv, "web", "dark");
    assertEquals(await theme(cache), "light", "stale without a notification");
    cache.invalidate("acme", "web");
    assertEquals(await theme(cache), "dark", "invalidate(): read at once");
    const v4 = await push(kv, "web", "light");
    assertEquals((await cache.get("acme", "web", { minVersion: v3 }))?.head.version, v3);
    assertEquals((await cache.get("acme", "web", { minVersion: v4 }))?.head.version, v4);
    const v5 = await push(kv, "web", "dark");
    cache.invalidateTenant("acme");
    assertEquals((await cache.get("acme", "web"))?.head.version, v5);
  } finally {
    cache.close();
    heads.close();
    kv.close();
  }
});

Deno.test("ModelCache keeps at most maxEntries namespaces and their watches", async () => {
  const names = ["a", "b", "c", "d"];
  const kv = await setup(names);
  const heads = new HeadWatcher(kv, { pollIntervalMs: 20 });
  const cache = new ModelCache(kv, heads, { maxEntries: 2, settleMs: 0 });
  try {
    for (const ns of names) assertEquals(await theme(cache, ns), "light");
    assertEquals(cache.size, 2);
    assertEquals(heads.size, 2, "evicted entries stop watching");
    cache.close();
    assertEquals(heads.size, 0);
  } finally {
    heads.close();
    kv.close();
  }
});

Deno.test("ModelCache compiles a stored version an earlier release accepted, and logs its warnings once", async () => {
  const kv = await setup(["old"]);
  // written as the earlier release stored it (its environments metadata aside)
  await commitVersion(kv, {
    tenant: "acme",
    namespace: "old",
    files: olderReleaseFileSet(),
    environments: { production: { public_evaluate: false } },
    created_by: "usr_1",
  });
  const logged: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const heads = new HeadWatcher(kv, { pollIntervalMs: 20 });
  const cache = new ModelCache(kv, heads, {
    settleMs: 0,
    log: (level, msg, fields) => logged.push({ level, msg, ...(fields ? { fields } : {}) }),
  });
  try {
    for (let i = 0; i < 3; i++) {
      const m = (await cache.get("acme", "old"))!;
      assertEquals(evaluateFlag(m.model, "production", "by-name", { name: "A" }).value, false);
      assertEquals(evaluateFlag(m.model, "production", "deep", { plan: "pro" }).value, true);
      assertEquals(evaluateFlag(m.model, "env-100", "deep", { plan: "free" }).value, false);
    }
    assertEquals(cache.compilations, 1);
    assertEquals(logged.length, 1);
    assertEquals(logged[0]!.level, "warn");
    assertEquals(logged[0]!.fields?.version, 2);
    const warnings = logged[0]!.fields?.warnings as { path: string; key: string }[];
    assertEquals(warnings.map((w) => `${w.path}: ${w.key}`), [
      "segments/js.toml: predicate[0].value",
    ]);
  } finally {
    cache.close();
    heads.close();
    kv.close();
  }
});

Deno.test("ModelCache counts a hit only for a trusted head with its model compiled", async () => {
  const kv = await setup(["web"]);
  const heads = new HeadWatcher(kv, { pollIntervalMs: 20 });
  const cache = new ModelCache(kv, heads, { settleMs: 60 });
  try {
    await cache.get("acme", "web"); // a new entry: reads the head, compiles
    await cache.get("acme", "web"); // not trusted yet: reads the head
    assertEquals([cache.hits, cache.misses], [0, 2]);
    await new Promise((r) => setTimeout(r, 80)); // past the settle time
    for (let i = 0; i < 5; i++) await cache.get("acme", "web");
    assertEquals([cache.hits, cache.misses], [5, 2]);
    cache.invalidate("acme", "web");
    await cache.get("acme", "web");
    await cache.get("acme", "nope");
    assertEquals([cache.hits, cache.misses], [5, 4]);
  } finally {
    cache.close();
    heads.close();
    kv.close();
  }
});
