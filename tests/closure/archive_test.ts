import { assert, assertEquals, assertRejects } from "../assert.ts";
import { packTar } from "tar";
import { DEFAULT_UNPACK_LIMITS, packArchive, unpackArchive } from "../../lib/closure/archive.ts";
import { CfgtoolError, UsageError } from "../../lib/errors.ts";
import { MAX_MANIFEST_FILES } from "../../lib/flags/model.ts";

const enc = new TextEncoder();
const files = new Map([
  ["segments/beta.toml", enc.encode("schema_version = 1\n")],
  ["flags/a.toml", enc.encode("a")],
  ["namespace.toml", enc.encode("ns")],
]);

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const s = new Blob([bytes as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(s).arrayBuffer());
}

Deno.test("packArchive gives identical bytes for identical input, whatever the insertion order", async () => {
  const a = await packArchive(files);
  const b = await packArchive(new Map([...files].reverse()));
  assertEquals(a, b);
});

Deno.test("packArchive writes a gzip header with mtime 0 and round-trips through unpackArchive", async () => {
  const a = await packArchive(files);
  assertEquals([...a.slice(0, 2)], [0x1f, 0x8b]);
  assertEquals([...a.slice(4, 8)], [0, 0, 0, 0]);
  const back = await unpackArchive(a);
  assertEquals([...back.keys()], ["flags/a.toml", "namespace.toml", "segments/beta.toml"]);
  assertEquals(back.get("namespace.toml"), enc.encode("ns"));
});

Deno.test("packArchive output is readable by the system tar with fixed owners and mtime", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeFile(`${dir}/x.tgz`, await packArchive(files));
    const out = await new Deno.Command("tar", { args: ["tvzf", `${dir}/x.tgz`] }).output();
    const listing = new TextDecoder().decode(out.stdout);
    assert(out.success);
    for (const line of listing.trim().split("\n")) {
      assert(line.startsWith("-rw-r--r-- 0/0"), line);
      assert(line.includes("1970-01-01"), line);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("unpackArchive accepts an archive made by the system tar with ./ prefixes and directories", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/src/flags`, { recursive: true });
    await Deno.writeTextFile(`${dir}/src/namespace.toml`, "x");
    await Deno.writeTextFile(`${dir}/src/flags/a.toml`, "y");
    const made = await new Deno.Command("tar", {
      args: ["czf", `${dir}/a.tgz`, "-C", `${dir}/src`, "."],
    })
      .output();
    assert(made.success);
    const back = await unpackArchive(await Deno.readFile(`${dir}/a.tgz`));
    assertEquals([...back.keys()].sort(), ["flags/a.toml", "namespace.toml"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

for (const name of ["../evil.toml", "/etc/passwd", "flags/../../x.toml", "flags//a.toml"]) {
  Deno.test(`unpackArchive refuses the path ${JSON.stringify(name)}`, async () => {
    const tar = await packTar([{ header: { name, size: 1 }, body: "x" }]);
    await assertRejects(() => unpackArchive(tar), UsageError);
  });
}

Deno.test("unpackArchive refuses symbolic links and hard links", async () => {
  for (const type of ["symlink", "link"] as const) {
    const tar = await packTar([{
      header: { name: "flags/a.toml", size: 0, type, linkname: "/etc/passwd" },
    }]);
    const gz = await gzip(tar);
    await assertRejects(() => unpackArchive(gz), UsageError, "only regular files");
  }
});

Deno.test("unpackArchive refuses more than the entry, file and total limits with 413", async () => {
  const limits = { ...DEFAULT_UNPACK_LIMITS, maxEntries: 2, maxFileBytes: 4, maxTotalBytes: 6 };
  const three = await packTar(
    ["a", "b", "c"].map((n) => ({ header: { name: n, size: 1 }, body: "x" })),
  );
  const big = await packTar([{ header: { name: "a", size: 5 }, body: "xxxxx" }]);
  const total = await packTar(
    ["a", "b"].map((n) => ({ header: { name: n, size: 4 }, body: "xxxx" })),
  );
  for (const tar of [three, big, total]) {
    const err = await assertRejects(() => unpackArchive(tar, limits), CfgtoolError);
    assertEquals(err.status, 413);
    assertEquals(err.code, "payload_too_large");
  }
});

Deno.test("unpackArchive refuses bytes that are not an archive with a clear message", async () => {
  await assertRejects(() => unpackArchive(enc.encode("hello world, not a tarball")), UsageError);
  const notTar = await gzip(enc.encode("x".repeat(600)));
  await assertRejects(() => unpackArchive(notTar), UsageError);
});

Deno.test("an archive may hold as many entries as a manifest may hold files", () => {
  assertEquals(DEFAULT_UNPACK_LIMITS.maxEntries, MAX_MANIFEST_FILES);
});
