import { assertEquals, assertRejects } from "../assert.ts";
import { ConflictError, InvalidRequestError, NotFoundError } from "../../lib/errors.ts";
import {
  addTenantAdmin,
  createTenant,
  getTenant,
  getTenantEntry,
  isTenantAdmin,
  listTenantAdmins,
  listTenants,
  removeTenantAdmin,
  tenantsAdministeredBy,
} from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";

Deno.test("createTenant() stores the record and refuses a duplicate slug with 409", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const t = await createTenant(kv, { slug: "acme", description: "ACME", created_by: "tok_1" });
    assertEquals(await getTenant(kv, "acme"), t);
    const err = await assertRejects(
      () => createTenant(kv, { slug: "acme", created_by: "x" }),
      ConflictError,
    );
    assertEquals([err.status, err.code], [409, "conflict"]);
    await assertRejects(
      () => createTenant(kv, { slug: "-bad", created_by: "x" }),
      InvalidRequestError,
    );
    await assertRejects(
      () => createTenant(kv, { slug: "a".repeat(64), created_by: "x" }),
      InvalidRequestError,
    );
    assertEquals((await listTenants(kv)).map((x) => x.slug), ["acme"]);
    assertEquals(
      (await assertRejects(() => getTenant(kv, "nope"), NotFoundError)).code,
      "tenant_not_found",
    );
  } finally {
    kv.close();
  }
});

Deno.test("tenant admin lists add and remove users, indexed by user", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await createTenant(kv, { slug: "acme", created_by: "x" });
    const u = await createUser(kv, { email: "a@example.com" });
    await addTenantAdmin(kv, { tenant: "acme", user_id: u.id, added_by: "x" });
    await addTenantAdmin(kv, { tenant: "acme", user_id: u.id, added_by: "x" });
    assertEquals((await listTenantAdmins(kv, "acme")).map((m) => m.user_id), [u.id]);
    assertEquals(await tenantsAdministeredBy(kv, u.id), ["acme"]);
    assertEquals(await isTenantAdmin(kv, "acme", u.id), true);
    await removeTenantAdmin(kv, "acme", u.id);
    assertEquals(await isTenantAdmin(kv, "acme", u.id), false);
    assertEquals(await tenantsAdministeredBy(kv, u.id), []);
    await assertRejects(
      () => addTenantAdmin(kv, { tenant: "acme", user_id: "usr_nope", added_by: "x" }),
      NotFoundError,
    );
    await assertRejects(
      () => addTenantAdmin(kv, { tenant: "nope", user_id: u.id, added_by: "x" }),
      NotFoundError,
    );
  } finally {
    kv.close();
  }
});

Deno.test("getTenantEntry() gives the record with a versionstamp a commit can check, or an empty entry", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const none = await getTenantEntry(kv, "acme");
    assertEquals([none.value, none.versionstamp], [null, null]);
    const created = await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    const entry = await getTenantEntry(kv, "acme");
    assertEquals(entry.value, created);
    assertEquals((await kv.atomic().check(entry).commit()).ok, true);
    assertEquals((await kv.atomic().check(none).commit()).ok, false);
  } finally {
    kv.close();
  }
});
