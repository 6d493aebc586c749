/**
 * The FlagClient in Node: lib/client/flag_client.ts (with the engine, the
 * archive reader and the SSE parser) is bundled by `deno bundle` into one
 * .mjs, and a Node script drives it against a real server. Skipped when
 * `node` is not installed.
 */
import { assertEquals } from "../assert.ts";
import { NS_TOML, startWorld, stringFlag } from "../client/fixture.ts";

const ENTRY = new URL("../../lib/client/flag_client.ts", import.meta.url).pathname;

function hasNode(): boolean {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const SCRIPT = `
import { FlagClient } from "./flag_client.mjs";
const [server, token] = process.argv.slice(2);
const client = new FlagClient({ server, token, namespaces: ["web:*"], readyTimeoutMs: 15000 });
const say = (o) => process.stdout.write(JSON.stringify(o) + "\\n");
await client.ready();
say({ step: "ready", version: client.closure("web").version,
      value: client.evaluate("web", "production", "banner", { targeting_key: "n1" }).value });
const change = await new Promise((resolve) => client.onChange(resolve));
say({ step: "changed", version: change.version, delivery: change.delivery,
      value: client.evaluate("web", "production", "banner").value,
      error: client.lastRefreshError() });
await client.close();
say({ step: "closed" });
`;

Deno.test({
  name: "FlagClient works in Node 20 (deno bundle) against a real server",
  ignore: !hasNode(),
  fn: async () => {
    const tmp = await Deno.makeTempDir({ prefix: "cfgtool-node-" });
    const world = await startWorld();
    try {
      const bundle = await new Deno.Command(Deno.execPath(), {
        args: ["bundle", "--quiet", "--platform", "node", "-o", `${tmp}/flag_client.mjs`, ENTRY],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assertEquals(bundle.code, 0, new TextDecoder().decode(bundle.stderr));
      await Deno.writeTextFile(`${tmp}/main.mjs`, SCRIPT);
      const files = { "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("one") };
      await world.push(files);

      const child = new Deno.Command("node", {
        args: [`${tmp}/main.mjs`, world.inst.url, world.token],
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const lines: Record<string, unknown>[] = [];
      const stderr = new Response(child.stderr).text();
      const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      const next = async (): Promise<Record<string, unknown>> => {
        while (!buf.includes("\n")) {
          const { done, value } = await reader.read();
          if (done) throw new Error(`node exited early: ${await stderr}`);
          buf += value;
        }
        const i = buf.indexOf("\n");
        const line = JSON.parse(buf.slice(0, i));
        buf = buf.slice(i + 1);
        lines.push(line);
        return line;
      };
      assertEquals(await next(), { step: "ready", version: 1, value: "one" });
      const v2 = await world.push({ ...files, "flags/banner.toml": stringFlag("two") });
      assertEquals(await next(), {
        step: "changed",
        version: v2,
        delivery: "inline",
        value: "two",
        error: null,
      });
      assertEquals(await next(), { step: "closed" });
      reader.releaseLock();
      await child.stdout.cancel().catch(() => {});
      const status = await child.status;
      assertEquals(status.code, 0, await stderr);
    } finally {
      await world.close();
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
