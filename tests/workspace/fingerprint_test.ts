import fc from "fast-check";
import { assertEquals, assertNotEquals } from "../assert.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { workspaceFingerprint } from "../../lib/workspace/fingerprint.ts";
import { openWorkspace } from "../../lib/workspace/open.ts";
import { readWorkspaceFiles } from "../../lib/workspace/files.ts";
import { EXAMPLE_DIR, exampleCopy, writeTree } from "../fixtures/workspace/build.ts";

Deno.test("workspaceFingerprint() is the closure hash of every workspace file", async () => {
  const { files } = await readWorkspaceFiles(EXAMPLE_DIR);
  assertEquals(files.size, 12);
  const expected = await closureHash(files);
  assertEquals(await workspaceFingerprint(EXAMPLE_DIR), expected);
  assertEquals((await openWorkspace(EXAMPLE_DIR)).sourceFingerprint(), expected);
});

Deno.test("workspaceFingerprint() does not depend on the directory's location or dot files", async () => {
  const a = await exampleCopy();
  const b = await exampleCopy();
  await writeTree(b, { ".git/HEAD": "ref: refs/heads/main\n" });
  assertEquals(await workspaceFingerprint(a), await workspaceFingerprint(b));
  assertEquals(await workspaceFingerprint(a), await workspaceFingerprint(EXAMPLE_DIR));
});

Deno.test("workspaceFingerprint() leaves out README.md, LICENSE and other documentation", async () => {
  const dir = await exampleCopy();
  const before = await workspaceFingerprint(dir);
  await writeTree(dir, {
    "README.md": "# Notification config\n",
    "LICENSE.txt": "MIT\n",
    "qualifiers/NOTES.md": "why these qualifiers\n",
    ".github/CODEOWNERS": "* @ops\n",
  });
  assertEquals(await workspaceFingerprint(dir), before);
  assertEquals((await openWorkspace(dir)).sourceFingerprint(), before);
  await writeTree(dir, { "variables/extra.toml": "schema_version = 1\n" });
  assertNotEquals(await workspaceFingerprint(dir), before);
});

const pathArb = fc.array(fc.stringMatching(/^[a-z0-9_-]{1,8}$/), { minLength: 1, maxLength: 3 })
  .map((segs) => segs.join("/"));

Deno.test("workspaceFingerprint() depends on every byte and every path", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.tuple(pathArb, fc.uint8Array({ minLength: 1, maxLength: 32 })), {
        minLength: 1,
        maxLength: 5,
        selector: ([p]) => p.split("/")[0],
      }),
      fc.nat(),
      fc.nat(),
      async (entries, pick, bytePick) => {
        const dir = await Deno.makeTempDir();
        try {
          for (const [p, bytes] of entries) {
            await Deno.mkdir(`${dir}/${p}`.slice(0, `${dir}/${p}`.lastIndexOf("/")), {
              recursive: true,
            });
            await Deno.writeFile(`${dir}/${p}`, bytes);
          }
          const before = await workspaceFingerprint(dir);
          const [path, bytes] = entries[pick % entries.length]!;
          // flip one byte
          const changed = bytes.slice();
          const i = bytePick % changed.length;
          changed[i] = changed[i]! ^ 0x01;
          await Deno.writeFile(`${dir}/${path}`, changed);
          const flipped = await workspaceFingerprint(dir);
          assertNotEquals(flipped, before);
          // restore, then rename the file: same bytes, another path
          await Deno.writeFile(`${dir}/${path}`, bytes);
          assertEquals(await workspaceFingerprint(dir), before);
          await Deno.rename(`${dir}/${path}`, `${dir}/${path}x`);
          assertNotEquals(await workspaceFingerprint(dir), before);
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      },
    ),
    { numRuns: 40 },
  );
});
