import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ConflictError, ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import {
  type Principal,
  type SessionPrincipal,
  sessionPrincipal,
} from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import {
  addTenantAdmin,
  createTenant,
  deleteTenant,
  getTenant,
  homeTenants,
  listAllTenants,
  listTenantAdmins,
  listTenants,
  removeTenantAdmin,
  tenantRoles,
} from "../../lib/services/tenants.ts";
import { findNamespace } from "../../lib/store/namespaces.ts";
import { findTenant, isTenantAdmin } from "../../lib/store/tenants.ts";
import { getTokenRecord } from "../../lib/store/tokens.ts";
import { createUser } from "../../lib/store/users.ts";
import { serviceTest } from "./world.ts";

const ctx = { requestId: "req-svc" };

serviceTest("a superadmin creates a tenant and the runtime is told", async (w) => {
  const tenant = await createTenant(
    w.services,
    w.superadmin,
    { slug: "beta", description: "B" },
    ctx,
  );
  assertEquals(tenant.slug, "beta");
  assertEquals(tenant.description, "B");
  assert(await findTenant(w.kv, "beta") !== null);
  assertEquals(w.changes, ["tenant:beta"]);
});

serviceTest("a tenant-admin cannot create a tenant: 403 before the input is read", async (w) => {
  const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
  let read = false;
  await assertRejects(
    () =>
      createTenant(w.services, admin, () => {
        read = true;
        return { slug: "beta" };
      }, ctx),
    ForbiddenError,
  );
  assert(!read, "the input was read before authorisation");
  assertEquals(await findTenant(w.kv, "beta"), null);
  assertEquals(w.changes, []);
});

serviceTest("a tenant slug that is taken is 409", async (w) => {
  await assertRejects(
    () => createTenant(w.services, w.superadmin, { slug: "acme" }, ctx),
    ConflictError,
  );
  assertEquals(w.changes, []);
});

serviceTest(
  "deleting a tenant removes its namespaces, revokes its tokens, tells the runtime and re-checks the streams",
  async (w) => {
    const bound = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    assert(bound.kind === "token");
    await w.runtime.models.get("acme", "web");
    const { revoked } = await deleteTenant(w.services, w.superadmin, "acme", ctx);
    assertEquals(revoked, [bound.token.id]);
    assert((await getTokenRecord(w.kv, bound.token.id)).revoked_at !== null);
    assertEquals(await findTenant(w.kv, "acme"), null);
    assertEquals(await findNamespace(w.kv, "acme", "web"), null);
    assertEquals(w.changes, ["tenant:acme"]);
    assertEquals(w.rechecks(), 1);
    assertEquals(await w.runtime.models.get("acme", "web"), null);
  },
);

serviceTest(
  "a tenant-admin of another tenant cannot delete a tenant: 403 and nothing is removed",
  async (w) => {
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "other" });
    await assertRejects(() => deleteTenant(w.services, admin, "acme", ctx), ForbiddenError);
    assert(await findTenant(w.kv, "acme") !== null);
    assertEquals(w.changes, []);
    assertEquals(w.rechecks(), 0);
  },
);

serviceTest("deleting a tenant that does not exist is 404 tenant_not_found", async (w) => {
  const err = await assertRejects(
    () => deleteTenant(w.services, w.superadmin, "nope", ctx),
    NotFoundError,
  );
  assertEquals(err.code, "tenant_not_found");
});

serviceTest("a superadmin adds a tenant admin by email and removes them by id", async (w) => {
  const ana = await createUser(w.kv, { email: "ana@example.com" });
  const member = await addTenantAdmin(
    w.services,
    w.superadmin,
    "acme",
    () => "ana@example.com",
    ctx,
  );
  assertEquals(member.user_id, ana.id);
  assert(await isTenantAdmin(w.kv, "acme", ana.id));
  await removeTenantAdmin(w.services, w.superadmin, "acme", ana.id, ctx);
  assert(!await isTenantAdmin(w.kv, "acme", ana.id));
});

serviceTest("a tenant-admin of another tenant cannot manage this tenant's admins", async (w) => {
  const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "other" });
  const ana = await createUser(w.kv, { email: "ana@example.com" });
  await assertRejects(() => addTenantAdmin(w.services, admin, "acme", ana.id, ctx), ForbiddenError);
  assert(!await isTenantAdmin(w.kv, "acme", ana.id));
  await assertRejects(
    () => removeTenantAdmin(w.services, admin, "acme", ana.id, ctx),
    ForbiddenError,
  );
});

serviceTest(
  "adding an admin to a tenant that does not exist is 404 tenant_not_found",
  async (w) => {
    const err = await assertRejects(
      () => addTenantAdmin(w.services, w.superadmin, "nope", "ana@example.com", ctx),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
  },
);

// Reads: the tenants a principal sees, one tenant, its admins, a person's roles, the console home.

/** A person's session principal: a user signed in to `tenants` (none: made on the host). */
async function person(
  w: { kv: Deno.Kv; key: CryptoKey },
  email: string,
  tenants: string[] = [],
): Promise<SessionPrincipal> {
  const user = await createUser(w.kv, { email });
  const login_method = tenants.length === 0 ? "admin" : "oidc";
  const { session } = await createSession(w.kv, w.key, { user: user.id, tenants, login_method });
  return sessionPrincipal(session);
}

serviceTest(
  "the tenants a principal sees: all for a superadmin, its own for a bound token, the sign-in's for a person",
  async (w) => {
    const slugs = async (p: Principal) => (await listTenants(w.services, p)).map((t) => t.slug);
    assertEquals(await slugs(w.superadmin), ["acme", "other"]);
    assertEquals(
      await slugs(await w.as({ type: "tenant-admin", name: "t", tenant_slug: "other" })),
      [
        "other",
      ],
    );
    assertEquals(await slugs(await w.asWeb("namespace-read")), ["acme"]);
    assertEquals(await slugs(await person(w, "ana@acme.test", ["acme"])), ["acme"]);
    assertEquals(await slugs(await person(w, "bo@nowhere.test")), []);
  },
);

serviceTest("a namespace-client token may not list tenants: 403", async (w) => {
  assert(w.superadmin.kind === "token");
  const token = {
    ...w.superadmin.token,
    type: "namespace-client" as const,
    tenant_slug: "acme",
    namespace_slug: "web",
    environment_slug: "prod",
  };
  await assertRejects(() => listTenants(w.services, { kind: "token", token }), ForbiddenError);
});

serviceTest(
  "one tenant and its admins need tenant.read (403 for another tenant), then the tenant (404)",
  async (w) => {
    const ana = await createUser(w.kv, { email: "ana@example.com" });
    await addTenantAdmin(w.services, w.superadmin, "acme", ana.id, ctx);
    const reader = await w.asWeb("namespace-read");
    assertEquals((await getTenant(w.services, reader, "acme")).slug, "acme");
    assertEquals(
      (await listTenantAdmins(w.services, reader, "acme")).map((m) => m.user_id),
      [ana.id],
    );
    await assertRejects(() => getTenant(w.services, reader, "other"), ForbiddenError);
    await assertRejects(() => listTenantAdmins(w.services, reader, "other"), ForbiddenError);
    for (const read of [getTenant, listTenantAdmins]) {
      const err = await assertRejects(() => read(w.services, w.superadmin, "nope"), NotFoundError);
      assertEquals(err.code, "tenant_not_found");
    }
  },
);

serviceTest(
  "a person's roles: admin on the tenant's admin list, member where signed in",
  async (w) => {
    const ana = await person(w, "ana@acme.test", ["acme", "other"]);
    await addTenantAdmin(w.services, w.superadmin, "other", ana.user_id, ctx);
    assertEquals(await tenantRoles(w.services, ana), [
      { slug: "acme", role: "member" },
      { slug: "other", role: "admin" },
    ]);
    assertEquals(await tenantRoles(w.services, await person(w, "bo@nowhere.test")), []);
  },
);

serviceTest(
  "the console home: every tenant for an operator, the sign-in's tenants for anyone else",
  async (w) => {
    const ana = await person(w, "ana@acme.test", ["acme"]);
    assertEquals(await homeTenants(w.services, ana), { kind: "signed-in", slugs: ["acme"] });
    await assertRejects(() => listAllTenants(w.services, ana), ForbiddenError);
    const operator = { ...ana, superadmin: true as const };
    const home = await homeTenants(w.services, operator);
    assert(home.kind === "all");
    assertEquals(home.tenants.map((t) => t.slug), ["acme", "other"]);
    assertEquals(await listAllTenants(w.services, operator), home.tenants);
  },
);
