/** Writing an imported manifest directory: all or nothing, never over files without --force. */
import { assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { checkImportDir, writeImportDir } from "../../lib/import/write.ts";
import { UsageError } from "../../lib/errors.ts";

const FILES = new Map([
  ["namespace.toml", "schema_version = 1\n"],
  ["flags/a.toml", "x\n"],
]);

async function entries(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("a new directory, or an empty one, is written with every file", async () => {
  const tmp = await Deno.makeTempDir();
  const r = await writeImportDir(`${tmp}/a/b/out/`, FILES);
  assertEquals(r, { written: ["flags/a.toml", "namespace.toml"], replaced: [] });
  assertEquals(await Deno.readTextFile(`${tmp}/a/b/out/flags/a.toml`), "x\n");
  await Deno.mkdir(`${tmp}/empty`);
  await writeImportDir(`${tmp}/empty`, FILES);
  assertEquals(await entries(`${tmp}/empty`), ["flags", "namespace.toml"]);
  assertEquals(await entries(`${tmp}/a/b`), ["out"], "no temporary directory is left");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("a directory that is not empty is refused without force, and nothing changes", async () => {
  const tmp = await Deno.makeTempDir();
  await Deno.mkdir(`${tmp}/out/flags`, { recursive: true });
  await Deno.writeTextFile(`${tmp}/out/flags/old.toml`, "old");
  const err = await assertRejects(() => writeImportDir(`${tmp}/out`, FILES), UsageError);
  assertStringIncludes(err.message, "--out is not empty (1 entry); give --force");
  assertEquals(await entries(`${tmp}/out/flags`), ["old.toml"]);
  assertEquals(await entries(tmp), ["out"]);
  await Deno.writeTextFile(`${tmp}/file`, "");
  await assertRejects(() => checkImportDir(`${tmp}/file`, true), UsageError, "not a directory");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("force replaces the directory and lists every file it held", async () => {
  const tmp = await Deno.makeTempDir();
  await Deno.mkdir(`${tmp}/out/flags`, { recursive: true });
  await Deno.mkdir(`${tmp}/out/segments`);
  await Deno.writeTextFile(`${tmp}/out/flags/old.toml`, "old");
  await Deno.writeTextFile(`${tmp}/out/namespace.toml`, "");
  const r = await writeImportDir(`${tmp}/out`, FILES, { force: true });
  assertEquals(r.replaced, ["flags/old.toml", "namespace.toml", "segments/"]);
  assertEquals(await entries(`${tmp}/out/flags`), ["a.toml"]);
  assertEquals(await entries(tmp), ["out"], "the old directory is gone, no temporary one is left");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("--force refuses a directory that is not a manifest's, and leaves it as it was", async () => {
  const tmp = await Deno.makeTempDir();
  await Deno.mkdir(`${tmp}/project/src`, { recursive: true });
  await Deno.writeTextFile(`${tmp}/project/namespace.toml`, "");
  await Deno.writeTextFile(`${tmp}/project/src/main.ts`, "precious");
  const err = await assertRejects(() => writeImportDir(`${tmp}/project`, FILES, { force: true }));
  assertStringIncludes((err as Error).message, "src/main.ts");
  assertEquals(await Deno.readTextFile(`${tmp}/project/src/main.ts`), "precious");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("a write that fails leaves the old directory as it was and no temporary one", async () => {
  const tmp = await Deno.makeTempDir();
  await Deno.mkdir(`${tmp}/out`);
  await Deno.writeTextFile(`${tmp}/out/namespace.toml`, "keep");
  // flags/a.toml as a file, then a path under it: the second write fails
  const bad = new Map([["flags", "a file"], ["flags/b.toml", "y"]]);
  await assertRejects(() => writeImportDir(`${tmp}/out`, bad, { force: true }));
  assertEquals(await entries(`${tmp}/out`), ["namespace.toml"]);
  assertEquals(await entries(tmp), ["out"]);
  await assertRejects(() => writeImportDir(`${tmp}/new/deeper/out`, bad));
  assertEquals(await entries(tmp), ["out"], "no directory was made for a failed write");
  await Deno.remove(tmp, { recursive: true });
});
