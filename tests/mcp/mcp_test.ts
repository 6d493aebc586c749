/**
 * `cfgtool mcp` end to end: a real `cfgtool serve`, the MCP server as a real
 * child process with a token in `CFGTOOL_TOKEN`, and the MCP SDK's own
 * client over stdio. An agent lists and reads flags (rules in words),
 * evaluates and gets the service's answer with the reason, reads versions,
 * a diff and the audit log, and proposes a change: the change request is
 * open and nothing is committed until a person approves and applies it.
 * Bad inputs and refusals are tool errors the agent can read.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Installation, runCli, startInstallation } from "../e2e/installation.ts";
import {
  addNamespaceAdmin,
  assertStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  mint,
} from "../e2e/credentials_fixture.ts";
import { connectMcp, type McpSession } from "./mcp_client.ts";

const WEB = "/api/v1/tenants/acme/namespaces/web";

const NAMESPACE = 'schema_version = 1\n[namespace]\ndescription = "Web shop"\n' +
  "[namespace.environments.production]\n[namespace.environments.staging]\n";
const STAFF = 'schema_version = 1\ndescription = "Our people"\n[[predicate]]\n' +
  'attribute = "user.email"\nop = "ends_with"\nvalue = "@acme.test"\n';
const CHECKOUT = 'schema_version = 1\ndescription = "New checkout"\ntype = "boolean"\n' +
  'default = "off"\n[variations]\non = true\noff = false\n' +
  '[[rule]]\nsegment = "staff"\nvariation = "on"\n' +
  '[[rule]]\nrollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]\n' +
  "[environments.staging]\nenabled = false\n";
const theme = (dflt: string) =>
  `schema_version = 1\ntype = "string"\ndefault = "${dflt}"\n[variations]\nlight = "#fff"\n` +
  'dark = "#000"\n';

const TOOLS = [
  "diff_versions",
  "evaluate",
  "get_change_request",
  "get_flag",
  "list_change_requests",
  "list_flags",
  "list_namespaces",
  "list_tenants",
  "list_versions",
  "propose_change",
  "read_audit",
];

/** Pushes a version as the superadmin. */
async function push(inst: Installation, files: Record<string, string>, message: string) {
  const res = await inst.api("PUT", `${WEB}/manifest`, inst.admin, { files, message });
  assertStatus(res, 201, `push ${message}`);
}

/** The head version, read over the API. */
async function head(inst: Installation): Promise<number> {
  const res = await inst.api("GET", `${WEB}/versions?limit=1`, inst.admin);
  assertStatus(res, 200);
  return res.body.versions[0].version;
}

/** The service's own evaluation, for comparison. */
async function evaluated(
  inst: Installation,
  token: string,
  env: string,
  flag: string,
  context: unknown,
) {
  const res = await inst.api("POST", `${WEB}/environments/${env}/evaluate`, token, {
    flag,
    context,
  });
  assertStatus(res, 200, "evaluate");
  return res.body;
}

Deno.test("cfgtool mcp: an agent reads, explains and proposes; a person approves", async (t) => {
  const inst = await startInstallation();
  const sessions: McpSession[] = [];
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    const base = {
      "namespace.toml": NAMESPACE,
      "segments/staff.toml": STAFF,
      "flags/new-checkout.toml": CHECKOUT,
    };
    await push(inst, { ...base, "flags/theme.toml": theme("light") }, "first");
    await push(inst, { ...base, "flags/theme.toml": theme("dark") }, "dark by default");
    // tom gives the agent its token; ada, whom tom did not appoint, reviews
    const { ada, tom } = await createHumans(inst, { ada: "ada@acme.test", tom: "tom@acme.test" });
    await addNamespaceAdmin(inst, "acme", "web", ada.id);
    await addNamespaceAdmin(inst, "acme", "web", tom.id);
    assertStatus(
      await inst.api("PUT", `${WEB}/protection`, ada.session, {
        environments: { production: { required_approvals: 1 } },
      }),
      200,
      "protect production",
    );
    const b = bodies("acme", "web", "production");
    const [write, read, tenantAdmin] = await Promise.all([
      mint(inst, tom.session, b.write),
      mint(inst, inst.admin, b.read),
      mint(inst, inst.admin, b.tenant),
    ]);
    // the agent's server has defaults; the others name tenant and namespace in each call
    const [agent, reader, admin] = await Promise.all([
      connectMcp(inst.url, write.secret, ["--tenant", "acme", "--namespace", "web"]),
      connectMcp(inst.url, read.secret),
      connectMcp(inst.url, tenantAdmin.secret),
    ]);
    sessions.push(agent, reader, admin);

    await t.step("the tools are listed, read-only ones marked so", async () => {
      const { tools } = await agent.client.listTools();
      assertEquals(tools.map((x) => x.name).sort(), TOOLS);
      for (const tool of tools) {
        const readOnly = tool.name !== "propose_change";
        assertEquals(tool.annotations?.readOnlyHint, readOnly, tool.name);
        assert((tool.description ?? "").length > 20, `${tool.name} has no description`);
        assertEquals(tool.inputSchema.type, "object");
      }
      const propose = tools.find((x) => x.name === "propose_change")!;
      assertStringIncludes(propose.description!, "never commits");
    });

    await t.step("tenants, namespaces and flags as the API has them", async () => {
      const tenants = await agent.ok("list_tenants");
      assertEquals(tenants.tenants.map((x: { slug: string }) => x.slug), ["acme"]);
      const namespaces = await admin.ok("list_namespaces", { tenant: "acme" });
      const web = namespaces.namespaces.find((n: { slug: string }) => n.slug === "web");
      assertEquals([web.version, web.environments], [2, ["production", "staging"]]);
      const flags = await agent.ok("list_flags");
      assertEquals(flags.version, 2);
      assertEquals(flags.environments, ["production", "staging"]);
      assertEquals(flags.flags.map((f: { key: string }) => f.key), ["new-checkout", "theme"]);
      const checkout = flags.flags[0];
      assertEquals([checkout.type, checkout.default, checkout.variations, checkout.rules], [
        "boolean",
        "off",
        ["on", "off"],
        2,
      ]);
      assertEquals(flags.segments, [{ key: "staff", description: "Our people" }]);
      const older = await reader.ok("list_flags", { tenant: "acme", namespace: "web", version: 1 });
      assertEquals(older.flags[1].default, "light");
    });

    await t.step("get_flag says each environment's rules in words, with the file", async () => {
      const flag = await agent.ok("get_flag", { flag: "new-checkout" });
      assertEquals(flag.version, 2);
      assertEquals(flag.variations, { on: true, off: false });
      const [production, staging] = flag.environments;
      assertEquals(production.environment, "production");
      assertEquals(production.rules, [
        'rule 1: if the context is in segment staff (all of: user.email ends with "@acme.test"), ' +
        "serves on",
        "rule 2: every context, split on 25% / off 75% by targeting_key",
      ]);
      assertStringIncludes(production.summary, "Otherwise the default off.");
      assertEquals(
        staging.summary,
        "In staging: off (disabled): every context gets the default off.",
      );
      const manifest = await inst.api("GET", `${WEB}/manifest`, inst.admin, undefined, {
        accept: "application/json",
      });
      assertEquals(flag.file, {
        path: "flags/new-checkout.toml",
        text: manifest.body.files["flags/new-checkout.toml"],
      });
      const one = await agent.ok("get_flag", { flag: "new-checkout", environment: "staging" });
      assertEquals(one.environments.map((e: { environment: string }) => e.environment), [
        "staging",
      ]);
    });

    await t.step("evaluate gives the service's answer and says why", async () => {
      const staff = { targeting_key: "u-1", user: { email: "bo@acme.test" } };
      const got = await agent.ok("evaluate", {
        environment: "production",
        flag: "new-checkout",
        context: staff,
      });
      const api = await evaluated(inst, read.secret, "production", "new-checkout", staff);
      for (const k of ["value", "variation", "reason", "rule_index", "version"]) {
        assertEquals(got[k], api[k], k);
      }
      assertEquals(got.reason, "TARGETING_MATCH");
      assertEquals(got.explanation, "rule 1: segment staff, serves on");
      assertStringIncludes(got.rule, 'user.email ends with "@acme.test"');

      for (const key of ["u-1", "u-2", "u-3", "u-4", "u-5", "u-6"]) {
        const context = { targeting_key: key };
        const split = await reader.ok("evaluate", {
          tenant: "acme",
          namespace: "web",
          environment: "production",
          flag: "new-checkout",
          context,
        });
        const want = await evaluated(inst, read.secret, "production", "new-checkout", context);
        assertEquals([split.value, split.variation, split.reason], [
          want.value,
          want.variation,
          "SPLIT",
        ]);
        assertStringIncludes(split.explanation, `this context's bucket got ${want.variation}`);
      }

      const off = await agent.ok("evaluate", {
        environment: "staging",
        flag: "new-checkout",
        context: staff,
      });
      assertEquals([off.value, off.reason], [false, "DISABLED"]);
      assertStringIncludes(off.explanation, "disabled in staging");
    });

    await t.step("versions, a diff in words, and the audit log", async () => {
      const versions = await agent.ok("list_versions", { limit: 2 });
      const api = await inst.api("GET", `${WEB}/versions?limit=2`, inst.admin);
      assertEquals(versions.versions, api.body.versions);
      assertEquals(versions.next, api.body.next);
      const diff = await agent.ok("diff_versions", { from: 1 });
      assertEquals([diff.from, diff.to], [1, 2]);
      assertEquals(diff.lines, ["flag theme: default: light → dark"]);
      assertEquals(diff.files, { added: [], removed: [], changed: ["flags/theme.toml"] });
      const audit = await admin.ok("read_audit", {
        tenant: "acme",
        namespace: "web",
        type: "manifest.pushed",
      });
      const apiAudit = await inst.api(
        "GET",
        "/api/v1/audit?tenant=acme&namespace=web&type=manifest.pushed",
        inst.admin,
      );
      assertEquals(audit.entries, apiAudit.body.entries);
      assertEquals(audit.entries.length, 2);
    });

    let id = "";
    await t.step("propose_change opens a change request and commits nothing", async () => {
      const got = await agent.ok("propose_change", {
        message: "turn the new checkout off in production",
        edits: [{
          kind: "toggle",
          flag: "new-checkout",
          environment: "production",
          enabled: false,
        }],
      });
      id = got.id;
      assert(id.startsWith("cr_"), id);
      assertEquals([got.status, got.base_version, got.required_approvals], ["open", 2, 1]);
      assertEquals(got.impact, ["production"]);
      assertEquals(got.changed_paths, ["flags/new-checkout.toml"]);
      assertEquals(got.lines, ["flag new-checkout in production added: enabled: true → false"]);
      assertEquals(got.url, `${inst.url}/ui/t/acme/ns/web/changes/${id}`);
      assertStringIncludes(got.next, "1 approval");
      assertEquals(await head(inst), 2);

      const api = await inst.api("GET", `${WEB}/change-requests/${id}`, inst.admin);
      assertEquals(api.body.change_request.status, "open");
      const shown = await agent.ok("get_change_request", { id });
      assertEquals(shown.change_request.status, "open");
      assertEquals(shown.lines, got.lines);
      const listed = await agent.ok("list_change_requests", { status: ["open"] });
      assertEquals(listed.change_requests.map((r: { id: string }) => r.id), [id]);
    });

    await t.step("a person approves and applies it; then it is in force", async () => {
      assertStatus(
        await inst.api("POST", `${WEB}/change-requests/${id}/approve`, ada.session, {}),
        200,
        "approve",
      );
      const applied = await inst.api("POST", `${WEB}/change-requests/${id}/apply`, ada.session, {});
      assertStatus(applied, 201, "apply");
      assertEquals(await head(inst), 3);
      const context = { user: { email: "bo@acme.test" } };
      const now = await agent.ok("evaluate", {
        environment: "production",
        flag: "new-checkout",
        context,
      });
      assertEquals([now.value, now.reason, now.version], [false, "DISABLED", 3]);
      const shown = await agent.ok("get_change_request", { id });
      assertEquals(shown.change_request.status, "applied");
    });

    await t.step("whole files can be proposed too", async () => {
      const got = await agent.ok("propose_change", {
        message: "a beta flag",
        files: { "flags/beta.toml": theme("light"), "flags/theme.toml": null },
      });
      assertEquals(got.changed_paths, ["flags/beta.toml", "flags/theme.toml"]);
      assertEquals(got.status, "open");
      assertEquals(await head(inst), 3);
      const cr = await inst.api("GET", `${WEB}/change-requests/${got.id}`, inst.admin);
      assertEquals(cr.body.files, { "flags/beta.toml": theme("light"), "flags/theme.toml": null });
    });

    await t.step("bad inputs are tool errors that say what is wrong", async () => {
      assertStringIncludes(
        await agent.error("evaluate", { environment: "production", flag: "Not A Key" }),
        "flag",
      );
      assertStringIncludes(
        await agent.error("list_versions", { limit: 0 }),
        "Input validation error",
      );
      assertStringIncludes(
        await agent.error("propose_change", { message: "nothing" }),
        "Nothing to propose",
      );
      assertStringIncludes(
        await agent.error("propose_change", { message: "", edits: [] }),
        "message",
      );
      assertStringIncludes(
        await agent.error("get_flag", { flag: "nope" }),
        "No flag nope in acme/web version 3 (its flags: new-checkout, theme)",
      );
      assertStringIncludes(
        await agent.error("evaluate", { environment: "qa", flag: "theme" }),
        "has no environment qa",
      );
      const broken = await agent.error("propose_change", {
        message: "broken",
        files: { "flags/theme.toml": 'schema_version = 1\ntype = "string"\ndefault = "x"\n' },
      });
      assertStringIncludes(broken, "invalid_manifest");
      assertStringIncludes(broken, "flags/theme.toml");
      const weights = await agent.error("propose_change", {
        message: "weights on a rule that is no rollout",
        edits: [{ kind: "weights", flag: "new-checkout", rule: 1, weights: { on: 50, off: 50 } }],
      });
      assertStringIncludes(weights, "invalid_request");
      assertStringIncludes(
        await agent.error("propose_change", {
          message: "same",
          edits: [{ kind: "default", flag: "theme", variation: "dark" }],
        }),
        "changes nothing",
      );
      assertStringIncludes(await reader.error("list_flags", {}), "tenant is required");
      assertStringIncludes(
        await reader.error("list_flags", { tenant: "acme" }),
        "namespace is required",
      );
      const unknown = await agent.call("no_such_tool", {});
      assertEquals(unknown.isError, true);
      assertEquals(await head(inst), 3);
    });

    await t.step("a credential without the right gets a clear tool error", async () => {
      const denied = await reader.error("propose_change", {
        tenant: "acme",
        namespace: "web",
        message: "may I?",
        edits: [{ kind: "toggle", flag: "theme", environment: "staging", enabled: false }],
      });
      assertStringIncludes(denied, "forbidden: ");
      assertStringIncludes(denied, "may not do this");
      const audit = await agent.error("read_audit", {});
      assertStringIncludes(audit, "forbidden: ");
      const elsewhere = await agent.error("list_flags", { namespace: "api" });
      assertStringIncludes(elsewhere, "bound to namespace web");
      assertEquals(await head(inst), 3);
    });
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
    await inst.close();
  }
});

Deno.test("cfgtool mcp without a credential, or with a bad default, is a usage error", async () => {
  const none = await runCli(["mcp", "--server", "http://127.0.0.1:9"]);
  assertEquals(none.code, 2, none.stderr);
  assertStringIncludes(none.stderr, "no credential");
  assertEquals(none.stdout, "");
  const bad = await runCli(["mcp", "--server", "http://127.0.0.1:9", "--tenant", "Not A Slug"], {
    env: { CFGTOOL_TOKEN: "svc_read_x" },
  });
  assertEquals(bad.code, 2, bad.stderr);
  assertStringIncludes(bad.stderr, "--tenant must be a slug");
});

Deno.test("cfgtool mcp --help names the tools and says proposals need a person", async () => {
  const help = await runCli(["mcp", "--help"]);
  assertEquals(help.code, 0, help.stderr);
  assertStringIncludes(help.stdout, "propose_change");
  assertStringIncludes(help.stdout, "never commits");
  assertStringIncludes(help.stdout, "CFGTOOL_TOKEN");
});
