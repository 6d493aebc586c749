/**
 * OFREP push with the real `@openfeature/ofrep-web-provider` 0.4.3 and
 * `@openfeature/web-sdk` 1.10.0, running under Deno (whose global
 * `EventSource` and `fetch` the provider uses as a browser's): the provider
 * fetches the bulk evaluation, connects to the advertised event stream, and
 * on a push receives `refetchEvaluation`, refetches (304 when its results
 * did not change) and emits `PROVIDER_CONFIGURATION_CHANGED`.
 */
import { OFREPWebProvider } from "npm:@openfeature/ofrep-web-provider@0.4.3";
import { OpenFeature, type Provider, ProviderEvents } from "npm:@openfeature/web-sdk@1.10.0";
import { assert, assertEquals } from "../assert.ts";
import { type Fixture, manifestFiles, startFixture } from "./evaluation_fixture.ts";

function themeFlag(defaultVariation: string): string {
  return `schema_version = 1
description = "Theme"
type = "string"
default = "${defaultVariation}"
[variations]
light = "light"
dark = "dark"
[[rule]]
segment = "staff"
variation = "dark"
`;
}

/** Whether the access log (JSON lines) shows a 304 answer of the OFREP bulk endpoint. */
function saw304(log: string): boolean {
  return log.split("\n").some((line) => {
    try {
      const e = JSON.parse(line);
      return e.path === "/ofrep/v1/evaluate/flags" && e.status === 304;
    } catch {
      return false;
    }
  });
}

/** Waits until `check` holds, polling every 20 ms, for at most `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("the real ofrep-web-provider follows pushes over the OFREP event stream", async (t) => {
  const f: Fixture = await startFixture();
  const provider = new OFREPWebProvider({
    baseUrl: f.inst.url,
    headers: [["Authorization", `Bearer ${f.tokens.client}`]],
    cacheMode: "disabled",
  });
  const changes: string[][] = [];
  try {
    await OpenFeature.setContext({ targetingKey: "u-1", user: { email: "bo@corp.test" } });
    // the package's own types differ from the SDK's under exactOptionalPropertyTypes only
    await OpenFeature.setProviderAndWait(provider as unknown as Provider);
    const client = OpenFeature.getClient();
    client.addHandler(ProviderEvents.ConfigurationChanged, (e) => {
      changes.push([...(e?.flagsChanged ?? [])]);
    });

    await t.step("initial bulk evaluation through the provider", () => {
      assertEquals(client.getStringValue("theme", "x"), "light");
      assertEquals(client.getBooleanValue("new-checkout", true), false);
      assertEquals(client.getObjectValue("banner", {}), { show: false });
      const d = client.getStringDetails("theme", "x");
      assertEquals([d.reason, d.variant], ["DEFAULT", "light"]);
    });

    await t.step("a push reaches the provider through the event stream", async () => {
      await f.push(manifestFiles({ "flags/theme.toml": themeFlag("dark") }));
      await until(() => client.getStringValue("theme", "x") === "dark", 5000, "the new theme");
      await until(() => changes.some((c) => c.includes("theme")), 2000, "a change event");
      assertEquals(client.getBooleanValue("new-checkout", true), false);
    });

    await t.step("a push that leaves this context's results alone changes nothing", async () => {
      const before = changes.length;
      const logs = f.inst.server.logs().length;
      await f.push(manifestFiles({
        "flags/theme.toml": themeFlag("dark"),
        "flags/new-checkout.toml": `schema_version = 1
description = "New checkout (rules for staff only)"
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
segment = "staff"
variation = "on"
`,
      }));
      // the provider refetches and gets a 304
      await until(() => saw304(f.inst.server.logs().slice(logs)), 5000, "a 304 refetch");
      assertEquals(changes.length, before, "no configuration change event");
      assertEquals(client.getBooleanValue("new-checkout", true), false);
    });

    await t.step("a context change refetches for the new context", async () => {
      await OpenFeature.setContext({ targetingKey: "u-2", user: { email: "ana@example.com" } });
      assertEquals(client.getBooleanValue("new-checkout", false), true);
      assert(client.getStringValue("theme", "x") === "dark");
    });
  } finally {
    await OpenFeature.close();
    await f.inst.close();
  }
});
