/**
 * Line diffs of the console (lib/console/diff_view.tsx) are bounded:
 * files too large or too different are not drawn line by line, and a
 * version page over such a change still answers, saying so.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { lineDiff, MAX_DIFF_INPUT_LINES } from "../../lib/console/diff_view.tsx";
import { consoleTest, FIXTURE } from "./world.ts";

const comments = (tag: string, n: number) =>
  Array.from({ length: n }, (_, i) => `# ${tag} comment line ${i}`).join("\n") + "\n";

Deno.test("a small change of a large file is drawn as a small diff", () => {
  const base = comments("same", 5000);
  const hunks = lineDiff(base, base.replace("line 2500\n", "line 2500 changed\n"));
  assert(hunks !== null);
  assertEquals(hunks.length, 1);
  assertEquals(hunks[0]!.lines.filter((l) => l.startsWith("+")), [
    "+# same comment line 2500 changed",
  ]);
});

Deno.test("a file rewritten line by line, or longer than the limit, is not drawn", () => {
  assertEquals(lineDiff(comments("old", 5000), comments("new", 5000)), null);
  const long = comments("x", MAX_DIFF_INPUT_LINES + 1);
  assertEquals(lineDiff(long, long + "# one more\n"), null);
});

consoleTest(
  "a version whose flag file was rewritten still opens, saying it is not drawn",
  async (w) => {
    const flag = FIXTURE["flags/max-items.toml"]!;
    await w.push({ ...FIXTURE, "flags/max-items.toml": comments("old", 5000) + flag });
    const v = await w.push({ ...FIXTURE, "flags/max-items.toml": comments("new", 5000) + flag });
    const page = await w.page(`/ui/t/acme/ns/web/versions/${v}`, w.member);
    assertEquals(page.status, 200);
    assertStringIncludes(page.text, "Too large or too different to draw line by line");
    const diff = await w.page(`/ui/t/acme/ns/web/diff?from=${v - 1}&to=${v}`, w.member);
    assertEquals(diff.status, 200);
    assertStringIncludes(diff.text, "Too large or too different to draw line by line");
  },
);
