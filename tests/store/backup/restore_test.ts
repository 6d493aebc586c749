/**
 * restoreStore: a backup written back into an empty store gives the same
 * entries (every key part and value kind, blob chunks of 60 KiB, expiry)
 * in batches within Deno KV's limits; entries that expired since are left
 * out; a store that is not empty is refused before any write; a process
 * writing a restored key meanwhile stops the restore; the file is read
 * once, so replacing it during the restore changes nothing.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../assert.ts";
import { backupStore } from "../../../lib/store/backup/backup.ts";
import { BackupError } from "../../../lib/store/backup/codec.ts";
import { readExpirations } from "../../../lib/store/backup/snapshot.ts";
import { stageBackup } from "../../../lib/store/backup/stage.ts";
import { restoreStore } from "../../../lib/store/backup/restore.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function everything(kv: Deno.Kv) {
  const out: [Deno.KvKey, unknown][] = [];
  for await (const e of kv.list({ prefix: [] })) out.push([e.key, e.value]);
  return out;
}

/** A store with every key part kind, many value kinds, 2 MiB of chunks and expiring entries. */
async function fill(kv: Deno.Kv) {
  const chunk = (i: number) => new Uint8Array(60 * 1024).map((_, j) => (i * 31 + j) & 0xff);
  for (let i = 0; i < 36; i++) await kv.set(["blob", "f".repeat(64), i], chunk(i));
  const op = kv.atomic();
  for (let i = 0; i < 300; i++) {
    op.set(["audit_by_time", `01J${String(i).padStart(6, "0")}`], {
      id: i,
      at: new Date(i * 1000),
      tags: new Set(["a", `t${i % 3}`]),
      seen: new Map([[i, -0]]),
      ratio: i === 0 ? NaN : 1 / i,
      big: BigInt(i) ** 5n,
      nothing: undefined,
      pattern: /^acme-\d+$/u,
    });
  }
  await op.commit();
  await kv.set(["bootstrap_count"], new Deno.KvU64(2n));
  await kv.set(["rate_bucket", 1.5, -0, 12n, true, false, new Uint8Array([0, 255])], "all kinds");
  await kv.set(["session", "ssn_1"], { id: "ssn_1" }, { expireIn: 3_600_000 });
  await kv.set(["lease_holder", "h1"], { until: 1 }, { expireIn: 120_000 });
}

Deno.test("a restored store holds the same entries, values and expiry as the one backed up", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    await fill(source);
    const r = await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(`${dir}/restored.sqlite3`);
    const progress: [number, number][] = [];
    const restored = await restoreStore(target, `${dir}/b.jsonl`, {
      onProgress: (done, total) => progress.push([done, total]),
    });
    assertEquals(restored.entries, r.entries);
    assertEquals(restored.written, r.entries);
    assertEquals(restored.expired, 0);
    assertEquals(await everything(target), await everything(source));
    assert(progress.length >= 6, `${progress.length} batches: 2 MiB of chunks need several`);
    assertEquals(progress.at(-1), [r.entries, r.entries]);
    assert(progress.every(([d], i) => i === 0 || d > progress[i - 1]![0]));
    source.close();
    target.close();
    const before = await readExpirations(`${dir}/kv.sqlite3`);
    const after = await readExpirations(`${dir}/restored.sqlite3`);
    assertEquals([...after.keys()].sort(), [...before.keys()].sort());
    for (const [id, at] of before) {
      assert(Math.abs(after.get(id)! - at) < 5_000, `${id}: ${at} → ${after.get(id)}`);
    }
  });
});

Deno.test("entries that expired since the backup are left out of the restore", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    await source.set(["tenant", "acme"], { slug: "acme" });
    await source.set(["session", "ssn_1"], { id: "ssn_1" }, { expireIn: 60_000 });
    source.close();
    await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(":memory:");
    const later = () => new Date(Date.now() + 120_000);
    const r = await restoreStore(target, `${dir}/b.jsonl`, { now: later });
    assertEquals([r.written, r.expired], [1, 1]);
    assertEquals((await everything(target)).map(([k]) => k), [["tenant", "acme"]]);
    target.close();
  });
});

Deno.test("a store that is not empty is refused and nothing is written", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    await source.set(["tenant", "acme"], { slug: "acme" });
    source.close();
    await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(":memory:");
    await target.set(["tenant", "other"], { slug: "other" });
    const err = await assertRejects(
      () => restoreStore(target, `${dir}/b.jsonl`, { target: "/srv/kv.sqlite3" }),
      BackupError,
    );
    assertEquals(err.code, "restore_target_not_empty");
    assertStringIncludes(err.message, '/srv/kv.sqlite3 is not empty (it holds ["tenant","other"]');
    assertEquals((await everything(target)).length, 1);
    target.close();
  });
});

Deno.test("a key written by another process during the restore stops it instead of being overwritten", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    const op = source.atomic();
    for (let i = 0; i < 250; i++) op.set(["token", `tok_${String(i).padStart(3, "0")}`], { i });
    await op.commit();
    source.close();
    await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(":memory:");
    let wrote = false;
    const err = await assertRejects(
      () =>
        restoreStore(target, `${dir}/b.jsonl`, {
          onProgress: () => {
            if (wrote) return;
            wrote = true;
            // a server started too early writes a key of the next batch
            void target.set(["token", "tok_150"], { theirs: true });
          },
        }),
      BackupError,
    );
    assertEquals(err.code, "restore_conflict");
    assertStringIncludes(
      err.message,
      "Another process wrote to the target store during the restore",
    );
    assertEquals((await target.get(["token", "tok_150"])).value, { theirs: true });
    target.close();
  });
});

Deno.test("a backup file replaced after it was checked changes nothing: the checked copy is restored", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    await source.set(["tenant", "acme"], { slug: "acme" });
    source.close();
    await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const staged = await stageBackup(`${dir}/b.jsonl`, { dir });
    // someone swaps the file between the check and the restore
    const evil = await Deno.openKv(`${dir}/evil.sqlite3`);
    await evil.set(["token", "tok_evil"], { admin: true });
    evil.close();
    await backupStore({ kv: `${dir}/evil.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(":memory:");
    try {
      const r = await restoreStore(target, `${dir}/b.jsonl`, { staged });
      assertEquals(r.written, 1);
      assertEquals((await everything(target)).map(([k]) => k), [["tenant", "acme"]]);
    } finally {
      target.close();
      await staged.remove();
    }
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert(!left.some((n) => n.startsWith(".cfgtool-restore-")), left.join());
  });
});

Deno.test("restoreStore without a staged file stages its own copy and removes it", async () => {
  await withDir(async (dir) => {
    const source = await Deno.openKv(`${dir}/kv.sqlite3`);
    await source.set(["tenant", "acme"], { slug: "acme" });
    source.close();
    await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const target = await Deno.openKv(":memory:");
    const r = await restoreStore(target, `${dir}/b.jsonl`);
    target.close();
    assertEquals(r.written, 1);
  });
});
