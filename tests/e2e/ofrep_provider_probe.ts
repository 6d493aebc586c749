/**
 * Runs the real `@openfeature/ofrep-provider` 0.1.3 (the registry's latest)
 * under the real `@openfeature/server-sdk` against a cfgtool server and
 * prints what it resolved, one JSON object on stdout. Spawned by
 * tests/e2e/ofrep_test.ts as
 *
 * ```sh
 * deno run -A --no-config --no-lock tests/e2e/ofrep_provider_probe.ts <url> <read token> <client token> <private client token>
 * ```
 *
 * in its own module graph: the provider declares the peer
 * `@openfeature/ofrep-core@^0.1.4` (its API changed in 1.0), and in the
 * project's graph Deno would resolve that peer to the 2.x that
 * `@openfeature/ofrep-web-provider` depends on.
 *
 * @module
 */
// Specifiers built at run time keep these packages out of the project's module
// graph (deno check, deno.lock); under --no-config they resolve on their own.
const npm = (name: string) => `npm:${name}`;
const { OFREPProvider } = await import(npm("@openfeature/ofrep-provider@0.1.3"));
await import(npm("@openfeature/ofrep-core@0.1.4"));
const { OpenFeature } = await import(npm("@openfeature/server-sdk@1.23.0"));

/** What the probe reports of one evaluation (the SDK's EvaluationDetails, trimmed). */
interface Details {
  value: unknown;
  reason?: string;
  variant?: string;
  errorCode?: string;
}

const [url, read, client, privateClient] = Deno.args;
if (
  url === undefined || read === undefined || client === undefined || privateClient === undefined
) {
  console.error(
    "usage: ofrep_provider_probe.ts <url> <read token> <client token> <private client token>",
  );
  Deno.exit(2);
}

function pick(d: Details) {
  return {
    value: d.value,
    reason: d.reason,
    variant: d.variant ?? null,
    errorCode: d.errorCode ?? null,
  };
}

await OpenFeature.setProviderAndWait(
  "read",
  new OFREPProvider({
    baseUrl: url,
    headers: [
      ["Authorization", `Bearer ${read}`],
      ["X-Cfgtool-Tenant", "acme"],
      ["X-Cfgtool-Namespace", "web"],
      ["X-Cfgtool-Environment", "staging"],
    ],
  }),
);
await OpenFeature.setProviderAndWait(
  "client",
  new OFREPProvider({ baseUrl: url, headers: [["Authorization", `Bearer ${client}`]] }),
);
await OpenFeature.setProviderAndWait(
  "private",
  new OFREPProvider({ baseUrl: url, headers: [["Authorization", `Bearer ${privateClient}`]] }),
);
const r = OpenFeature.getClient("read");
const c = OpenFeature.getClient("client");
const staff = { targetingKey: "u-1", user: { email: "ana@example.com" } };
const out = {
  staffCheckout: pick(await r.getBooleanDetails("new-checkout", false, staff)),
  staffTheme: pick(await r.getStringDetails("theme", "x", staff)),
  plainTheme: pick(await r.getStringDetails("theme", "x", { targetingKey: "u-2" })),
  cartLimit: pick(await r.getNumberDetails("cart-limit", 0, { targetingKey: "u-1" })),
  banner: pick(await r.getObjectDetails("banner", {}, {})),
  missing: pick(await r.getBooleanDetails("nope", true, {})),
  mismatch: pick(await r.getNumberDetails("theme", 7, {})),
  emptyTargetingKey: pick(await r.getBooleanDetails("theme", false, { targetingKey: "" })),
  clientBeta: pick(await c.getBooleanDetails("new-checkout", false, { user: { beta: true } })),
  privateClient: pick(
    await OpenFeature.getClient("private").getBooleanDetails("new-checkout", true, {}),
  ),
};
await OpenFeature.close();
console.log(JSON.stringify(out));
