/**
 * The difference between two file sets (lib/console/file_set_diff.ts):
 * which paths were added, removed or changed, in path order, with both
 * sides as text, whatever bytes the files hold.
 */
import { assertEquals } from "../assert.ts";
import { countChanges, diffFileSets } from "../../lib/console/file_set_diff.ts";

const t = (s: string) => new TextEncoder().encode(s);
const files = (entries: Record<string, string | Uint8Array>) =>
  new Map(Object.entries(entries).map(([p, v]) => [p, typeof v === "string" ? t(v) : v]));

Deno.test("equal file sets have no difference", () => {
  const set = files({ "namespace.toml": "schema_version = 1\n", "flags/a.toml": "x = 1\n" });
  assertEquals(diffFileSets(set, files({ ...Object.fromEntries(set) })), []);
  assertEquals(diffFileSets(new Map(), new Map()), []);
});

Deno.test("added, removed and changed paths are listed once each, sorted by path", () => {
  const changes = diffFileSets(
    files({ "z.toml": "old\n", "b.toml": "same\n", "gone.toml": "bye\n" }),
    files({ "z.toml": "new\n", "b.toml": "same\n", "a.toml": "hello\n" }),
  );
  assertEquals(
    changes.map((c) => [c.status, c.path, c.before, c.after, c.beforeSize, c.afterSize]),
    [
      ["added", "a.toml", "", "hello\n", null, 6],
      ["removed", "gone.toml", "bye\n", "", 4, null],
      ["changed", "z.toml", "old\n", "new\n", 4, 4],
    ],
  );
  assertEquals(countChanges(changes), { added: 1, removed: 1, changed: 1 });
});

Deno.test("paths sort in UTF-8 byte order, as trees are stored", () => {
  // U+FF5E sorts before U+1F600 in UTF-8, after it in UTF-16
  const changes = diffFileSets(new Map(), files({ "😀.toml": "a", "～.toml": "b", "A.toml": "c" }));
  assertEquals(changes.map((c) => c.path), ["A.toml", "～.toml", "😀.toml"]);
});

Deno.test("bytes that are not UTF-8 are marked binary and never throw", () => {
  const [change] = diffFileSets(
    files({ "logo.bin": new Uint8Array([0xff, 0xfe]) }),
    files({ "logo.bin": new Uint8Array([0xff, 0x00]) }),
  );
  assertEquals(change!.binary, true);
  assertEquals(change!.status, "changed");
  assertEquals(change!.before.includes("\uFFFD"), true);
  const [text] = diffFileSets(files({ "a.toml": "é = 1" }), files({ "a.toml": "é = 2" }));
  assertEquals(text!.binary, false);
  assertEquals(text!.after, "é = 2");
});

Deno.test("an empty file that appears is added, one that goes is removed", () => {
  assertEquals(
    diffFileSets(files({ "old.toml": "" }), files({ "new.toml": "" })).map((c) => c.status),
    ["added", "removed"],
  );
});
