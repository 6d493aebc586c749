import { assert, assertEquals } from "../assert.ts";
import {
  collectBlobs,
  pruneAll,
  pruneNamespace,
  retentionHorizon,
  startRetention,
  versionStatus,
} from "../../lib/store/retention.ts";
import { getBlob, putBlob } from "../../lib/store/blobs.ts";
import { createNamespace, deleteNamespace } from "../../lib/store/namespaces.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { getVersion, listVersions, readFiles } from "../../lib/store/versions.ts";
import { commitVersion } from "./commit.ts";

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date("2030-06-01T00:00:00Z");
const enc = new TextEncoder();

async function store(): Promise<Deno.Kv> {
  const kv = await Deno.openKv(":memory:");
  await createTenant(kv, { slug: "acme", created_by: "test" });
  await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "test" });
  return kv;
}

/** Commits versions 1..n, version i created `ageDays(i)` days before NOW. */
async function commits(kv: Deno.Kv, n: number, ageDays: (v: number) => number, ns = "web") {
  for (let v = 1; v <= n; v++) {
    await commitVersion(kv, {
      tenant: "acme",
      namespace: ns,
      files: new Map([["namespace.toml", enc.encode(`schema_version = 1\n# ${ns} v${v}\n`)]]),
      environments: {},
      created_by: "test",
      now: () => new Date(NOW.getTime() - ageDays(v) * DAY),
    });
  }
}

async function versions(kv: Deno.Kv, ns = "web"): Promise<number[]> {
  return (await listVersions(kv, "acme", ns, { limit: 500 })).items.map((m) => m.version)
    .reverse();
}

Deno.test("pruneNamespace() keeps the last N versions when they span more than the day window", async () => {
  const kv = await store();
  await commits(kv, 10, (v) => 100 - v); // every version older than 30 days
  const r = await pruneNamespace(kv, "acme", "web", { days: 30, versions: 4 }, NOW);
  assertEquals(r, { horizon: 7, deleted: 7 });
  assertEquals(await versions(kv), [7, 8, 9, 10]);
  assertEquals(await retentionHorizon(kv, "acme", "web"), 7);
  kv.close();
});

Deno.test("pruneNamespace() keeps every version of the day window when it holds more than N", async () => {
  const kv = await store();
  await commits(kv, 10, (v) => (v <= 3 ? 40 : 5)); // v4..v10 are recent
  const r = await pruneNamespace(kv, "acme", "web", { days: 30, versions: 2 }, NOW);
  assertEquals(r.deleted, 4); // v0..v3
  assertEquals(await versions(kv), [4, 5, 6, 7, 8, 9, 10]);
  kv.close();
});

Deno.test("pruneNamespace() never deletes the head and is idempotent", async () => {
  const kv = await store();
  await commits(kv, 3, () => 365);
  await pruneNamespace(kv, "acme", "web", { days: 0, versions: 0 }, NOW);
  assertEquals(await versions(kv), [3]);
  assertEquals((await pruneNamespace(kv, "acme", "web", { days: 0, versions: 1 }, NOW)).deleted, 0);
  assertEquals((await readFiles(kv, "acme", "web", 3)).size, 1);
  kv.close();
});

Deno.test("versionStatus() tells pruned versions from unrecorded ones", async () => {
  const kv = await store();
  await commits(kv, 5, () => 60);
  await pruneNamespace(kv, "acme", "web", { days: 30, versions: 2 }, NOW);
  assertEquals(await versionStatus(kv, "acme", "web", 2), "pruned");
  assertEquals(await versionStatus(kv, "acme", "web", 4), "available");
  await kv.delete(["version", "acme", "web", 4]); // a hole above the horizon
  assertEquals(await versionStatus(kv, "acme", "web", 4), "unrecorded");
  assertEquals(await versionStatus(kv, "acme", "web", 99), "unrecorded");
  kv.close();
});

Deno.test("a re-created namespace does not inherit the old retention horizon", async () => {
  const kv = await store();
  await commits(kv, 5, () => 60);
  await pruneNamespace(kv, "acme", "web", { days: 30, versions: 1 }, NOW);
  assertEquals(await retentionHorizon(kv, "acme", "web"), 5);
  const actor = { id: "test", principal_type: "system" as const, request_id: null };
  await deleteNamespace(kv, "acme", "web", actor);
  await new Promise((r) => setTimeout(r, 5)); // a different created_at
  await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "test" });
  assertEquals(await retentionHorizon(kv, "acme", "web"), 0);
  assertEquals(await versionStatus(kv, "acme", "web", 0), "available");
  kv.close();
});

Deno.test("collectBlobs() deletes unreferenced blobs only on a later run after the grace", async () => {
  const kv = await store();
  await commits(kv, 4, () => 60);
  const old = await getVersion(kv, "acme", "web", 1);
  await pruneNamespace(kv, "acme", "web", { days: 30, versions: 1 }, NOW);
  const first = await collectBlobs(kv, 1000, NOW);
  assert(first.marked >= 2, `marked ${first.marked}`); // trees and files of v0..v3
  assertEquals(first.deleted, 0);
  assert(await getBlob(kv, old.tree) !== null, "deleted before the grace");
  const early = await collectBlobs(kv, 1000, new Date(NOW.getTime() + 500));
  assertEquals(early.deleted, 0);
  const late = await collectBlobs(kv, 1000, new Date(NOW.getTime() + 2000));
  assertEquals(late.deleted, first.marked);
  assertEquals(await getBlob(kv, old.tree), null);
  assertEquals((await readFiles(kv, "acme", "web", 4)).size, 1); // the head is intact
  assertEquals([...(await Array.fromAsync(kv.list({ prefix: ["blob_gc"] })))].length, 0);
  kv.close();
});

Deno.test("collectBlobs() unmarks a blob that is referenced again", async () => {
  const kv = await store();
  await commits(kv, 2, () => 60);
  await pruneNamespace(kv, "acme", "web", { days: 30, versions: 1 }, NOW);
  const first = await collectBlobs(kv, 0, NOW);
  assert(first.marked > 0);
  // v1's content comes back as v3: its blobs are live again
  await commitVersion(kv, {
    tenant: "acme",
    namespace: "web",
    files: new Map([["namespace.toml", enc.encode("schema_version = 1\n# web v1\n")]]),
    environments: {},
    created_by: "test",
  });
  const second = await collectBlobs(kv, 0, new Date(NOW.getTime() + 1));
  assertEquals((await readFiles(kv, "acme", "web", 3)).size, 1);
  assert(second.deleted < first.marked);
  kv.close();
});

Deno.test("pruneAll() prunes every namespace; startRetention() runs it under a lease", async () => {
  const kv = await store();
  await createNamespace(kv, { tenant: "acme", slug: "api", created_by: "test" });
  await commits(kv, 5, () => 60);
  await commits(kv, 5, () => 60, "api");
  const report = await pruneAll(kv, { days: 30, versions: 2 }, 0, NOW);
  assertEquals(report.namespaces, 2);
  assertEquals(report.versionsDeleted, 8);
  const opts = { policy: { days: 30, versions: 1 }, intervalMs: 60_000, log: () => {} };
  const a = startRetention(kv, { ...opts, now: () => NOW });
  const b = startRetention(kv, { ...opts, now: () => NOW });
  assert(await a.runOnce() !== null);
  assertEquals(await b.runOnce(), null); // a holds the lease
  await a.stop();
  await b.stop();
  assertEquals(await versions(kv), [5]);
  kv.close();
});

Deno.test("stopping the retention task ends a run in progress at its next step: a shutdown does not wait for a sweep", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (let i = 0; i < 50; i++) await putBlob(kv, new TextEncoder().encode(`orphan ${i}`));
    const options = { policy: { days: 30, versions: 100 }, intervalMs: 60_000, log: () => {} };
    const task = startRetention(kv, options);
    const cut = task.runOnce();
    await task.stop();
    const report = await cut;
    assert(report !== null);
    assertEquals(report.blobs.marked, 0);
    // nothing was marked: a whole sweep marks every orphan
    assertEquals((await collectBlobs(kv, 60_000)).marked, 50);
  } finally {
    kv.close();
  }
});
