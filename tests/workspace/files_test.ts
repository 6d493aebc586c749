import { assertEquals, assertRejects } from "../assert.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { readWorkspaceFiles } from "../../lib/workspace/files.ts";
import { writeTree } from "../fixtures/workspace/build.ts";

Deno.test("readWorkspaceFiles() reads every file with relative / paths, in order", async () => {
  const dir = await Deno.makeTempDir();
  await writeTree(dir, { "b/x.toml": "x", "a.toml": "a", "b/a/y.toml": "y" });
  const { files, problems } = await readWorkspaceFiles(dir);
  assertEquals([...files.keys()], ["a.toml", "b/a/y.toml", "b/x.toml"]);
  assertEquals(new TextDecoder().decode(files.get("b/x.toml")), "x");
  assertEquals(problems, []);
});

Deno.test("readWorkspaceFiles() skips dot files and dot directories", async () => {
  const dir = await Deno.makeTempDir();
  await writeTree(dir, {
    ".git/HEAD": "ref",
    ".DS_Store": "",
    "variables/.x.toml.swp": "",
    "a": "",
  });
  const { files } = await readWorkspaceFiles(dir);
  assertEquals([...files.keys()], ["a"]);
});

Deno.test("readWorkspaceFiles() skips *.md and LICENSE* at every level, and nothing else", async () => {
  const dir = await Deno.makeTempDir();
  await writeTree(dir, {
    "README.md": "# config\n",
    "LICENSE": "MIT\n",
    "LICENSES/MIT.txt": "MIT\n",
    "catalogs/README.md": "entries\n",
    "notes.txt": "",
    "variables/v.toml": "",
    "variables/license-check.toml": "",
  });
  const { files, problems } = await readWorkspaceFiles(dir);
  assertEquals([...files.keys()], [
    "notes.txt",
    "variables/license-check.toml",
    "variables/v.toml",
  ]);
  assertEquals(problems, []);
});

Deno.test("readWorkspaceFiles() reports symbolic links without following them", async () => {
  const dir = await Deno.makeTempDir();
  await writeTree(dir, { "variables/a.toml": "" });
  await Deno.symlink(`${dir}/variables/a.toml`, `${dir}/variables/b.toml`);
  const { files, problems } = await readWorkspaceFiles(dir);
  assertEquals([...files.keys()], ["variables/a.toml"]);
  assertEquals(problems, [{
    path: "variables/b.toml",
    message: "symbolic links are not allowed in a workspace",
  }]);
});

Deno.test("readWorkspaceFiles() throws workspace_not_found for a missing directory or a file", async () => {
  const dir = await Deno.makeTempDir();
  const e = await assertRejects(() => readWorkspaceFiles(`${dir}/nope`), NotFoundError);
  assertEquals(e.code, "workspace_not_found");
  await Deno.writeTextFile(`${dir}/f`, "");
  const f = await assertRejects(
    () => readWorkspaceFiles(`${dir}/f`),
    NotFoundError,
    "not a directory",
  );
  assertEquals(f.code, "workspace_not_found");
});
