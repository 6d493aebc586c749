/**
 * examples/cfgtool.toml, the commented sample configuration the operations
 * guide points to, is a file `cfgtool serve --config` accepts, and it shows
 * every key: each flag of `serve`, set or commented out with its default.
 */
import { Command } from "commander";
import { assertEquals } from "../assert.ts";
import { registerServeCommand } from "../../lib/cli/serve.ts";
import { configKeys, configValues } from "../../lib/cli/serve_config.ts";
import { parseToml, type TomlTable } from "../../lib/toml.ts";

const SAMPLE = new URL("../../examples/cfgtool.toml", import.meta.url);

function table(text: string): TomlTable {
  const parsed = parseToml(text, "cfgtool.toml");
  if (!parsed.ok) throw new Error(parsed.problem.message);
  return parsed.table;
}

function serveKeys() {
  const program = new Command();
  registerServeCommand(program);
  const serve = program.commands.find((c) => c.name() === "serve")!;
  return configKeys(serve.options);
}

Deno.test("the sample configuration is accepted as written and with every commented key switched on", async () => {
  const text = await Deno.readTextFile(SAMPLE);
  const keys = serveKeys();
  const asWritten = configValues(table(text), keys, "cfgtool.toml", text);
  const switchedOn = text.replace(/^# ([a-z][a-z-]* = .*)$/gm, "$1");
  const all = configValues(table(switchedOn), keys, "cfgtool.toml", switchedOn);
  assertEquals([...all.keys()].sort(), keys.map((k) => k.attribute).sort());
  for (const [k, v] of asWritten) assertEquals(all.get(k), v, k);
});
