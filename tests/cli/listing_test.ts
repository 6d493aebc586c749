/**
 * lib/cli/listing.ts: how `tenant`, `namespace` and `token` print lists and
 * pages, and the `--limit` / `--after` options of a paged list.
 */
import { Command } from "commander";
import { assertEquals, assertThrows } from "../assert.ts";
import { UsageError } from "../../lib/errors.ts";
import { pageQuery, printList, printPage, withPageOptions } from "../../lib/cli/listing.ts";

/** Runs `fn` with console.log and console.error captured as `out …` / `err …` lines. */
function captured(fn: () => void): string[] {
  const lines: string[] = [];
  const { log, error } = console;
  console.log = (line: string) => void lines.push(`out ${line}`);
  console.error = (line: string) => void lines.push(`err ${line}`);
  try {
    fn();
  } finally {
    Object.assign(console, { log, error });
  }
  return lines;
}

Deno.test("a paged list takes --limit, --after and --json after its own options", () => {
  const cmd = withPageOptions(new Command("versions").option("--tenant <slug>", "the tenant"));
  assertEquals(cmd.options.map((o) => o.long), ["--tenant", "--limit", "--after", "--json"]);
  cmd.parse(["--limit", "5", "--after", "c1", "--json"], { from: "user" });
  assertEquals(cmd.opts(), { limit: "5", after: "c1", json: true });
});

Deno.test("the page query has limit and after only when given", () => {
  assertEquals(pageQuery({}), {});
  assertEquals(pageQuery({ limit: "20" }), { limit: 20 });
  assertEquals(pageQuery({ after: "tok_1" }), { after: "tok_1" });
  assertEquals(pageQuery({ limit: "3", after: "v9", json: true }), { limit: 3, after: "v9" });
});

Deno.test("a --limit that is not a whole number of at least 1 is a usage error", () => {
  assertThrows(() => pageQuery({ limit: "0" }), UsageError, "--limit must be a whole number ≥ 1");
  assertThrows(() => pageQuery({ limit: "x" }), UsageError, 'not "x"');
});

Deno.test("a list prints as a table, or as the JSON array with --json", () => {
  const tenants = [{ slug: "acme" }, { slug: "globex" }];
  const row = (t: { slug: string }) => [t.slug];
  assertEquals(captured(() => printList(tenants, false, ["SLUG"], row)), [
    "out SLUG",
    "out acme",
    "out globex",
  ]);
  assertEquals(captured(() => printList([], false, ["SLUG"], row)), ["out (none)"]);
  assertEquals(captured(() => printList(tenants, true, ["SLUG"], row)), [
    `out ${JSON.stringify(tenants, null, 2)}`,
  ]);
});

Deno.test("a page with a next page ends with the --after hint on stderr", () => {
  const row = (v: { version: number }) => [String(v.version)];
  const more = { items: [{ version: 2 }], next: "c2" };
  assertEquals(captured(() => printPage(more, false, ["VERSION"], row)), [
    "out VERSION",
    "out 2",
    "err (more: --after c2)",
  ]);
  const last = { items: [{ version: 1 }], next: null };
  assertEquals(captured(() => printPage(last, false, ["VERSION"], row)), ["out VERSION", "out 1"]);
});

Deno.test("a page prints as {items, next} JSON with --json, without the hint", () => {
  const page = { items: [{ version: 2 }], next: "c2" };
  assertEquals(captured(() => printPage(page, true, ["VERSION"], () => [])), [
    `out ${JSON.stringify(page, null, 2)}`,
  ]);
});
