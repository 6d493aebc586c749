/**
 * Every outcome of the worked example (examples/notification-workspace, the
 * README's tour and docs/workspace.md).
 */
import { assert, assertEquals } from "../assert.ts";
import { openWorkspace } from "../../lib/workspace/open.ts";
import { lintWorkspace } from "../../lib/workspace/lint.ts";
import { EXAMPLE_DIR, exampleCopy, exampleFiles, VARIABLE } from "../fixtures/workspace/build.ts";

const ws = await openWorkspace(EXAMPLE_DIR);
const resolve = (ctx: Record<string, unknown>) => ws.resolveVariable(VARIABLE, ctx);

const PLANS = ["enterprise", "standard", "free", undefined];
const KINDS = ["security_alert", "incident_update", "marketing", undefined];
const ACTIVE = [true, false, undefined];

function context(plan?: string, kind?: string, active?: boolean): Record<string, unknown> {
  const ctx: Record<string, unknown> = {};
  if (plan !== undefined) ctx.account = { plan };
  if (kind !== undefined) ctx.notification = { kind };
  if (active !== undefined) ctx.incident = { active };
  return ctx;
}

Deno.test("example lints clean", async () => {
  const report = await lintWorkspace(EXAMPLE_DIR);
  assertEquals(report.problems, []);
  assertEquals(report.counts, { variables: 1, catalogs: 1, entries: 3, qualifiers: 5 });
});

Deno.test("example: a security alert selects the security entry whatever the plan", async () => {
  for (const plan of PLANS) {
    for (const active of ACTIVE) {
      const r = await resolve(context(plan, "security_alert", active));
      assertEquals(r.value_key, "immediate-security", `${plan} ${active}`);
      assertEquals(r.value.delivery, "immediate");
    }
  }
});

Deno.test("example: an enterprise incident update while incident.active is true selects the incident entry", async () => {
  const r = await resolve(context("enterprise", "incident_update", true));
  assertEquals(r.value_key, "immediate-incident");
  assertEquals(r.value.delivery, "immediate");
});

Deno.test("example: every other context selects the default entry", async () => {
  let others = 0;
  for (const plan of PLANS) {
    for (const kind of KINDS) {
      for (const active of ACTIVE) {
        if (kind === "security_alert") continue;
        if (plan === "enterprise" && kind === "incident_update" && active === true) continue;
        const r = await resolve(context(plan, kind, active));
        assertEquals(r.value_key, "default", JSON.stringify(context(plan, kind, active)));
        others++;
      }
    }
  }
  assertEquals(others, 4 * 3 * 3 - 1);
  // Named in the spec: a standard-plan account with an incident update.
  const standard = await resolve(context("standard", "incident_update", true));
  assertEquals(standard.value_key, "default");
  // A string "true" is not the boolean true.
  assertEquals(
    (await resolve({
      account: { plan: "enterprise" },
      notification: { kind: "incident_update" },
      incident: { active: "true" },
    })).value_key,
    "default",
  );
});

Deno.test("example: the default entry is a digest with digest_interval_hours", async () => {
  const r = await resolve({});
  assertEquals(r.value, {
    delivery: "digest",
    channels: ["email", "in_app"],
    digest_interval_hours: 24,
    respect_quiet_hours: true,
    fallback_channel: "email",
  });
  assertEquals(Object.keys(r.value), [
    "delivery",
    "channels",
    "digest_interval_hours",
    "respect_quiet_hours",
    "fallback_channel",
  ]);
});

Deno.test("example: immediate-delivery entries omit digest_interval_hours", async () => {
  for (
    const ctx of [context("free", "security_alert"), context("enterprise", "incident_update", true)]
  ) {
    const r = await resolve(ctx);
    assertEquals(r.value.delivery, "immediate");
    assert(!("digest_interval_hours" in r.value), r.value_key);
  }
});

/** The example's variable file with its rules in the given order (rule tables as text). */
async function withRules(order: (rules: string[]) => string[]): Promise<string> {
  const path = "variables/notification-delivery-policy.toml";
  const text = (await exampleFiles())[path]!;
  const [head, ...rules] = text.split("[[resolve.rule]]\n");
  assertEquals(rules.length, 2);
  const body = order(rules.map((r) => r.trimEnd() + "\n"));
  return exampleCopy({ [path]: head + body.map((r) => "[[resolve.rule]]\n" + r).join("\n") });
}

const OVERLAPPING_RULE = 'qualifier = "enterprise-accounts"\nvalue = "immediate-incident"\n';

Deno.test("example: the two rules of the example never overlap, so swapping them keeps every outcome", async () => {
  const swapped = await openWorkspace(await withRules((r) => [r[1]!, r[0]!]));
  for (const plan of PLANS) {
    for (const kind of KINDS) {
      for (const active of ACTIVE) {
        const ctx = context(plan, kind, active);
        assertEquals(
          (await swapped.resolveVariable(VARIABLE, ctx)).value_key,
          (await resolve(ctx)).value_key,
        );
      }
    }
  }
});

Deno.test("example: reordering rules changes the result when qualifiers overlap", async () => {
  // An enterprise account's security alert satisfies both security-alerts and
  // an added enterprise-accounts rule: the first rule in file order wins.
  const securityFirst = await withRules((r) => [r[0]!, r[1]!, OVERLAPPING_RULE]);
  const enterpriseFirst = await withRules((r) => [OVERLAPPING_RULE, r[0]!, r[1]!]);
  for (const dir of [securityFirst, enterpriseFirst]) {
    assertEquals((await lintWorkspace(dir)).problems, []);
  }
  const ctx = context("enterprise", "security_alert");
  const a = await (await openWorkspace(securityFirst)).resolveVariable(VARIABLE, ctx);
  const b = await (await openWorkspace(enterpriseFirst)).resolveVariable(VARIABLE, ctx);
  assertEquals(a.value_key, "immediate-security");
  assertEquals(b.value_key, "immediate-incident");
});
