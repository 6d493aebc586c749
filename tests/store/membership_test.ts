import { assertEquals } from "../assert.ts";
import { membershipKeys, membershipsOfUser, tenantMemberIds } from "../../lib/store/membership.ts";
import { addNamespaceAdmin, createNamespace } from "../../lib/store/namespaces.ts";
import { addTenantAdmin, createTenant } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";

async function world(kv: Deno.Kv) {
  const ana = await createUser(kv, { email: "ana@example.com" });
  const bo = await createUser(kv, { email: "bo@example.com" });
  const cy = await createUser(kv, { email: "cy@example.com" });
  for (const t of ["acme", "other"]) await createTenant(kv, { slug: t, created_by: "tok_1" });
  for (const [t, ns] of [["acme", "web"], ["acme", "api"], ["other", "web"]]) {
    await createNamespace(kv, { tenant: t!, slug: ns!, created_by: "tok_1" });
  }
  await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
  await addNamespaceAdmin(kv, { tenant: "acme", namespace: "api", user_id: ana.id, added_by: "t" });
  await addNamespaceAdmin(kv, { tenant: "acme", namespace: "web", user_id: bo.id, added_by: "t" });
  await addNamespaceAdmin(kv, { tenant: "other", namespace: "web", user_id: cy.id, added_by: "t" });
  return { ana, bo, cy };
}

Deno.test("membershipsOfUser() lists tenant memberships, then namespace memberships", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { ana, cy } = await world(kv);
    assertEquals(await membershipsOfUser(kv, ana.id), [
      { tenant: "acme", namespace: null },
      { tenant: "acme", namespace: "api" },
    ]);
    assertEquals(await membershipsOfUser(kv, cy.id), [{ tenant: "other", namespace: "web" }]);
    assertEquals(await membershipsOfUser(kv, "usr_nobody"), []);
  } finally {
    kv.close();
  }
});

Deno.test("membershipKeys() names the list entry and the by-user index entry that exist", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { ana } = await world(kv);
    for (const m of await membershipsOfUser(kv, ana.id)) {
      const [member, byUser] = membershipKeys(ana.id, m);
      assertEquals((await kv.get(member)).versionstamp !== null, true, JSON.stringify(member));
      assertEquals((await kv.get(byUser)).versionstamp !== null, true, JSON.stringify(byUser));
    }
  } finally {
    kv.close();
  }
});

Deno.test("tenantMemberIds() gives the tenant's admins and its namespaces' admins, once each", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const { ana, bo, cy } = await world(kv);
    assertEquals(await tenantMemberIds(kv, "acme"), [ana.id, bo.id].sort());
    assertEquals(await tenantMemberIds(kv, "other"), [cy.id]);
    assertEquals(await tenantMemberIds(kv, "nope"), []);
  } finally {
    kv.close();
  }
});
