/**
 * stageBackup: a backup file is read once into a private copy and checked
 * there; a file with a key no backup holds, or no backup at all, is
 * refused and leaves nothing behind.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../../assert.ts";
import { createHash } from "node:crypto";
import { BackupError } from "../../../lib/store/backup/codec.ts";
import { backupHeader } from "../../../lib/store/backup/format.ts";
import { stageBackup } from "../../../lib/store/backup/stage.ts";

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** A backup file with these entry lines and a correct closing line. */
function crafted(lines: string[]): string {
  const header = JSON.stringify(
    backupHeader({ kind: "sqlite_snapshot", location: "x" }, new Date()),
  );
  const body = [header, ...lines].map((l) => l + "\n").join("");
  const sha256 = createHash("sha256").update(body).digest("hex");
  return body + JSON.stringify({ end: "cfgtool-kv-backup", entries: lines.length, sha256 }) + "\n";
}

const stagingDirs = (dir: string) =>
  [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith(".cfgtool-restore-"));

Deno.test("a staged backup is a private copy of the file as it was read", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/b.jsonl`, crafted(['{"key":["tenant","acme"],"value":1}']));
    const staged = await stageBackup(`${dir}/b.jsonl`, { dir });
    try {
      assertEquals(staged.verified.entries, 1);
      assertEquals(staged.name, `${dir}/b.jsonl`);
      assertEquals((await Deno.stat(staged.path)).mode! & 0o777, 0o600);
      const parent = staged.path.slice(0, staged.path.lastIndexOf("/"));
      assertEquals((await Deno.stat(parent)).mode! & 0o777, 0o700);
      await Deno.writeTextFile(`${dir}/b.jsonl`, "replaced\n");
      assertStringIncludes(await Deno.readTextFile(staged.path), '"tenant","acme"');
    } finally {
      await staged.remove();
    }
    assertEquals(stagingDirs(dir).length, 0);
  });
});

Deno.test("a file with a key no backup holds is refused, even with a correct digest", async () => {
  await withDir(async (dir) => {
    for (const key of ['["one_time","email_code","d1"]', '["evil","x"]', '["login_rate","a"]']) {
      await Deno.writeTextFile(
        `${dir}/b.jsonl`,
        crafted(['{"key":["tenant","acme"],"value":1}', `{"key":${key},"value":1}`]),
      );
      const err = await assertRejects(() => stageBackup(`${dir}/b.jsonl`, { dir }), BackupError);
      assertEquals(err.code, "backup_invalid");
      assertStringIncludes(err.message, `${dir}/b.jsonl line 3 holds ${key}, which is no record`);
      assertEquals(stagingDirs(dir).length, 0, "nothing left behind");
    }
  });
});

Deno.test("a damaged or missing file is refused under its own name and leaves nothing behind", async () => {
  await withDir(async (dir) => {
    const text = crafted(['{"key":["tenant","acme"],"value":1}']);
    await Deno.writeTextFile(`${dir}/b.jsonl`, text.replace('"value":1', '"value":2'));
    const err = await assertRejects(() => stageBackup(`${dir}/b.jsonl`, { dir }), BackupError);
    assertStringIncludes(err.message, `${dir}/b.jsonl was changed after it was written`);
    assert(!err.message.includes(".cfgtool-restore-"), err.message);
    const missing = await assertRejects(
      () => stageBackup(`${dir}/none.jsonl`, { dir }),
      BackupError,
    );
    assertStringIncludes(missing.message, `Cannot read ${dir}/none.jsonl`);
    assertEquals(stagingDirs(dir).length, 0);
  });
});
