/**
 * Change requests end to end: a real `cfgtool serve` on a KV file and the
 * real CLI. A protected environment refuses a direct push; `push
 * --propose` opens a request; a second person approves it; its author
 * applies it; the API speaks the documented errors; a scheduled apply
 * crosses a server restart; two processes started together on the same
 * KV file run one scheduled apply once.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Installation, runCli, startInstallation } from "./installation.ts";
import { startServer } from "./server_process.ts";
import {
  addNamespaceAdmin,
  assertError,
  createHumans,
  createNamespace,
  createTenant,
  type Human,
} from "./credentials_fixture.ts";

const NS_TOML = "schema_version = 1\n[namespace.environments.production]\n" +
  "[namespace.environments.staging]\n";
const flag = (on: number, stagingOff = false) =>
  `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n` +
  `[[rule]]\nrollout = [ { variation = "on", weight = ${on} }, { variation = "off", weight = ${
    100 - on
  } } ]\n` + (stagingOff ? "[environments.staging]\nenabled = false\n" : "");
const WEB = "/api/v1/tenants/acme/namespaces/web";

/** Writes a manifest directory with flag `a` at `on`% and returns its path. */
async function manifestDir(on: number, stagingOff = false): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-change-" });
  await Deno.mkdir(`${dir}/flags`);
  await Deno.writeTextFile(`${dir}/namespace.toml`, NS_TOML);
  await Deno.writeTextFile(`${dir}/flags/a.toml`, flag(on, stagingOff));
  return dir;
}

/** Runs the CLI against the installation with a credential. */
function cli(inst: Installation | { url: string }, token: string, args: string[]) {
  return runCli([...args, "--server", inst.url, "--token", token]);
}

const scope = ["--tenant", "acme", "--namespace", "web"];

async function setUp(inst: Installation): Promise<{ ada: Human; rev: Human }> {
  await createTenant(inst, "acme");
  await createNamespace(inst, "acme", "web");
  const h = await createHumans(inst, { ada: "ada@acme.test", rev: "rev@acme.test" });
  await addNamespaceAdmin(inst, "acme", "web", h.ada.id);
  await addNamespaceAdmin(inst, "acme", "web", h.rev.id);
  const first = await cli(inst, inst.admin, ["push", await manifestDir(0), ...scope]);
  assertEquals(first.code, 0, first.stderr);
  const protect = await cli(inst, h.ada.session, [
    "namespace",
    "protect",
    "web",
    "--tenant",
    "acme",
    "--env",
    "production",
    "--approvals",
    "1",
  ]);
  assertEquals(protect.code, 0, protect.stderr);
  assertEquals(protect.stdout.trim(), "production: 1 approval");
  return h;
}

async function headVersion(inst: { url: string }, token: string): Promise<number> {
  const res = await fetch(`${inst.url}${WEB}/versions?limit=1`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await res.json()).versions[0].version;
}

Deno.test("e2e change requests: protect, propose, approve, apply, refuse", async (t) => {
  const inst = await startInstallation();
  try {
    const { ada, rev } = await setUp(inst);
    let id = "";

    await t.step("a direct push into production is refused with approval_required", async () => {
      const res = await cli(inst, ada.session, ["push", await manifestDir(25), ...scope]);
      assertEquals(res.code, 1, res.stderr);
      assertStringIncludes(res.stderr, "production");
      assertStringIncludes(res.stderr, "change request");
      assertEquals(await headVersion(inst, inst.admin), 1);
    });

    await t.step("push --propose opens a change request", async () => {
      const res = await cli(inst, ada.session, [
        "push",
        await manifestDir(25),
        ...scope,
        "--propose",
        "--message",
        "a to 25%",
        "--json",
      ]);
      assertEquals(res.code, 0, res.stderr);
      const cr = JSON.parse(res.stdout).change_request;
      id = cr.id;
      assertEquals([cr.status, cr.impact, cr.required_approvals], [
        "open",
        ["production", "staging"],
        1,
      ]);
      assertEquals(await headVersion(inst, inst.admin), 1);
    });

    await t.step("the author cannot approve; applying before approval is refused", async () => {
      const own = await cli(inst, ada.session, ["change", "approve", id, ...scope]);
      assertEquals(own.code, 1, own.stderr);
      assertStringIncludes(own.stderr, "author");
      const early = await cli(inst, ada.session, ["change", "apply", id, ...scope]);
      assertEquals(early.code, 1, early.stderr);
      assertStringIncludes(early.stderr, "open");
      const byToken = await inst.api("POST", `${WEB}/change-requests/${id}/approve`, inst.admin);
      assertError(byToken, 403, "forbidden");
      assertEquals(await headVersion(inst, inst.admin), 1);
    });

    await t.step("show prints the value diff and what the reader may do", async () => {
      const res = await cli(inst, rev.session, ["change", "show", id, ...scope, "--diff"]);
      assertEquals(res.code, 0, res.stderr);
      assertStringIncludes(res.stdout, "flag a");
      assertStringIncludes(res.stdout, "25%");
      assertStringIncludes(res.stdout, '+rollout = [ { variation = "on", weight = 25 }');
      assertStringIncludes(res.stdout, "you may: approve, reject, comment");
    });

    await t.step("a second person approves; the author applies: one version, audited", async () => {
      const ok = await cli(inst, rev.session, [
        "change",
        "approve",
        id,
        ...scope,
        "--comment",
        "ship it",
      ]);
      assertEquals(ok.code, 0, ok.stderr);
      assertStringIncludes(ok.stdout, "approved");
      const applied = await cli(inst, ada.session, ["change", "apply", id, ...scope]);
      assertEquals(applied.code, 0, applied.stderr);
      assertEquals(applied.stdout.trim(), `version 2: ${id} applied`);
      const audit = await inst.api(
        "GET",
        "/api/v1/audit?tenant=acme&type=manifest.pushed&limit=1",
        inst.admin,
      );
      assertEquals(audit.body.entries[0].details.change_request_id, id);
      const list = await cli(inst, ada.session, ["change", "list", ...scope, "--json"]);
      const page = JSON.parse(list.stdout);
      assertEquals(page.items.map((r: { status: string }) => r.status), ["applied"]);
    });

    await t.step("bad input: clear codes, never a 5xx, nothing written", async () => {
      const unknown = await inst.api(
        "GET",
        `${WEB}/change-requests/cr_01J00000000000000000000000`,
        ada.session,
      );
      assertError(unknown, 404, "change_request_not_found");
      const badId = await inst.api("GET", `${WEB}/change-requests/nope`, ada.session);
      assertError(badId, 404, "change_request_not_found");
      const invalid = await inst.api("POST", `${WEB}/change-requests`, ada.session, {
        files: { "namespace.toml": "schema_version = 99\n" },
        message: "broken",
      });
      assertError(invalid, 422, "invalid_manifest");
      assert(invalid.body.details.problems.length > 0);
      const range = await inst.api("PUT", `${WEB}/protection`, ada.session, {
        environments: { production: { required_approvals: 9 } },
      });
      assertError(range, 400, "invalid_request");
      const again = await inst.api("POST", `${WEB}/change-requests/${id}/apply`, ada.session);
      assertError(again, 409, "change_request_state");
      const past = await cli(inst, ada.session, [
        "push",
        await manifestDir(60),
        ...scope,
        "--propose",
        "--message",
        "60",
        "--json",
      ]);
      const next = JSON.parse(past.stdout).change_request.id;
      await cli(inst, rev.session, ["change", "approve", next, ...scope]);
      const inPast = await inst.api("POST", `${WEB}/change-requests/${next}/apply`, ada.session, {
        at: "2020-01-01T00:00:00Z",
      });
      assertError(inPast, 400, "invalid_request");
      assertEquals(await headVersion(inst, inst.admin), 2);
      const statuses = await inst.api("GET", `${WEB}/change-requests?status=nope`, ada.session);
      assertError(statuses, 400, "invalid_request");
    });

    await t.step(
      "a superadmin's break-glass header commits, with the reason in the audit",
      async () => {
        const res = await inst.api("PUT", `${WEB}/manifest`, inst.admin, {
          files: { "namespace.toml": NS_TOML, "flags/a.toml": flag(90) },
        }, { "x-cfgtool-bypass-protection": "incident 7" });
        assertEquals(res.status, 201, JSON.stringify(res.body));
        const audit = await inst.api(
          "GET",
          "/api/v1/audit?tenant=acme&type=manifest.protection_bypassed",
          inst.admin,
        );
        assertEquals(audit.body.entries[0].details.reason, "incident 7");
        const byAdmin = await inst.api("PUT", `${WEB}/manifest`, ada.session, {
          files: { "namespace.toml": NS_TOML, "flags/a.toml": flag(91) },
        }, { "x-cfgtool-bypass-protection": "me too" });
        assertError(byAdmin, 403, "forbidden");
      },
    );

    await t.step("a rollout's approval runs its first step at once, as a version", async () => {
      const opened = await cli(inst, ada.session, [
        "change",
        "rollout",
        "a",
        ...scope,
        "--env",
        "production",
        "--steps",
        "50,100",
        "--every",
        "1h",
        "--message",
        "a for everyone",
        "--json",
      ]);
      assertEquals(opened.code, 0, opened.stderr);
      const cr = JSON.parse(opened.stdout).change_request;
      assertEquals([cr.status, cr.plan.steps], ["open", [50, 100]]);
      const before = await headVersion(inst, inst.admin);
      const approved = await cli(inst, rev.session, ["change", "approve", cr.id, ...scope]);
      assertEquals(approved.code, 0, approved.stderr);
      assertStringIncludes(approved.stdout, "scheduled");
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && (await headVersion(inst, inst.admin)) === before) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const head = await inst.api("GET", `${WEB}/manifest`, inst.admin, undefined, {
        accept: "application/json",
      });
      assertEquals(head.body.version, before + 1);
      assertEquals(head.body.files["flags/a.toml"], flag(50));
      const shown = await cli(inst, ada.session, ["change", "show", cr.id, ...scope, "--json"]);
      const now = JSON.parse(shown.stdout).change_request;
      assertEquals([now.status, now.plan.done], ["scheduled", 1]);
      const cancelled = await cli(inst, ada.session, ["change", "cancel", cr.id, ...scope]);
      assertEquals(cancelled.code, 0, cancelled.stderr);
      assertStringIncludes(cancelled.stdout, "approved");
    });
  } finally {
    await inst.close();
  }
});

Deno.test("e2e a scheduled apply crosses a server restart", async () => {
  const inst = await startInstallation();
  let later: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const { ada, rev } = await setUp(inst);
    const opened = await cli(inst, ada.session, [
      "push",
      await manifestDir(40),
      ...scope,
      "--propose",
      "--message",
      "40 tonight",
      "--json",
    ]);
    const id = JSON.parse(opened.stdout).change_request.id;
    assertEquals((await cli(inst, rev.session, ["change", "approve", id, ...scope])).code, 0);
    const at = new Date(Date.now() + 3000).toISOString();
    const scheduled = await cli(inst, ada.session, ["change", "apply", id, ...scope, "--at", at]);
    assertEquals(scheduled.code, 0, scheduled.stderr);
    assertStringIncludes(scheduled.stdout, "scheduled");
    await inst.server.stop(); // nothing runs it now
    await new Promise((r) => setTimeout(r, 3500));
    later = await startServer({ kv: inst.kvPath });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await headVersion(later, inst.admin)) < 2) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assertEquals(await headVersion(later, inst.admin), 2);
    const shown = await cli(later, ada.session, ["change", "show", id, ...scope, "--json"]);
    const cr = JSON.parse(shown.stdout).change_request;
    assertEquals([cr.status, cr.applied_version], ["applied", 2]);
  } finally {
    await later?.stop();
    await Deno.remove(inst.dir, { recursive: true });
  }
});

Deno.test("e2e two processes starting together run one scheduled apply once", async () => {
  const inst = await startInstallation();
  const servers: Awaited<ReturnType<typeof startServer>>[] = [];
  try {
    const { ada, rev } = await setUp(inst);
    const opened = await cli(inst, ada.session, [
      "push",
      await manifestDir(70),
      ...scope,
      "--propose",
      "--message",
      "70",
      "--json",
    ]);
    const id = JSON.parse(opened.stdout).change_request.id;
    assertEquals((await cli(inst, rev.session, ["change", "approve", id, ...scope])).code, 0);
    const at = new Date(Date.now() + 2000).toISOString();
    assertEquals(
      (await cli(inst, ada.session, ["change", "apply", id, ...scope, "--at", at])).code,
      0,
    );
    await inst.server.stop();
    // At-least-once: the queue may deliver a message twice. Enqueue a second copy of the
    // scheduled apply, as a redelivery would, so both processes have one to run.
    const kv = await Deno.openKv(inst.kvPath);
    const record = (await kv.get<{ schedule_id: string }>(["change_request", "acme", "web", id]))
      .value!;
    await kv.enqueue({
      kind: "change.apply",
      tenant: "acme",
      namespace: "web",
      id,
      schedule_id: record.schedule_id,
    });
    kv.close();
    await new Promise((r) => setTimeout(r, 2500));
    servers.push(
      ...await Promise.all([startServer({ kv: inst.kvPath }), startServer({ kv: inst.kvPath })]),
    );
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (await headVersion(servers[0]!, inst.admin)) < 2) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1500)); // time for the second copy to run
    assertEquals(await headVersion(servers[1]!, inst.admin), 2);
    const audit = await fetch(
      `${servers[1]!.url}/api/v1/audit?tenant=acme&type=change_request.applied`,
      { headers: { authorization: `Bearer ${inst.admin}` } },
    );
    assertEquals((await audit.json()).entries.length, 1);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await Deno.remove(inst.dir, { recursive: true });
  }
});
