/**
 * docs/operations.md says which permissions `deno task serve` grants: the
 * list must be the serve task's own (deno.json), so that a reader who runs
 * `cfgtool serve` under `deno run` with those flags gets what the task gets.
 */
import { assert, assertEquals } from "../assert.ts";

const ROOT = new URL("../../", import.meta.url);

Deno.test("operations.md lists the permissions of deno.json's serve task", async () => {
  const task: string = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks.serve;
  const granted = task.split(/\s+/).filter((w) => w.startsWith("--allow-")).sort();
  assert(granted.length > 0, task);
  const doc = await Deno.readTextFile(new URL("docs/operations.md", ROOT));
  const listed = doc.match(
    /`deno task serve` is `cfgtool serve` with the permissions it needs\s*\(`([^`]+)`/,
  )?.[1];
  assert(listed, "operations.md names the serve task's permissions");
  assertEquals(listed.split(/\s+/).sort(), granted);
});
