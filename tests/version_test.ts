import { assert, assertEquals } from "./assert.ts";
import { buildCommit, SERVER_HEADER, VERSION, versionText } from "../lib/version.ts";
import denoJson from "../deno.json" with { type: "json" };

async function withFile(text: string, fn: (file: string) => void): Promise<void> {
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(file, text);
    fn(file);
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("a compiled binary reads the commit that deno task compile baked into it", async () => {
  await withFile("7684480fb64e-dirty\n", (file) => {
    assertEquals(
      buildCommit({ standalone: true, file, env: () => "ffffffffffff" }),
      "7684480fb64e-dirty",
    );
  });
});

Deno.test("a compiled binary without a baked commit reports none, whatever the environment says", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const missing = `${dir}/commit.txt`;
    assertEquals(
      buildCommit({ standalone: true, file: missing, env: () => "0123abcd" }),
      undefined,
    );
  } finally {
    Deno.removeSync(dir);
  }
});

Deno.test("a run from source takes CFGTOOL_BUILD_COMMIT and ignores a baked file left in dist/", async () => {
  await withFile("0123abcd\n", (file) => {
    assertEquals(buildCommit({ standalone: false, file, env: () => undefined }), undefined);
    assertEquals(
      buildCommit({
        standalone: false,
        file,
        env: (n) => n === "CFGTOOL_BUILD_COMMIT" ? " 89abcdef " : undefined,
      }),
      "89abcdef",
    );
  });
});

Deno.test("text that is not a commit is not reported as one", async () => {
  for (const text of ["unknown", "", "abc", "v1.2.3", "0123abcd; rm -rf /", "0123abcdz"]) {
    assertEquals(buildCommit({ standalone: false, env: () => text }), undefined, text);
    await withFile(
      text,
      (file) => assertEquals(buildCommit({ standalone: true, file }), undefined, text),
    );
  }
});

Deno.test("versionText names the cfgtool version, the commit or its absence, and the Deno version", () => {
  assertEquals(VERSION, denoJson.version);
  assertEquals(SERVER_HEADER, `cfgtool/${denoJson.version}`);
  const known = versionText("0123abcd").split("\n");
  assertEquals(known[0], `cfgtool ${denoJson.version} (commit 0123abcd)`);
  assertEquals(
    known[1],
    `deno ${Deno.version.deno} (v8 ${Deno.version.v8}, typescript ${Deno.version.typescript})`,
  );
  assert(versionText(undefined).startsWith(`cfgtool ${denoJson.version} (commit unknown)\n`));
});
