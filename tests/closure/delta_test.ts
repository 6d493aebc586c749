import { assert, assertEquals, assertRejects } from "../assert.ts";
import fc from "fast-check";
import { packTar } from "tar";
import {
  applyDelta,
  chooseDelivery,
  computeDelta,
  countDelta,
  type FileEntry,
} from "../../lib/closure/delta.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import { selectClosure } from "../../lib/flags/select.ts";
import { tarSize } from "../../lib/events/closures.ts";
import { flagToml, NS_TOML, segmentToml } from "../events/world.ts";

const enc = new TextEncoder();
const files = (o: Record<string, string>) =>
  new Map(Object.entries(o).map(([k, v]) => [k, enc.encode(v)]));

Deno.test("computeDelta() emits added, modified, removed, enter and leave", async () => {
  const v1 = files({
    "namespace.toml": NS_TOML,
    "flags/f.toml": flagToml("F", ["s1"]),
    "flags/gone.toml": flagToml("G"),
    "segments/s1.toml": segmentToml("S1"),
    "segments/s2.toml": segmentToml("S2"),
  });
  // f now names s2 instead of s1 (s1 leaves, s2 enters); gone is deleted; new is added.
  const v2 = files({
    "namespace.toml": NS_TOML,
    "flags/f.toml": flagToml("F", ["s2"]),
    "flags/new.toml": flagToml("N"),
    "segments/s1.toml": segmentToml("S1"),
    "segments/s2.toml": segmentToml("S2"),
  });
  const sub = ["f", "gone", "new"];
  const prev = selectClosure(v1, sub);
  const next = selectClosure(v2, sub);
  const entries = await computeDelta({ prev, next, prevPaths: v1, nextPaths: v2 });
  assertEquals(entries.map((e) => [e.path, e.op]), [
    ["flags/f.toml", "modified"],
    ["flags/gone.toml", "removed"],
    ["flags/new.toml", "added"],
    ["segments/s1.toml", "leave"],
    ["segments/s2.toml", "enter"],
  ]);
  for (const e of entries) {
    if (e.op === "removed" || e.op === "leave") {
      assertEquals(e.sha256 === undefined && e.content_b64 === undefined, true);
    } else {
      const bytes = Uint8Array.from(atob(e.content_b64!), (c) => c.charCodeAt(0));
      assertEquals(await sha256Hex(bytes), e.sha256);
      assertEquals(bytes, next.get(e.path));
    }
  }
  const applied = await applyDelta(prev, entries);
  assertEquals(await closureHash(applied), await closureHash(next));
});

Deno.test("computeDelta() of equal closures is empty", async () => {
  const v = files({ "namespace.toml": NS_TOML });
  assertEquals(await computeDelta({ prev: v, next: new Map(v), prevPaths: v, nextPaths: v }), []);
});

Deno.test("computeDelta() sorts entries byte-wise by path", async () => {
  const next = files({ "segments/b.toml": "x", "flags/z.toml": "y", "namespace.toml": "z" });
  const entries = await computeDelta({
    prev: new Map(),
    next,
    prevPaths: new Set(),
    nextPaths: next,
  });
  assertEquals(entries.map((e) => e.path), ["flags/z.toml", "namespace.toml", "segments/b.toml"]);
  assert(entries.every((e) => e.op === "added"));
});

Deno.test("applyDelta() refuses content whose sha256 does not match", async () => {
  const bad: FileEntry[] = [{ path: "a", op: "added", sha256: "00", content_b64: "YQ==" }];
  await assertRejects(() => applyDelta(new Map(), bad), TypeError, "sha256 mismatch");
});

Deno.test("chooseDelivery() follows the snapshot rules in order", () => {
  const limits = { inlineEventLimitBytes: 100, deltaFileLimit: 2 };
  const ok = { first: false, baseUnavailable: false, entries: 2, dataBytes: 100 };
  assertEquals(chooseDelivery(ok, limits), "inline");
  assertEquals(chooseDelivery({ ...ok, first: true }, limits), "snapshot:first");
  assertEquals(chooseDelivery({ ...ok, baseUnavailable: true }, limits), "snapshot:pruned_base");
  assertEquals(chooseDelivery({ ...ok, entries: 3 }, limits), "snapshot:too_many_files");
  assertEquals(chooseDelivery({ ...ok, dataBytes: 101 }, limits), "snapshot:too_large");
});

Deno.test("tarSize() equals the length of the uncompressed ustar archive", async () => {
  const set = files({ "namespace.toml": NS_TOML, "flags/a.toml": "x".repeat(1025) });
  const tar = await packTar(
    [...set].map(([name, body]) => ({ header: { name, size: body.length, type: "file" }, body })),
  );
  assertEquals(tarSize(set), tar.length);
});

Deno.test("countDelta counts exactly the entries computeDelta gives, without building them", async () => {
  const files = fc.dictionary(
    fc.constantFrom("a", "b", "c", "d", "e", "f"),
    fc.constantFrom("1", "2", "3"),
  );
  await fc.assert(
    fc.asyncProperty(files, files, async (before, after) => {
      const enc = new TextEncoder();
      const prev = new Map(Object.entries(before).map(([p, t]) => [p, enc.encode(t)]));
      const next = new Map(Object.entries(after).map(([p, t]) => [p, enc.encode(t)]));
      const entries = await computeDelta({
        prev,
        next,
        prevPaths: new Set(prev.keys()),
        nextPaths: new Set(next.keys()),
      });
      assertEquals(countDelta(prev, next), entries.length);
    }),
  );
});
