/**
 * docs/events.md, "The closure hash", followed step by step without the
 * library, must give the hashes the README shows and `closureHash` computes.
 */
import { assert, assertEquals } from "../assert.ts";
import { closureHash } from "../../mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The four steps of the page, as written there. */
async function documentedClosureHash(files: Map<string, Uint8Array>): Promise<string> {
  const enc = new TextEncoder();
  const cmp = (a: Uint8Array, b: Uint8Array) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  };
  const sorted = [...files].map(([p, c]) => [enc.encode(p), c] as const).sort((x, y) =>
    cmp(x[0], y[0])
  );
  const parts: number[] = [];
  for (const [path, content] of sorted) {
    const len = path.length;
    parts.push((len >>> 24) & 255, (len >>> 16) & 255, (len >>> 8) & 255, len & 255, ...path);
    parts.push(...new Uint8Array(await crypto.subtle.digest("SHA-256", content as BufferSource)));
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(parts)));
  return "sha256:" + [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function readTree(dir: string, prefix = ""): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  for await (const e of Deno.readDir(dir)) {
    const rel = prefix + e.name;
    if (e.isDirectory) {
      for (const [k, v] of await readTree(`${dir}/${e.name}`, rel + "/")) out.set(k, v);
    } else out.set(rel, await Deno.readFile(`${dir}/${e.name}`));
  }
  return out;
}

Deno.test("the closure hash as docs/events.md describes it is the README's hash of examples/flags", async () => {
  const readme = await Deno.readTextFile(`${ROOT}README.md`);
  const shown = readme.match(/version 1 \((sha256:[0-9a-f]{64})\)/)?.[1];
  assert(shown, "the README shows the hash of its first push");
  const files = await readTree(`${ROOT}examples/flags`);
  assertEquals(await documentedClosureHash(files), shown);
  assertEquals(await closureHash(files), shown);
});

Deno.test("the empty closure hashes as docs/events.md says", async () => {
  const doc = await Deno.readTextFile(`${ROOT}docs/events.md`);
  const shown = doc.match(/the empty closure is `(sha256:[0-9a-f]+)…`/)?.[1];
  assert(shown, "docs/events.md names the empty closure's hash");
  const empty = await documentedClosureHash(new Map());
  assert(empty.startsWith(shown), empty);
  assertEquals(await closureHash(new Map()), empty);
});
