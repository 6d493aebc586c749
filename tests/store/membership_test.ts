import { assertEquals } from "../assert.ts";
import { membershipKeys, membershipsOfUser, tenantMemberIds } from "../../lib/store/membership.ts";
import { addNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { addTenantAdmin } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { storeWorld, worldTest } from "./world.ts";

/**
 * Tenants acme and other, namespaces acme/web, acme/api and other/web; users
 * ana, bo and cy: ana admins tenant acme and acme/api, bo acme/web, cy other/web.
 */
async function world() {
  const { kv } = await storeWorld({
    tenants: ["acme", "other"],
    namespaces: ["acme/web", "acme/api", "other/web"],
    createdBy: "tok_1",
  });
  const ana = await createUser(kv, { email: "ana@example.com" });
  const bo = await createUser(kv, { email: "bo@example.com" });
  const cy = await createUser(kv, { email: "cy@example.com" });
  await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
  await addNamespaceAdmin(kv, { tenant: "acme", namespace: "api", user_id: ana.id, added_by: "t" });
  await addNamespaceAdmin(kv, { tenant: "acme", namespace: "web", user_id: bo.id, added_by: "t" });
  await addNamespaceAdmin(kv, { tenant: "other", namespace: "web", user_id: cy.id, added_by: "t" });
  return { kv, ana, bo, cy };
}

const wtest = worldTest(world);

wtest(
  "membershipsOfUser() lists tenant memberships, then namespace memberships",
  async ({ kv, ana, cy }) => {
    assertEquals(await membershipsOfUser(kv, ana.id), [
      { tenant: "acme", namespace: null },
      { tenant: "acme", namespace: "api" },
    ]);
    assertEquals(await membershipsOfUser(kv, cy.id), [{ tenant: "other", namespace: "web" }]);
    assertEquals(await membershipsOfUser(kv, "usr_nobody"), []);
  },
);

wtest(
  "membershipKeys() names the list entry and the by-user index entry that exist",
  async ({ kv, ana }) => {
    for (const m of await membershipsOfUser(kv, ana.id)) {
      const [member, byUser] = membershipKeys(ana.id, m);
      assertEquals((await kv.get(member)).versionstamp !== null, true, JSON.stringify(member));
      assertEquals((await kv.get(byUser)).versionstamp !== null, true, JSON.stringify(byUser));
    }
  },
);

wtest(
  "tenantMemberIds() gives the tenant's admins and its namespaces' admins, once each",
  async ({ kv, ana, bo, cy }) => {
    assertEquals(await tenantMemberIds(kv, "acme"), [ana.id, bo.id].sort());
    assertEquals(await tenantMemberIds(kv, "other"), [cy.id]);
    assertEquals(await tenantMemberIds(kv, "nope"), []);
  },
);
