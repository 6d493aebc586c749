import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ConflictError, ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import {
  addTenantAdmin,
  createTenant,
  deleteTenant,
  removeTenantAdmin,
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
