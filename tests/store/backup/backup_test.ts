/**
 * backupStore and the double scan: a backup of a store file holds every
 * entry in key order with its expiry (expired entries left out), goes to a
 * file of mode 0600 renamed into place or to stdout, and leaves nothing
 * behind when it fails; sign-ins in progress and sign-in rate counters
 * are never in it; the double scan of a KV Connect-like store is kept when
 * nothing changed and refused when something did.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../assert.ts";
import { UsageError } from "../../../lib/errors.ts";
import { backupStore, writeByDoubleScan } from "../../../lib/store/backup/backup.ts";
import { BackupError } from "../../../lib/store/backup/codec.ts";
import { readEntries, verifyBackup } from "../../../lib/store/backup/format.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function entriesOf(path: string) {
  const out = [];
  for await (const r of readEntries(path)) out.push(r.entry);
  return out;
}

Deno.test("a backup of a store file holds every entry in key order with its expiry", async () => {
  await withDir(async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    await kv.set(["tenant", "acme"], { slug: "acme" });
    await kv.set(["blob", "9f2c", 0], new Uint8Array([1, 2, 3]));
    await kv.set(["credential_epoch"], new Deno.KvU64(7n));
    await kv.set(["session", "ssn_1"], { id: "ssn_1" }, { expireIn: 3_600_000 });
    await kv.set(["one_time", "email", "d1"], { until: 1 }, { expireIn: 1 });
    await new Promise((r) => setTimeout(r, 20));
    const r = await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    kv.close();
    assertEquals(r.entries, 4);
    assertEquals(r.expired, 1, "the expired sign-in record is left out");
    assertEquals(r.path, `${dir}/b.jsonl`);
    assertEquals((await Deno.stat(`${dir}/b.jsonl`)).mode! & 0o777, 0o600);
    const entries = await entriesOf(`${dir}/b.jsonl`);
    assertEquals(entries.map((e) => e.key), [
      ["blob", "9f2c", 0],
      ["credential_epoch"],
      ["session", "ssn_1"],
      ["tenant", "acme"],
    ]);
    assertEquals((entries[1]!.value as Deno.KvU64).value, 7n);
    const expiry = entries[2]!.expiresAt!;
    assert(Math.abs(expiry - (Date.now() + 3_600_000)) < 10_000, String(expiry));
    assertEquals(entries.filter((e) => e.expiresAt !== null).length, 1);
    assertEquals((await verifyBackup(`${dir}/b.jsonl`)).sha256, r.sha256);
  });
});

Deno.test("a backup leaves out pending sign-ins and sign-in rate counters, and keeps sessions and tokens", async () => {
  await withDir(async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    await kv.set(["one_time", "operator_link", "d1"], { until: 1 }, { expireIn: 600_000 });
    await kv.set(["one_time", "email_code", "d2"], { until: 1 }, { expireIn: 600_000 });
    await kv.set(["one_time", "cli_grant", "d3"], { until: 1 });
    await kv.set(["login_rate", "email", "a@b.test", 7], new Deno.KvU64(3n), { expireIn: 60_000 });
    await kv.set(["session", "ssn_1"], { id: "ssn_1" }, { expireIn: 3_600_000 });
    await kv.set(["token", "tok_1"], { id: "tok_1" });
    const r = await backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/b.jsonl` });
    const scanned = await writeByDoubleScan(kv, "test", () => Promise.resolve(), () => new Date());
    kv.close();
    assertEquals([r.entries, r.transient, r.expired], [2, 4, 0]);
    assertEquals((await entriesOf(`${dir}/b.jsonl`)).map((e) => e.key), [
      ["session", "ssn_1"],
      ["token", "tok_1"],
    ]);
    const text = await Deno.readTextFile(`${dir}/b.jsonl`);
    assert(!text.includes("one_time") && !text.includes("login_rate"), text);
    assertEquals([scanned.entries, scanned.transient], [2, 4]);
  });
});

Deno.test("a backup to - goes to stdout, complete, and writes no file", async () => {
  await withDir(async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    await kv.set(["tenant", "acme"], { slug: "acme" });
    kv.close();
    const chunks: Uint8Array[] = [];
    const r = await backupStore({
      kv: `${dir}/kv.sqlite3`,
      out: "-",
      stdout: (b) => {
        chunks.push(b.slice());
        return Promise.resolve();
      },
    });
    assertEquals(r.path, null);
    await Deno.writeFile(`${dir}/copy.jsonl`, new Uint8Array(chunks.flatMap((c) => [...c])));
    assertEquals((await verifyBackup(`${dir}/copy.jsonl`)).entries, 1);
    const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
    assertEquals(names.filter((n) => !n.startsWith("kv.sqlite3")), ["copy.jsonl"]);
  });
});

Deno.test("a backup that cannot be made leaves no file, temporary or not", async () => {
  await withDir(async (dir) => {
    const err = await assertRejects(
      () => backupStore({ kv: `${dir}/none.sqlite3`, out: `${dir}/b.jsonl` }),
      BackupError,
    );
    assertEquals(err.code, "backup_source_invalid");
    assertEquals([...Deno.readDirSync(dir)].length, 0);
    await Deno.writeTextFile(`${dir}/b.jsonl`, "an older backup\n");
    await assertRejects(() => backupStore({ kv: `${dir}/none.sqlite3`, out: `${dir}/b.jsonl` }));
    assertEquals(await Deno.readTextFile(`${dir}/b.jsonl`), "an older backup\n", "left alone");
  });
});

Deno.test(":memory: and an output directory that does not exist are usage errors", async () => {
  await withDir(async (dir) => {
    const memory = await assertRejects(
      () => backupStore({ kv: ":memory:", out: `${dir}/b.jsonl` }),
      UsageError,
    );
    assertStringIncludes(memory.message, "private to one process");
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    kv.close();
    const noDir = await assertRejects(
      () => backupStore({ kv: `${dir}/kv.sqlite3`, out: `${dir}/x/b.jsonl` }),
      UsageError,
    );
    assertStringIncludes(noDir.message, `the directory ${dir}/x does not exist`);
  });
});

Deno.test("the double scan keeps a backup of a quiet store, and refuses one written to meanwhile", async () => {
  await withDir(async (dir) => {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    const key = (i: number) => ["blob", "f".repeat(64), i];
    for (let i = 0; i < 40; i++) await kv.set(key(i), new Uint8Array(60 * 1024).fill(i));
    const quiet = await writeByDoubleScan(
      kv,
      "http://denokv.test",
      () => Promise.resolve(),
      () => new Date(),
    );
    assertEquals(quiet.entries, 40);
    assertEquals(quiet.header.source, { kind: "kv_connect_scan", location: "http://denokv.test" });

    // another connection changes an entry already read, while the first listing runs
    // (the backup's first write happens after about 1 MiB of entries)
    const other = await Deno.openKv(`${dir}/kv.sqlite3`);
    let writes = 0;
    const sink = async () => {
      if (writes++ === 0) await other.set(key(0), new Uint8Array([1]));
    };
    try {
      const err = await assertRejects(
        () => writeByDoubleScan(kv, "http://denokv.test", sink, () => new Date()),
        BackupError,
      );
      assert(writes >= 1 && writes < 5, `${writes} writes: the change came during the listing`);
      assertEquals(err.code, "backup_store_changed");
      assertStringIncludes(err.message, "The store http://denokv.test changed while it was read");
      assertStringIncludes(err.message, "stop every cfgtool serve using it");
    } finally {
      other.close();
      kv.close();
    }
  });
});
