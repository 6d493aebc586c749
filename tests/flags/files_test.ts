import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "../assert.ts";
import { CfgtoolError, formatProblem, ProblemsError, UsageError } from "../../lib/errors.ts";
import {
  manifestFromJson,
  readManifestDir,
  scanManifestDir,
  writeManifestDir,
} from "../../lib/flags/files.ts";
import { MAX_MANIFEST_FILES } from "../../lib/flags/model.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

type TmpDir = (files?: Record<string, string>) => Promise<string>;

/** Wraps a test body with a temp-dir factory whose directories are removed afterwards. */
function withTmp(fn: (tmpDir: TmpDir) => Promise<void>): () => Promise<void> {
  return async () => {
    const made: string[] = [];
    try {
      await fn(async (files = {}) => {
        const dir = await makeDir(files);
        made.push(dir);
        return dir;
      });
    } finally {
      for (const d of made) await Deno.remove(d, { recursive: true });
    }
  };
}

async function makeDir(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool_flags_" });
  for (const [p, c] of Object.entries(files)) {
    const abs = `${dir}/${p}`;
    await Deno.mkdir(abs.slice(0, abs.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(abs, c);
  }
  return dir;
}

function text(files: Map<string, Uint8Array>): Record<string, string> {
  return Object.fromEntries([...files].map(([p, b]) => [p, dec.decode(b)]));
}

Deno.test(
  "readManifestDir() reads the three manifest shapes with / separators",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({
      "namespace.toml": "ns",
      "segments/b.toml": "b",
      "flags/z.toml": "z",
      "flags/a.toml": "a",
    });
    const files = await readManifestDir(dir);
    assertEquals([...files.keys()], [
      "flags/a.toml",
      "flags/z.toml",
      "namespace.toml",
      "segments/b.toml",
    ]);
    assertEquals(text(files)["flags/a.toml"], "a");
  }),
);

Deno.test(
  "readManifestDir() reads an empty directory as the empty set",
  withTmp(async (tmpDir) => {
    assertEquals((await readManifestDir(await tmpDir())).size, 0);
  }),
);

Deno.test(
  "readManifestDir() skips entries whose name starts with a dot",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({
      "namespace.toml": "ns",
      ".git/config": "x",
      "flags/.gitkeep": "",
      "segments/.a.toml.swp": "",
    });
    assertEquals([...(await readManifestDir(dir)).keys()], ["namespace.toml"]);
  }),
);

Deno.test(
  "readManifestDir() refuses unknown files and directories",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({
      "namespace.toml": "ns",
      "README.md": "x",
      "docs/a.md": "x",
      "flags/x.json": "x",
      "flags/Bad.toml": "x",
      "flags/sub/a.toml": "x",
      "segments/ok.toml": "x",
    });
    const err = await assertRejects(() => readManifestDir(dir), ProblemsError);
    assertEquals(err.problems.map(formatProblem), [
      "README.md: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "docs/: unknown directory: a manifest holds only namespace.toml, flags/ and segments/",
      'flags/Bad.toml: unknown file: "Bad" is not a valid key (keys match ^[a-z0-9][a-z0-9._-]{0,62}$)',
      "flags/sub/: unknown directory: a manifest holds only namespace.toml, flags/ and segments/",
      "flags/x.json: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
    ]);
    const scan = await scanManifestDir(dir);
    assertEquals([...scan.files.keys()], ["namespace.toml", "segments/ok.toml"]);
    assertEquals(scan.problems, err.problems);
  }),
);

Deno.test(
  "readManifestDir() refuses symbolic links (no traversal out of the directory)",
  withTmp(async (tmpDir) => {
    const outside = await tmpDir({ "secret.toml": "secret", "flags/a.toml": "a" });
    const dir = await tmpDir({ "namespace.toml": "ns", "segments/ok.toml": "x" });
    await Deno.symlink(`${outside}/secret.toml`, `${dir}/segments/s.toml`);
    await Deno.symlink(`${outside}/flags`, `${dir}/flags`);
    const err = await assertRejects(() => readManifestDir(dir), ProblemsError);
    assertEquals(err.problems.map(formatProblem), [
      "flags: refusing a symbolic link: links are not followed",
      "segments/s.toml: refusing a symbolic link: links are not followed",
    ]);
  }),
);

Deno.test(
  "readManifestDir() refuses files over 1 MiB without reading them",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({ "namespace.toml": "#".repeat(1024 * 1024 + 1) });
    const err = await assertRejects(() => readManifestDir(dir), ProblemsError);
    assertEquals(err.problems.map(formatProblem), [
      "namespace.toml: file is 1048577 bytes; the limit is 1048576 bytes (1 MiB)",
    ]);
  }),
);

Deno.test(
  "readManifestDir() rejects a missing directory or a file with UsageError",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({ "namespace.toml": "ns" });
    await assertRejects(
      () => readManifestDir(`${dir}/nope`),
      UsageError,
      "manifest directory not found",
    );
    await assertRejects(
      () => readManifestDir(`${dir}/namespace.toml`),
      UsageError,
      "not a directory",
    );
  }),
);

Deno.test(
  "writeManifestDir() writes a file set that reads back identically",
  withTmp(async (tmpDir) => {
    const dir = `${await tmpDir()}/out`;
    const files = new Map([
      ["namespace.toml", enc.encode("schema_version = 1\n")],
      ["flags/a.toml", enc.encode("a\n")],
      ["segments/s.toml", new Uint8Array([0xef, 0xbb, 0xbf, 0x61])],
    ]);
    await writeManifestDir(dir, files);
    const back = await readManifestDir(dir);
    assertEquals([...back.keys()], ["flags/a.toml", "namespace.toml", "segments/s.toml"]);
    for (const [p, b] of files) assertEquals(back.get(p), b);
    // no temporary files left behind
    const names = [...Deno.readDirSync(`${dir}/flags`)].map((e) => e.name);
    assertEquals(names, ["a.toml"]);
  }),
);

Deno.test(
  "writeManifestDir() refuses paths outside the manifest shapes and writes nothing",
  withTmp(async (tmpDir) => {
    const root = await tmpDir();
    const dir = `${root}/out`;
    for (
      const bad of [
        "../escape.toml",
        "/abs.toml",
        "flags/../../escape.toml",
        "README.md",
        "flags/sub/a.toml",
      ]
    ) {
      const err = await assertRejects(
        () =>
          writeManifestDir(
            dir,
            new Map([["namespace.toml", enc.encode("")], [bad, enc.encode("x")]]),
          ),
        ProblemsError,
      );
      assertEquals(err.problems.map((p) => p.path), [bad]);
    }
    await assertRejects(() => Deno.stat(dir), Deno.errors.NotFound);
    await assertRejects(() => Deno.stat(`${root}/escape.toml`), Deno.errors.NotFound);
  }),
);

Deno.test(
  "writeManifestDir() with prune removes manifest files absent from the set only",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({
      "namespace.toml": "old",
      "flags/old.toml": "old",
      "flags/keep.toml": "old",
      "segments/gone.toml": "old",
      "README.md": "mine",
      "flags/notes.txt": "mine",
    });
    await writeManifestDir(
      dir,
      new Map([
        ["namespace.toml", enc.encode("new")],
        ["flags/keep.toml", enc.encode("new")],
      ]),
      { prune: true },
    );
    const scan = await scanManifestDir(dir);
    assertEquals(text(scan.files), { "flags/keep.toml": "new", "namespace.toml": "new" });
    assertEquals(await Deno.readTextFile(`${dir}/README.md`), "mine");
    assertEquals(await Deno.readTextFile(`${dir}/flags/notes.txt`), "mine");
  }),
);

Deno.test(
  "writeManifestDir() without prune keeps other manifest files",
  withTmp(async (tmpDir) => {
    const dir = await tmpDir({ "flags/old.toml": "old" });
    await writeManifestDir(dir, new Map([["flags/new.toml", enc.encode("new")]]));
    assertEquals(Object.keys(text(await readManifestDir(dir))), [
      "flags/new.toml",
      "flags/old.toml",
    ]);
  }),
);

Deno.test(
  "writeManifestDir() refuses to write through a linked flags/ directory",
  withTmp(async (tmpDir) => {
    const outside = await tmpDir();
    const dir = await tmpDir();
    await Deno.symlink(outside, `${dir}/flags`);
    const err = await assertRejects(
      () => writeManifestDir(dir, new Map([["flags/a.toml", enc.encode("x")]])),
      CfgtoolError,
      "is not a directory",
    );
    assert(!(err instanceof ProblemsError));
    assertEquals([...Deno.readDirSync(outside)].length, 0);
  }),
);

Deno.test("a JSON manifest of more files than an archive may hold is refused with 413", () => {
  const files: Record<string, string> = {};
  for (let i = 0; i <= MAX_MANIFEST_FILES; i++) files[`flags/f${i}.toml`] = "";
  const body = new TextEncoder().encode(JSON.stringify({ files }));
  const err = assertThrows(() => manifestFromJson(body), CfgtoolError);
  assertEquals([err.code, err.status], ["payload_too_large", 413]);
  assertStringIncludes(err.message, `at most ${MAX_MANIFEST_FILES}`);
  delete files["flags/f0.toml"];
  const ok = manifestFromJson(new TextEncoder().encode(JSON.stringify({ files })));
  assertEquals(ok.files.size, MAX_MANIFEST_FILES);
});
