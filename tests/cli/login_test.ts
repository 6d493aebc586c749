/** `cfgtool login` refusals that need no server (lib/cli/login.ts). */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCfgtool } from "../cli_process.ts";

Deno.test("cfgtool login refuses plain http to a host that is not this machine", async () => {
  const r = await runCfgtool(["login", "--server", "http://flags.example.com", "--no-browser"]);
  assertEquals(r.code, 2, r.stderr);
  assertStringIncludes(r.stderr, "refusing to sign in over plain http to flags.example.com");
});
