/**
 * The console's people page model (lib/services/people.ts): each part as
 * the reader may read it through the API, the people named only within
 * the tenant, and the admin a removal asks about.
 */
import { assertEquals, assertRejects } from "../assert.ts";
import { type SessionPrincipal, sessionPrincipal } from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import { setLoginPolicy } from "../../lib/services/login_policies.ts";
import { addNamespaceAdmin } from "../../lib/services/namespaces.ts";
import { adminToRemove, tenantPeople } from "../../lib/services/people.ts";
import { addTenantAdmin } from "../../lib/services/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { serviceTest, type ServiceWorld } from "./world.ts";

const ctx = { requestId: "req-people" };

/** The people of the test: acme's admin, web's admin, a member of acme, other's admin. */
interface People {
  ana: SessionPrincipal;
  bo: SessionPrincipal;
  cy: SessionPrincipal;
  eve: SessionPrincipal;
}

async function people(w: ServiceWorld): Promise<People> {
  const sign = async (email: string, tenants: string[]) => {
    const user = await createUser(w.kv, { email });
    const login_method = tenants.length === 0 ? "admin" : "oidc";
    const { session } = await createSession(w.kv, w.key, { user: user.id, tenants, login_method });
    return sessionPrincipal(session);
  };
  const p = {
    ana: await sign("ana@acme.test", []),
    bo: await sign("bo@acme.test", []),
    cy: await sign("cy@acme.test", ["acme"]),
    eve: await sign("eve@other.test", []),
  };
  await addTenantAdmin(w.services, w.superadmin, "acme", p.ana.user_id, ctx);
  await addNamespaceAdmin(w.services, w.superadmin, "acme", "web", p.bo.user_id, ctx);
  await addTenantAdmin(w.services, w.superadmin, "other", p.eve.user_id, ctx);
  return p;
}

serviceTest("a tenant admin sees and may change every list, and the tenant's people", async (w) => {
  const { ana, bo } = await people(w);
  const model = await tenantPeople(w.services, ana, "acme");
  assertEquals(model.tenantAdmins.map((a) => [a.user_id, a.email]), [
    [ana.user_id, "ana@acme.test"],
  ]);
  assertEquals(model.mayChangeTenantAdmins, true);
  assertEquals(
    model.namespaces.map((ns) => [ns.slug, ns.admins.map((a) => a.email), ns.mayChange]),
    [
      ["web", ["bo@acme.test"], true],
    ],
  );
  assertEquals(model.members?.map((m) => [m.id, m.email, m.roles]), [
    [ana.user_id, "ana@acme.test", ["tenant admin"]],
    [bo.user_id, "bo@acme.test", ["admin of web"]],
  ]);
  assertEquals(model.policy, null);
  assertEquals(model.policySetBy, "");
  assertEquals(model.changed, undefined);
});

serviceTest(
  "a member reads the admin lists but not the people, the policy or changes",
  async (w) => {
    const { bo, cy } = await people(w);
    const model = await tenantPeople(w.services, cy, "acme", {
      changed: { user: bo.user_id, namespace: "web" },
    });
    assertEquals(model.tenantAdmins.length, 1);
    assertEquals(model.mayChangeTenantAdmins, false);
    assertEquals(model.namespaces.map((ns) => ns.mayChange), [false]);
    assertEquals(model.members, null);
    assertEquals(model.policy, "hidden");
    assertEquals(model.changed, undefined, "a change the reader may not make is not named");
  },
);

serviceTest(
  "another tenant's admin may not read the page: 403; an unknown tenant is 404",
  async (w) => {
    const { eve } = await people(w);
    await assertRejects(() => tenantPeople(w.services, eve, "acme"), ForbiddenError);
    const err = await assertRejects(
      () => tenantPeople(w.services, w.superadmin, "nope"),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
  },
);

serviceTest(
  "a change and the policy's setter are named by email only within the tenant",
  async (w) => {
    const { ana, bo, eve } = await people(w);
    const named = (user: string, namespace?: string) =>
      tenantPeople(w.services, ana, "acme", { changed: { user, namespace } });
    assertEquals((await named(bo.user_id, "web")).changed, "bo@acme.test");
    assertEquals((await named(eve.user_id)).changed, eve.user_id, "another tenant's person");
    await setLoginPolicy(w.services, ana, "acme", { method: "email", domains: ["acme.test"] }, ctx);
    const model = await tenantPeople(w.services, ana, "acme");
    assertEquals(
      model.policy !== null && model.policy !== "hidden" && model.policy.policy.method,
      "email",
    );
    assertEquals(model.policySetBy, "ana@acme.test");
  },
);

serviceTest(
  "the admin a removal asks about: 403 without the right, 404 for no admin",
  async (w) => {
    const { ana, bo, cy, eve } = await people(w);
    assertEquals(await adminToRemove(w.services, ana, "acme", "web", bo.user_id), "bo@acme.test");
    assertEquals(await adminToRemove(w.services, ana, "acme", null, ana.user_id), "ana@acme.test");
    await assertRejects(
      () => adminToRemove(w.services, cy, "acme", "web", bo.user_id),
      ForbiddenError,
    );
    const err = await assertRejects(
      () => adminToRemove(w.services, ana, "acme", null, eve.user_id),
      NotFoundError,
    );
    assertEquals(err.code, "admin_not_found");
    assertEquals(err.message, "That person is not a tenant admin of acme");
  },
);
