/**
 * A diff drawn (lib/console/changes_view.tsx): values before lines for
 * a changed TOML file, a note instead of lines for binary and empty files,
 * and a page that stays small however large the difference.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { DOMParser } from "npm:linkedom@^0.18.15";
import { Changes, MAX_DIFF_LINES } from "../../lib/console/changes_view.tsx";
import { diffFileSets } from "../../lib/console/file_set_diff.ts";

const t = (s: string) => new TextEncoder().encode(s);

async function draw(before: Record<string, string | Uint8Array>, after: typeof before) {
  const set = (o: typeof before) =>
    new Map(Object.entries(o).map(([p, v]) => [p, typeof v === "string" ? t(v) : v]));
  const html = String(await <Changes changes={diffFileSets(set(before), set(after))} />);
  const doc = new DOMParser().parseFromString(
    `<!doctype html><html><body>${html}</body></html>`,
    "text/html",
  );
  return { html, doc };
}

Deno.test("a changed TOML file lists its changed values above its lines", async () => {
  const { doc } = await draw({ "flags/a.toml": "[x]\nk = 1\n" }, {
    "flags/a.toml": "[x]\nk = 2\n",
  });
  const section = doc.querySelector('section[aria-label="flags/a.toml (changed)"]');
  assertEquals(section.querySelector("ul.toml-changes li").textContent, "x.k: 1 → 2");
  assert(section.innerHTML.indexOf("toml-changes") < section.innerHTML.indexOf('class="diff"'));
});

Deno.test("a TOML file that does not parse gets its lines only", async () => {
  const { doc } = await draw({ "a.toml": "k = 1\n" }, { "a.toml": "k = = 2\n" });
  assertEquals(doc.querySelector("ul.toml-changes"), null);
  assert(doc.querySelector("pre.diff .add"));
});

Deno.test("a comment-only change says no value changed", async () => {
  const { html } = await draw({ "a.toml": "k = 1\n" }, { "a.toml": "# why\nk = 1\n" });
  assertStringIncludes(html, "No value changed: only formatting or comments.");
});

Deno.test("binary and empty files are named with a note, not drawn", async () => {
  const { doc } = await draw(
    { "logo.bin": new Uint8Array([0xff]) },
    { "logo.bin": new Uint8Array([0xfe, 0xff]), "empty.toml": "" },
  );
  const notes = [...doc.querySelectorAll("section p")].map((p) =>
    // deno-lint-ignore no-explicit-any
    (p as any).textContent.replace(/\s+/g, " ").trim()
  );
  assertEquals(notes, ["An empty file.", "Not text (not valid UTF-8): 1 B → 2 B."]);
  assertEquals(doc.querySelector("pre.diff"), null);
});

Deno.test("a large difference draws files until the page is full, then names the rest", async () => {
  const before: Record<string, string> = {};
  const after: Record<string, string> = {};
  for (let i = 0; i < 40; i++) {
    const path = `flags/f${String(i).padStart(2, "0")}.toml`;
    before[path] = Array.from({ length: 40 }, (_, j) => `k${j} = ${j}`).join("\n") + "\n";
    after[path] = Array.from({ length: 40 }, (_, j) => `k${j} = ${j + 1}`).join("\n") + "\n";
  }
  const { html, doc } = await draw(before, after);
  assertEquals(doc.querySelectorAll("section.card").length, 40);
  const drawn = doc.querySelectorAll("pre.diff").length;
  assert(drawn > 0 && drawn < 40, `${drawn} drawn`);
  const lines = doc.querySelectorAll("pre.diff > span").length +
    doc.querySelectorAll("ul.toml-changes li").length;
  assert(lines <= MAX_DIFF_LINES, `${lines} lines`);
  assertStringIncludes(html, "Not drawn");
  assert(html.length < 100_000, `${html.length} bytes`);
});
