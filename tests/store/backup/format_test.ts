/**
 * The backup file format: a header, entry lines, a closing line with the
 * count and digest. Reading gives back what was written; any file cut
 * short, any changed byte, anything appended, a newer format or a file
 * that is no backup is refused with a message saying which; a line longer
 * or deeper than any real entry is refused cheaply, read or written.
 */
import fc from "fast-check";
import { createHash } from "node:crypto";
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../assert.ts";
import { BackupError } from "../../../lib/store/backup/codec.ts";
import {
  type BackupEntry,
  backupHeader,
  BackupWriter,
  MAX_DEPTH,
  MAX_LINE,
  nestingDepth,
  readEntries,
  verifyBackup,
} from "../../../lib/store/backup/format.ts";

const ENTRIES: BackupEntry[] = [
  { key: ["blob", "9f2c", 0], value: new Uint8Array([0, 1, 2, 255]), expiresAt: null },
  { key: ["bootstrap_count"], value: new Deno.KvU64(3n), expiresAt: null },
  {
    key: ["session", "ssn_1"],
    value: { id: "ssn_1", at: new Date(0) },
    expiresAt: Date.parse("2030-01-01T00:00:00.000Z"),
  },
  { key: ["tenant", "acme"], value: { slug: "acme", note: "é\u2028🙂\n" }, expiresAt: null },
];

/** Writes `entries` as a backup file and returns its path and bytes. */
async function written(dir: string, entries: BackupEntry[] = ENTRIES) {
  const path = `${dir}/backup.jsonl`;
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const w = new BackupWriter(
    async (b) => {
      await file.write(b);
    },
    backupHeader({ kind: "sqlite_snapshot", location: "/var/lib/cfgtool/kv.sqlite3" }, new Date(0)),
  );
  for (const e of entries) await w.entry(e);
  const digest = await w.finish();
  file.close();
  return { path, bytes: await Deno.readFile(path), digest };
}

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function refusal(path: string): Promise<string> {
  const err = await assertRejects(() => verifyBackup(path), BackupError);
  assertEquals(err.code, "backup_invalid");
  return err.message;
}

Deno.test("a backup reads back as written: header, entries in order, expiry, count and digest", async () => {
  await withDir(async (dir) => {
    const { path, bytes, digest } = await written(dir);
    const lines = new TextDecoder().decode(bytes).split("\n");
    assertEquals(lines.length, ENTRIES.length + 3, "header, entries, closing line, final newline");
    assertEquals(lines.at(-1), "");
    assertEquals(
      lines[3],
      '{"key":["session","ssn_1"],"value":{"id":"ssn_1","at":["d",0]},' +
        '"expires_at":"2030-01-01T00:00:00.000Z"}',
    );
    const closing = JSON.parse(lines.at(-2)!);
    assertEquals(closing, { end: "cfgtool-kv-backup", entries: 4, sha256: digest.sha256 });
    const v = await verifyBackup(path);
    assertEquals(v.entries, 4);
    assertEquals(v.bytes, bytes.length);
    assertEquals(v.header.format_version, 1);
    assertEquals(v.header.source, {
      kind: "sqlite_snapshot",
      location: "/var/lib/cfgtool/kv.sqlite3",
    });
    const read: BackupEntry[] = [];
    for await (const r of readEntries(path)) read.push(r.entry);
    assertEquals(read.map((e) => e.key), ENTRIES.map((e) => e.key));
    assertEquals(read[0]!.value, ENTRIES[0]!.value);
    assertEquals((read[1]!.value as Deno.KvU64).value, 3n);
    assertEquals(read[2], ENTRIES[2]);
    assertEquals(read[3], ENTRIES[3]);
  });
});

Deno.test("an empty store gives a backup of zero entries that reads back", async () => {
  await withDir(async (dir) => {
    const { path } = await written(dir, []);
    assertEquals((await verifyBackup(path)).entries, 0);
  });
});

Deno.test("every file cut short is refused as incomplete", async () => {
  await withDir(async (dir) => {
    const { bytes } = await written(dir);
    const cut = `${dir}/cut.jsonl`;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bytes.length - 1 }), async (n) => {
        await Deno.writeFile(cut, bytes.subarray(0, n));
        const message = await refusal(cut);
        assert(
          message.includes("is incomplete") || message.includes("is not a cfgtool backup"),
          `${n} bytes: ${message}`,
        );
      }),
      { numRuns: 150 },
    );
    await Deno.writeFile(cut, bytes.subarray(0, bytes.indexOf(0x0a) + 1));
    assertStringIncludes(await refusal(cut), "ends after 0 entries without its closing line");
  });
});

Deno.test("every changed byte is refused", async () => {
  await withDir(async (dir) => {
    const { bytes } = await written(dir);
    const header = bytes.indexOf(0x0a);
    const edited = `${dir}/edited.jsonl`;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: bytes.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        async (at, flip) => {
          const copy = bytes.slice();
          copy[at] = copy[at]! ^ flip;
          await Deno.writeFile(edited, copy);
          const err = await assertRejects(() => verifyBackup(edited), BackupError);
          assertEquals(err.code, "backup_invalid", `byte ${at} (header ends at ${header})`);
        },
      ),
      { numRuns: 150 },
    );
  });
});

Deno.test("an edited entry line is refused as changed after it was written", async () => {
  await withDir(async (dir) => {
    const { path, bytes } = await written(dir);
    const text = new TextDecoder().decode(bytes).replace('"slug":"acme"', '"slug":"evil"');
    await Deno.writeTextFile(path, text);
    assertStringIncludes(
      await refusal(path),
      "was changed after it was written: its content does not match the SHA-256",
    );
    const dropped = new TextDecoder().decode(bytes).split("\n");
    dropped.splice(2, 1);
    await Deno.writeTextFile(path, dropped.join("\n"));
    assertStringIncludes(
      await refusal(path),
      "its closing line counts 4 entries, the file holds 3",
    );
  });
});

Deno.test("lines after the closing line are refused", async () => {
  await withDir(async (dir) => {
    const { path, bytes } = await written(dir);
    const more = new TextDecoder().decode(bytes) + '{"key":["tenant","z"],"value":1}\n';
    await Deno.writeTextFile(path, more);
    assertStringIncludes(await refusal(path), "has lines after its closing line");
  });
});

Deno.test("a file that is no backup, or from a newer cfgtool, is refused with what it is", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/x.jsonl`;
    await Deno.writeTextFile(path, "");
    assertStringIncludes(await refusal(path), "is not a cfgtool backup");
    await Deno.writeTextFile(path, "[1,2]\n");
    assertStringIncludes(await refusal(path), "its first line is not a cfgtool-kv-backup header");
    await Deno.writeFile(path, new Uint8Array(1 << 20).fill(0x41));
    assertStringIncludes(await refusal(path), "is not a cfgtool backup");
    await Deno.writeTextFile(
      path,
      '{"format":"cfgtool-kv-backup","format_version":2,"cfgtool_version":"9.0.0"}\n',
    );
    assertStringIncludes(
      await refusal(path),
      "was written by a newer cfgtool (9.0.0, backup format 2)",
    );
    const missing = await assertRejects(() => verifyBackup(`${dir}/none.jsonl`), BackupError);
    assertStringIncludes(missing.message, `Cannot read ${dir}/none.jsonl`);
  });
});

/** A file of `lines` after a header, with a correct closing line. */
function crafted(lines: string[]): string {
  const header = JSON.stringify(
    backupHeader({ kind: "sqlite_snapshot", location: "x" }, new Date()),
  );
  const body = [header, ...lines].map((l) => l + "\n").join("");
  const sha256 = createHash("sha256").update(body).digest("hex");
  return body + JSON.stringify({ end: "cfgtool-kv-backup", entries: lines.length, sha256 }) + "\n";
}

Deno.test("a line longer than any entry (1 MiB) is refused unread", async () => {
  await withDir(async (dir) => {
    assertEquals(MAX_LINE, 1024 * 1024);
    const path = `${dir}/long.jsonl`;
    const big = `{"key":["tenant","a"],"value":"${"a".repeat(MAX_LINE)}"}`;
    await Deno.writeTextFile(path, crafted([big]));
    assertStringIncludes(await refusal(path), "line 2 is longer than any line a backup holds");
    // the largest real entry, a 64 KiB value of the worst case for JSON, is well inside
    const worst = {
      key: ["blob_gc", "x".repeat(2000)],
      value: new Array(64 * 1024).fill(undefined),
      expiresAt: null,
    };
    const { path: ok } = await written(dir, [worst]);
    assertEquals((await verifyBackup(ok)).entries, 1);
  });
});

Deno.test("an entry nested deeper than any record is refused with a clear error, not a stack overflow", async () => {
  await withDir(async (dir) => {
    const path = `${dir}/deep.jsonl`;
    const n = 400_000; // 800 KB: under the line limit
    await Deno.writeTextFile(
      path,
      crafted([`{"key":["tenant","a"],"value":${"[".repeat(n)}${"]".repeat(n)}}`]),
    );
    assertStringIncludes(
      await refusal(path),
      `line 2 is not a valid entry (nested deeper than ${MAX_DEPTH} levels, deeper than any record`,
    );
    // the same nesting inside a string is only text
    await Deno.writeTextFile(
      path,
      crafted([`{"key":["tenant","a"],"value":"${"[".repeat(n)}\\\""}`]),
    );
    assertEquals((await verifyBackup(path)).entries, 1);
  });
});

Deno.test("nesting depth counts brackets outside strings, and a value too deep is not written", async () => {
  assertEquals(nestingDepth('{"a":"[[[\\"[","b":[{}]}'), 3);
  assertEquals(nestingDepth(new TextEncoder().encode("[[1],[[2]]]")), 3);
  assertEquals(nestingDepth("1"), 0);
  let deep: unknown = 1;
  for (let i = 0; i < MAX_DEPTH; i++) deep = { d: deep };
  const w = new BackupWriter(
    () => Promise.resolve(),
    backupHeader({ kind: "sqlite_snapshot", location: "x" }, new Date()),
  );
  const err = await assertRejects(
    () => w.entry({ key: ["audit", "t", "1"], value: deep, expiresAt: null }),
    BackupError,
  );
  assertEquals(err.code, "backup_unsupported_value");
  assertStringIncludes(err.message, `nests deeper than ${MAX_DEPTH} levels`);
});
