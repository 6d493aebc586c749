/**
 * Upload safety of lib/closure/archive.ts against gzip bombs: a small tar.gz
 * whose tar is followed by a long run of zero bytes must not be inflated in
 * full. Inflation proceeds slice by slice and stops with 413 once the tar
 * stream passes the unpack limit.
 */
import { assert, assertEquals } from "../assert.ts";
import { packArchive } from "../../lib/closure/archive.ts";
import { createAcmeWeb, startInstallation } from "./installation.ts";

const NS_TOML = `schema_version = 1

[namespace]
description = "bomb"

[namespace.environments.production]
public_evaluate = false
`;

/** A valid manifest tar followed by `zeros` zero bytes, gzip-compressed. */
async function bomb(zeros: number): Promise<Uint8Array> {
  const tgz = await packArchive(new Map([["namespace.toml", new TextEncoder().encode(NS_TOML)]]));
  const tar = new Uint8Array(
    await new Response(
      new Blob([tgz as BlobPart]).stream().pipeThrough(
        new DecompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>,
      ),
    ).arrayBuffer(),
  );
  // stream the zeros in 1 MiB pieces so the test itself stays small
  const piece = new Uint8Array(1024 * 1024);
  let left = zeros;
  const source = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(tar);
    },
    pull(c) {
      if (left <= 0) return c.close();
      const n = Math.min(left, piece.length);
      left -= n;
      c.enqueue(piece.subarray(0, n));
    },
  });
  return new Uint8Array(
    await new Response(source.pipeThrough(
      new CompressionStream("gzip") as ReadableWritablePair<Uint8Array, Uint8Array>,
    )).arrayBuffer(),
  );
}

Deno.test("a tar.gz that inflates past the 16 MiB unpack limit is refused with 413 (gzip bomb)", async () => {
  const inst = await startInstallation();
  try {
    await createAcmeWeb(inst);
    // 64 MiB of inflated data (4x maxTotalBytes) from a ~64 KiB body
    const body = await bomb(64 * 1024 * 1024);
    assert(body.length < 200 * 1024, `bomb is ${body.length} bytes`);
    const res = await inst.api(
      "PUT",
      "/api/v1/tenants/acme/namespaces/web/manifest",
      inst.admin,
      body,
      {
        "content-type": "application/gzip",
      },
    );
    // Expected: the inflated stream is bounded (≈ maxTotalBytes + tar headers) → 413.
    assertEquals(
      res.status,
      413,
      `upload inflating to 64 MiB was answered ${res.status} ${JSON.stringify(res.body)}`,
    );
  } finally {
    await inst.close();
  }
});

Deno.test("unpackArchive inflates step by step and stops at the limit (bounded memory)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-review-" });
  try {
    const path = `${dir}/bomb.tgz`;
    await Deno.writeFile(path, await bomb(256 * 1024 * 1024)); // ~1.2 MB on disk
    const script = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      script,
      `import { unpackArchive } from ${
        JSON.stringify(new URL("../../lib/closure/archive.ts", import.meta.url).href)
      };
const gz = await Deno.readFile(${JSON.stringify(path)});
try { await unpackArchive(gz); } catch { /* a refusal is fine */ }
const s = await Deno.readTextFile("/proc/self/status");
console.log(/VmHWM:\\s+(\\d+)/.exec(s)![1]);
`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", new URL("../../deno.json", import.meta.url).pathname, script],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
    const peakMb = Number(new TextDecoder().decode(out.stdout).trim()) / 1024;
    // A fresh deno process peaks at ~40-60 MB; a streaming unpacker stays well below 200 MB.
    assert(peakMb < 200, `peak RSS ${Math.round(peakMb)} MB unpacking a ~1 MB archive`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
