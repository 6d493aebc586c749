/**
 * Snapshots of a live store file: the copy is the store at one commit even
 * while another process keeps writing; the keys Deno stores in its SQLite
 * table decode to exactly the keys the KV API lists; expiry is read back;
 * a missing or foreign file is refused with a clear message.
 */
import fc from "fast-check";
import { DatabaseSync } from "node:sqlite";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../assert.ts";
import { BackupError } from "../../../lib/store/backup/codec.ts";
import {
  decodeSqliteKey,
  keyId,
  readExpirations,
  snapshotKvFile,
} from "../../../lib/store/backup/snapshot.ts";

const keyPart = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.double(),
  fc.constantFrom(0, -0, NaN, Infinity, -Infinity),
  fc.bigInt({ min: -(2n ** 100n), max: 2n ** 100n }),
  fc.constantFrom(0n, -1n, 255n, -256n, 2n ** 64n, -(2n ** 64n)),
  fc.boolean(),
  fc.uint8Array({ maxLength: 8 }),
  fc.constantFrom(new Uint8Array([0]), new Uint8Array([0, 255, 0])),
);

Deno.test("every key Deno stores in SQLite decodes to the key the KV API lists", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    const keys = new Map<string, Deno.KvKey>();
    for (const key of fc.sample(fc.array(keyPart, { minLength: 1, maxLength: 4 }), 800)) {
      keys.set(keyId(key), key);
    }
    for (const [id, key] of keys) await kv.set(key, id);
    const listed = new Map<string, unknown>();
    for await (const e of kv.list({ prefix: [] })) listed.set(keyId(e.key), e.value);
    kv.close();
    const db = new DatabaseSync(`${dir}/kv.sqlite3`, { readOnly: true });
    const rows = db.prepare("SELECT k FROM kv").all() as { k: Uint8Array }[];
    db.close();
    assertEquals(rows.length, keys.size);
    for (const row of rows) {
      const id = keyId(decodeSqliteKey(row.k));
      assertEquals(listed.get(id), id, `row ${row.k.toHex()} decodes to ${id}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a key in an unknown encoding is refused, never guessed", () => {
  for (const bytes of [[0x99], [0x02, 0x61], [0x15], [0x21, 0, 0]]) {
    const err = (() => {
      try {
        decodeSqliteKey(new Uint8Array(bytes));
      } catch (e) {
        return e;
      }
    })();
    assert(err instanceof BackupError, `${bytes} was decoded`);
    assertEquals(err.code, "backup_source_invalid");
  }
});

Deno.test("the snapshot is the store at one commit while another process writes", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/kv.sqlite3`;
  try {
    // every commit of the writer sets a pair: chunk i (30 KB) and its index
    // entry i; it writes until the test sets ["stop"] (30 s at most)
    const writer = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--unstable-kv",
        `const kv = await Deno.openKv(${JSON.stringify(path)});
         const end = Date.now() + 30000;
         for (let i = 0; Date.now() < end; i++) {
           await kv.atomic().set(["chunk", i], new Uint8Array(30000)).set(["index", i], i).commit();
           if (i % 10 === 0 && (await kv.get(["stop"])).value !== null) break;
         }
         kv.close();`,
      ],
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    const kv = await Deno.openKv(path);
    while ((await kv.get(["index", 20])).value === null) {
      await new Promise((r) => setTimeout(r, 20));
    }
    kv.close();
    for (let n = 0; n < 3; n++) {
      const copy = `${dir}/copy-${n}.sqlite3`;
      await snapshotKvFile(path, copy);
      const snap = await Deno.openKv(copy);
      const count = async (prefix: string) => {
        let c = 0;
        for await (const _ of snap.list({ prefix: [prefix] })) c++;
        return c;
      };
      const [chunks, index] = [await count("chunk"), await count("index")];
      snap.close();
      assert(chunks > 0);
      assertEquals(chunks, index, `snapshot ${n}: both halves of every commit, or neither`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const stop = await Deno.openKv(path);
    await stop.set(["stop"], true);
    stop.close();
    assertEquals((await writer.status).code, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the expiry of every expiring entry is read from the copy", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    const before = Date.now();
    await kv.set(["session", "ssn_1"], { id: "ssn_1" }, { expireIn: 3_600_000 });
    await kv.set(["login_rate", "ip", "x", 7n], 1, { expireIn: 60_000 });
    await kv.set(["tenant", "acme"], { slug: "acme" });
    kv.close();
    await snapshotKvFile(`${dir}/kv.sqlite3`, `${dir}/copy.sqlite3`);
    const expiring = await readExpirations(`${dir}/copy.sqlite3`);
    assertEquals(expiring.size, 2);
    const session = expiring.get(keyId(["session", "ssn_1"]))!;
    assert(session >= before + 3_600_000 && session <= Date.now() + 3_600_000, String(session));
    assert(expiring.has(keyId(["login_rate", "ip", "x", 7n])));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a missing store, or a file that is no Deno KV store, is refused with its path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const missing = await assertRejects(
      () => snapshotKvFile(`${dir}/none.sqlite3`, `${dir}/copy.sqlite3`),
      BackupError,
    );
    assertStringIncludes(missing.message, `There is no KV store at ${dir}/none.sqlite3`);
    await Deno.writeTextFile(`${dir}/notes.txt`, "not a database, just text\n".repeat(100));
    const text = await assertRejects(
      () => snapshotKvFile(`${dir}/notes.txt`, `${dir}/copy.sqlite3`),
      BackupError,
    );
    assertStringIncludes(text.message, `Cannot read ${dir}/notes.txt as a Deno KV store`);
    const db = new DatabaseSync(`${dir}/other.sqlite3`);
    db.exec("CREATE TABLE t (x)");
    db.close();
    const other = await assertRejects(
      () => snapshotKvFile(`${dir}/other.sqlite3`, `${dir}/copy.sqlite3`),
      BackupError,
    );
    assertStringIncludes(other.message, "it has no kv table");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
