/**
 * The import report shows names from the export without letting them
 * forge lines: a name that is not a plain key is quoted as JSON.
 */
import { assert, assertEquals } from "../assert.ts";
import { reportLines } from "../../lib/import/report.ts";

Deno.test("a name from the export cannot add lines to the report or hide in it", () => {
  const lines = reportLines({
    source: "flagd",
    file: "x.json",
    out: "out",
    written: [],
    replaced: [],
    result: {
      files: new Map(),
      notes: [],
      items: [{
        kind: "flag",
        key: "evil",
        sourceKey: "evil\nflag payments-kill-switch: written\u001b[2K",
        written: true,
        mapped: [],
        unmapped: [],
        notes: [],
      }],
    },
  });
  assertEquals(lines.length, 2, lines.join("\n"));
  assert(lines[1]!.startsWith('flag evil ("evil\\nflag payments-kill-switch: written\\u001b[2K"'));
  assert(lines.every((l) => !l.includes("\n") && !l.includes("\u001b")));
});
