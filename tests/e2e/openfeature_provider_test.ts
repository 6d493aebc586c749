import { assert, assertEquals } from "../assert.ts";
import {
  type EvaluationContext,
  type EventDetails,
  OpenFeature,
  ProviderEvents,
} from "@openfeature/server-sdk";
import { CfgtoolProvider } from "../../lib/client/openfeature_provider.ts";
import { FlagClient } from "../../lib/client/flag_client.ts";
import { boolFlag, NS_TOML, planSegment, startWorld, waitFor } from "../client/fixture.ts";

const NUMBER_FLAG = `schema_version = 1
type = "number"
default = "low"
[variations]
low = 10
high = 99
`;

Deno.test("CfgtoolProvider serves the real OpenFeature SDK and emits its events", async () => {
  const world = await startWorld();
  const files: Record<string, string> = {
    "namespace.toml": NS_TOML,
    "flags/checkout.toml": boolFlag({ segment: "beta" }),
    "flags/limit.toml": NUMBER_FLAG,
    "flags/tour.toml": boolFlag({ segment: "new-users" }),
    "segments/beta.toml": planSegment("beta"),
    "segments/new-users.toml": `schema_version = 1
[[predicate]]
attribute = "user.created_at"
op = "after"
value = "2026-01-01T00:00:00Z"
`,
  };
  await world.push(files);
  const provider = new CfgtoolProvider({
    namespace: "web",
    environment: "production",
    clientOptions: {
      server: world.inst.url,
      token: world.token,
      namespaces: ["web:*"],
      backoff: { initialMs: 40, maxMs: 200 },
    },
  });
  const seen: { type: string; details?: EventDetails }[] = [];
  for (
    const type of [ProviderEvents.Ready, ProviderEvents.ConfigurationChanged, ProviderEvents.Error]
  ) {
    OpenFeature.addHandler(type, (details) => seen.push({ type, ...(details ? { details } : {}) }));
  }
  try {
    await OpenFeature.setProviderAndWait("cfgtool-test", provider);
    const client = OpenFeature.getClient("cfgtool-test");
    assert(seen.some((e) => e.type === ProviderEvents.Ready));

    assertEquals(
      await client.getBooleanValue("checkout", false, { targetingKey: "u1", plan: "beta" }),
      true,
    );
    const details = await client.getBooleanDetails("checkout", true, {
      targetingKey: "u2",
      plan: "free",
    });
    assertEquals(details.value, false);
    assertEquals(details.reason, "DEFAULT");
    assertEquals(details.variant, "off");
    assertEquals(details.flagMetadata.version, 1);
    assertEquals(await client.getNumberValue("limit", 0), 10);

    // OpenFeature contexts may hold Dates, at any depth: they are compared as their ISO text
    const tour = (created_at: unknown) =>
      client.getBooleanValue("tour", false, { user: { created_at } } as EvaluationContext);
    assertEquals(await tour(new Date("2026-02-01T00:00:00Z")), true);
    assertEquals(await tour("2026-02-01T00:00:00+01:00"), true);
    assertEquals(await tour(new Date("2026-01-01T00:00:00Z")), false);
    assertEquals(await tour(new Date("not a date")), false);
    assertEquals(await tour(Date.parse("2026-02-01T00:00:00Z")), false);

    const mismatch = await client.getStringDetails("limit", "dflt");
    assertEquals(mismatch.value, "dflt");
    assertEquals(mismatch.errorCode, "TYPE_MISMATCH");
    const missing = await client.getBooleanDetails("nope", true);
    assertEquals(missing.value, true);
    assertEquals(missing.errorCode, "FLAG_NOT_FOUND");

    files["flags/limit.toml"] = NUMBER_FLAG.replace('default = "low"', 'default = "high"');
    const v2 = await world.push(files);
    await waitFor(
      () => seen.some((e) => e.type === ProviderEvents.ConfigurationChanged),
      "PROVIDER_CONFIGURATION_CHANGED",
    );
    const changed = seen.find((e) => e.type === ProviderEvents.ConfigurationChanged)!;
    assertEquals(changed.details?.flagsChanged, ["limit"]);
    assertEquals(await client.getNumberValue("limit", 0), 99);
    assertEquals((await client.getNumberDetails("limit", 0)).flagMetadata.version, v2);

    // the server goes away: PROVIDER_ERROR, and evaluation keeps the last good model
    await world.inst.server.kill();
    await waitFor(() => seen.some((e) => e.type === ProviderEvents.Error), "PROVIDER_ERROR");
    assertEquals(await client.getNumberValue("limit", 0), 99);
  } finally {
    await OpenFeature.clearProviders();
    OpenFeature.clearHandlers();
    await world.close();
  }
});

Deno.test("CfgtoolProvider initialization fails with PROVIDER_FATAL on a bad token", async () => {
  const world = await startWorld();
  try {
    await world.push({ "namespace.toml": NS_TOML });
    const flagClient = new FlagClient({
      server: world.inst.url,
      token: "svc_read_nope",
      namespaces: ["web:*"],
    });
    const provider = new CfgtoolProvider({
      namespace: "web",
      environment: "production",
      client: flagClient,
    });
    let error: unknown = null;
    await OpenFeature.setProviderAndWait("cfgtool-bad", provider).catch((e) => error = e);
    assertEquals((error as { code?: string })?.code, "PROVIDER_FATAL");
    const details = await OpenFeature.getClient("cfgtool-bad").getBooleanDetails("x", true);
    assertEquals(details.value, true);
    assertEquals(details.errorCode, "PROVIDER_FATAL");
    await flagClient.close();
  } finally {
    await OpenFeature.clearProviders();
    await world.close();
  }
});
