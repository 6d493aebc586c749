/**
 * In-process resolution on the worked example: `deno bench -A bench/workspace_bench.ts`.
 * The workspace is opened once; each iteration is one `resolveVariable` call. The `open`
 * group opens it each time, with Ajv and with cached schema verdicts.
 */
import { openWorkspace } from "../lib/workspace/open.ts";

const dir = new URL("../examples/notification-workspace", import.meta.url).pathname;
const ws = await openWorkspace(dir);
const VARIABLE = "notification-delivery-policy";

const CONTEXTS: Record<string, Record<string, unknown>> = {
  "empty context (default)": {},
  "security alert (rule 1)": {
    account: { plan: "free" },
    notification: { kind: "security_alert" },
  },
  "enterprise incident update (rule 2, composed)": {
    account: { plan: "enterprise" },
    incident: { active: true },
    notification: { kind: "incident_update" },
  },
  "standard incident update (default after both rules)": {
    account: { plan: "standard" },
    incident: { active: true },
    notification: { kind: "incident_update" },
  },
};

for (const [name, ctx] of Object.entries(CONTEXTS)) {
  Deno.bench(`resolveVariable: ${name}`, { group: "resolve" }, async () => {
    await ws.resolveVariable(VARIABLE, ctx);
  });
}

Deno.bench("openWorkspace: read, check and compile the example", { group: "open" }, async () => {
  await openWorkspace(dir);
});

const verdictCache = await Deno.makeTempDir({ prefix: "cfgtool-bench-verdicts-" });
await openWorkspace(dir, { verdictCache }); // records the example's schema verdicts

Deno.bench(
  "openWorkspace: read, check and compile the example, schema verdicts cached",
  { group: "open" },
  async () => {
    await openWorkspace(dir, { verdictCache });
  },
);
