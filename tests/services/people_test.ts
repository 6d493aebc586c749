/**
 * The console's people page model (lib/services/people.ts): each part as
 * the reader may read it through the API, the people named only within
 * the tenant, and the admin a removal asks about.
 */
import { assertEquals, assertRejects } from "../assert.ts";
import { type SessionPrincipal, sessionPrincipal } from "../../lib/auth/principal.ts";
import { createSession, deleteSession } from "../../lib/auth/sessions.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../lib/errors.ts";
import { setLoginPolicy } from "../../lib/services/login_policies.ts";
import { addNamespaceAdmin } from "../../lib/services/namespaces.ts";
import { adminToRemove, listTenantPeople, tenantPeople } from "../../lib/services/people.ts";
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
  const { ana, bo, cy } = await people(w);
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
  assertEquals(model.people?.items.map((m) => [m.id, m.email, m.roles]), [
    [ana.user_id, "ana@acme.test", [{ role: "tenant_admin", via: "list" }]],
    [bo.user_id, "bo@acme.test", [{ role: "namespace_admin", namespace: "web" }]],
    [cy.user_id, "cy@acme.test", [{ role: "member" }]],
  ]);
  assertEquals(model.people?.next, null);
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
    assertEquals(model.people, null);
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

/** Every entry of the store, to tell that a call wrote nothing. */
async function everything(kv: Deno.Kv): Promise<string> {
  const entries = await Array.fromAsync(kv.list({ prefix: [] }));
  return JSON.stringify(
    entries.map((e) => [e.key, e.value, e.versionstamp]),
    (_, v) => typeof v === "bigint" ? `${v}n` : v,
  );
}

/** A person who signs in to `tenant` (by OIDC, in a browser, with `groups`). */
async function signedIn(w: ServiceWorld, email: string, tenant: string, groups: string[] = []) {
  const user = await createUser(w.kv, { email });
  const { session } = await createSession(w.kv, w.key, {
    user: user.id,
    tenants: [tenant],
    login_method: "oidc",
    client: "browser",
    groups,
  });
  return sessionPrincipal(session);
}

serviceTest(
  "listTenantPeople() lists everyone who signed in and every admin, with sign-ins and roles",
  async (w) => {
    const { ana, bo, cy } = await people(w);
    const dee = await signedIn(w, "dee@acme.test", "acme");
    await signedIn(w, "fay@other.test", "other"); // another tenant's person
    const page = await listTenantPeople(w.services, ana, "acme");
    assertEquals(page.next, null);
    assertEquals(page.items.map((p) => [p.email, p.roles]), [
      ["ana@acme.test", [{ role: "tenant_admin", via: "list" }]],
      ["bo@acme.test", [{ role: "namespace_admin", namespace: "web" }]],
      ["cy@acme.test", [{ role: "member" }]],
      ["dee@acme.test", [{ role: "member" }]],
    ]);
    // ana and bo signed in on the server host only: admins who never signed in to acme
    const [a, b, c, d] = page.items;
    for (const never of [a!, b!]) {
      const signIn = [never.last_sign_in_at, never.last_sign_in_method, never.last_sign_in_client];
      assertEquals(signIn, [null, null, null]);
    }
    assertEquals([b!.id, c!.id, d!.id], [bo.user_id, cy.user_id, dee.user_id]);
    assertEquals(c!.last_sign_in_at, cy.since);
    assertEquals(d!.last_sign_in_method, "oidc");
    assertEquals(d!.last_sign_in_client, "browser");
    assertEquals(d!.first_sign_in_at, d!.last_sign_in_at);
    assertEquals(Object.keys(d!).sort(), [
      "created_at",
      "email",
      "first_sign_in_at",
      "id",
      "last_sign_in_at",
      "last_sign_in_client",
      "last_sign_in_method",
      "roles",
    ]);
  },
);

serviceTest("listTenantPeople() pages: 50 by default, at most 500, after a cursor", async (w) => {
  for (let i = 0; i < 55; i++) {
    await signedIn(w, `p${String(i).padStart(2, "0")}@acme.test`, "acme");
  }
  const first = await listTenantPeople(w.services, w.superadmin, "acme");
  assertEquals(first.items.length, 50);
  assertEquals(first.next, "p49@acme.test");
  const rest = await listTenantPeople(w.services, w.superadmin, "acme", { after: first.next! });
  assertEquals(
    rest.items.map((p) => p.email),
    ["p50", "p51", "p52", "p53", "p54"].map((p) => `${p}@acme.test`),
  );
  assertEquals(rest.next, null);
  const small = await listTenantPeople(w.services, w.superadmin, "acme", {
    limit: 2,
    after: "p10@acme.test",
  });
  assertEquals(small.items.map((p) => p.email), ["p11@acme.test", "p12@acme.test"]);
  assertEquals(small.next, "p12@acme.test");
  const all = await listTenantPeople(w.services, w.superadmin, "acme", { limit: 9999 });
  assertEquals(all.items.length, 55, "capped at 500, and there are 55");
  const err = await assertRejects(
    () => listTenantPeople(w.services, w.superadmin, "acme", { limit: 0 }),
    InvalidRequestError,
  );
  assertEquals(err.message, "Cannot use limit 0: it must be a positive integer");
  // an admin who never signed in takes their place in email order, across pages
  const admin = await createUser(w.kv, { email: "p305@acme.test" });
  await addTenantAdmin(w.services, w.superadmin, "acme", admin.id, ctx);
  const around = await listTenantPeople(w.services, w.superadmin, "acme", {
    limit: 2,
    after: "p29@acme.test",
  });
  // (byte order, as the store's keys: "5" sorts before "@")
  assertEquals(around.items.map((p) => p.email), ["p305@acme.test", "p30@acme.test"]);
  const then = await listTenantPeople(w.services, w.superadmin, "acme", {
    limit: 1,
    after: around.next!,
  });
  assertEquals(then.items.map((p) => p.email), ["p31@acme.test"]);
});

serviceTest(
  "listTenantPeople() for a superadmin and a tenant admin, by list, group or token; 403 for anyone else, nothing written",
  async (w) => {
    const { ana, bo, cy, eve } = await people(w);
    await setLoginPolicy(w.services, w.superadmin, "acme", {
      method: "oidc",
      issuer: "https://idp.acme.test",
      client_id: "cfgtool",
      client_secret_ref: "env:ACME_SECRET",
      admin_groups: ["ops"],
    }, ctx);
    const gus = await signedIn(w, "gus@acme.test", "acme", ["eng", "ops"]);
    const token = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    for (const p of [w.superadmin, ana, gus, token]) {
      const page = await listTenantPeople(w.services, p, "acme");
      assertEquals(page.items.map((x) => x.email).includes("gus@acme.test"), true);
    }
    const gusRow = (await listTenantPeople(w.services, ana, "acme")).items.find((p) =>
      p.email === "gus@acme.test"
    );
    assertEquals(gusRow?.roles, [{ role: "tenant_admin", via: "group", groups: ["ops"] }]);

    const otherToken = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "other" });
    const reader = await w.asWeb("namespace-read");
    const writer = await w.asWeb("namespace-write");
    const before = await everything(w.kv);
    for (
      const [what, p] of [
        ["namespace admin", bo],
        ["member", cy],
        ["another tenant's admin", eve],
        ["another tenant's token", otherToken],
        ["namespace-read token", reader],
        ["namespace-write token", writer],
      ] as const
    ) {
      const refused = await listTenantPeople(w.services, p, "acme").then(() => null, (e) => e);
      assertEquals(refused instanceof ForbiddenError, true, what);
    }
    // refused before the tenant is looked up: another name is 403, never 404
    await assertRejects(() => listTenantPeople(w.services, ana, "nope"), ForbiddenError);
    const gone = await assertRejects(
      () => listTenantPeople(w.services, w.superadmin, "nope"),
      NotFoundError,
    );
    assertEquals(gone.code, "tenant_not_found");
    assertEquals(await everything(w.kv), before, "nothing written");
  },
);

serviceTest(
  "someone who signed in is one of the tenant's people after their session ends: a tenant admin adds them",
  async (w) => {
    const { ana } = await people(w);
    const dee = await signedIn(w, "dee@acme.test", "acme");
    await deleteSession(w.kv, dee.session_id);
    const added = await addTenantAdmin(w.services, ana, "acme", "dee@acme.test", ctx);
    assertEquals(added.user_id, dee.user_id);
    const model = await tenantPeople(w.services, ana, "acme");
    const row = model.people?.items.find((p) => p.id === dee.user_id);
    assertEquals(row?.roles, [{ role: "tenant_admin", via: "list" }]);
    assertEquals(row?.last_sign_in_method, "oidc");
  },
);
