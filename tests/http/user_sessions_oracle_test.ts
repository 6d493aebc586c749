/**
 * `DELETE /api/v1/users/{id}/sessions` tells nobody who has an account:
 * a caller who may end no one else's sessions is refused before the user
 * is looked up, with a message that names nobody, and an admin of another
 * tenant gets for a person of this tenant exactly the answer an unknown id
 * gets; `DELETE /api/v1/sessions/{id}` answers someone else's session as
 * one that does not exist. Nothing is ended by a refused request.
 */
import { assert, assertEquals } from "../assert.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { signInTest, type SignInWorld } from "./auth/world.ts";
import { assertSameAnswer, mint, publicNamespace, tenantAdmin, UNKNOWN_USER } from "./oracles.ts";

/** Ends the sessions of `userId` with `bearer`. */
function endAll(w: SignInWorld, bearer: string, userId: string) {
  return w.json("DELETE", `/api/v1/users/${userId}/sessions`, { bearer });
}

/** Asserts that ana's session still works and that no session was ended. */
async function nothingEnded(w: SignInWorld, secret: string): Promise<void> {
  assertEquals((await w.call("GET", "/api/v1/me", { bearer: secret })).status, 200);
  assertEquals((await listAudit(w.kv, { type: "session.revoked" })).items, []);
}

signInTest(
  "a caller who may end no one else's sessions is refused before the user is looked up",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    await publicNamespace(w, "other", "app");
    const client = await mint(w, {
      type: "namespace-client",
      name: "site",
      tenant_slug: "other",
      namespace_slug: "app",
      environment_slug: "live",
    });
    const read = await mint(w, {
      type: "namespace-read",
      name: "runtime",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    const member = await w.person("eve@other.test", "other");
    const callers = [
      ["namespace-client token of another tenant", client.secret],
      ["namespace-read token of another tenant", read.secret],
      ["member of another tenant", member.secret],
    ] as const;
    for (const [what, bearer] of callers) {
      const real = await endAll(w, bearer, ana.user_id);
      const none = await endAll(w, bearer, UNKNOWN_USER);
      assertEquals([real.status, real.body.code], [403, "forbidden"], what);
      assert(!JSON.stringify(real.body).includes("ana@acme.test"), `${what}: names ana`);
      assertSameAnswer(real, none, [[ana.user_id, UNKNOWN_USER]], what);
    }
    await nothingEnded(w, ana.secret);
  },
);

signInTest(
  "an admin of another tenant gets the same 404 for a person of this tenant as for nobody",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    const token = await mint(w, { type: "tenant-admin", name: "ops", tenant_slug: "other" });
    const human = await tenantAdmin(w, "olga@other.test", "other");
    const callers = [["token", token.secret], ["person", human.secret]] as const;
    for (const [what, bearer] of callers) {
      const real = await endAll(w, bearer, ana.user_id);
      const none = await endAll(w, bearer, UNKNOWN_USER);
      assertEquals([real.status, real.body.code], [404, "user_not_found"], `${what} of other`);
      assert(!JSON.stringify(real.body).includes("ana@acme.test"), what);
      assertSameAnswer(real, none, [[ana.user_id, UNKNOWN_USER]], `${what} of other`);
    }
    await nothingEnded(w, ana.secret);
  },
);

signInTest(
  "a tenant admin still ends the sessions of the tenant's people, and only those",
  async (w) => {
    const boss = await tenantAdmin(w, "boss@acme.test", "acme");
    const cy = await w.person("cy@both.test", "acme");
    const cyElsewhere = await w.person("cy@both.test", "other");
    const ended = await endAll(w, boss.secret, cy.user_id);
    assertEquals([ended.status, ended.body.revoked_sessions], [200, [cy.session_id]]);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: cy.secret })).status, 401);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: cyElsewhere.secret })).status, 200);
    // an admin of acme with no session open: nothing to end, but a person of acme
    const dee = await w.person("dee@acme.test", "other");
    await w.json("POST", "/api/v1/tenants/acme/admins", {
      bearer: w.admin,
      json: { user_id: dee.user_id },
    });
    const none = await endAll(w, boss.secret, dee.user_id);
    assertEquals([none.status, none.body.revoked_sessions], [200, []]);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: dee.secret })).status, 200);
    // people end their own sessions without any admin role
    const own = await endAll(w, cyElsewhere.secret, cy.user_id);
    assertEquals([own.status, own.body.revoked_sessions], [200, [cyElsewhere.session_id]]);
  },
);

signInTest("someone else's session answers exactly as a session that does not exist", async (w) => {
  const ana = await w.person("ana@acme.test", "acme");
  const boss = await tenantAdmin(w, "olga@other.test", "other");
  const token = await mint(w, { type: "tenant-admin", name: "ops", tenant_slug: "other" });
  const unknown = "ssn_01JQ0000000000000000000000";
  for (const [what, bearer] of [["person", boss.secret], ["token", token.secret]] as const) {
    const real = await w.json("DELETE", `/api/v1/sessions/${ana.session_id}`, { bearer });
    const none = await w.json("DELETE", `/api/v1/sessions/${unknown}`, { bearer });
    assertEquals([real.status, real.body.code], [404, "session_not_found"], what);
    assertSameAnswer(real, none, [[ana.session_id, unknown]], what);
  }
  await nothingEnded(w, ana.secret);
});
