/**
 * The users a caller may see (lib/services/users.ts), and the account of
 * a signed-in person.
 */
import { assertEquals, assertRejects } from "../assert.ts";
import { type Principal, sessionPrincipal } from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import { addNamespaceAdmin } from "../../lib/services/namespaces.ts";
import { addTenantAdmin } from "../../lib/services/tenants.ts";
import { listUsers, signedInUser } from "../../lib/services/users.ts";
import { createUser, deleteUser } from "../../lib/store/users.ts";
import { serviceTest } from "./world.ts";

const ctx = { requestId: "req-users" };

serviceTest(
  "a superadmin sees every user, a tenant admin the people of its tenant, in email order",
  async (w) => {
    const bo = await createUser(w.kv, { email: "bo@acme.test" });
    const ana = await createUser(w.kv, { email: "ana@acme.test" });
    const cy = await createUser(w.kv, { email: "cy@other.test" });
    await createUser(w.kv, { email: "dee@nowhere.test" });
    await addTenantAdmin(w.services, w.superadmin, "acme", bo.id, ctx);
    await addNamespaceAdmin(w.services, w.superadmin, "acme", "web", ana.id, ctx);
    await addTenantAdmin(w.services, w.superadmin, "other", cy.id, ctx);
    const emails = async (p: Principal, tenant?: string) =>
      (await listUsers(w.services, p, tenant)).map((u) => u.email);
    assertEquals(await emails(w.superadmin), [
      "ana@acme.test",
      "bo@acme.test",
      "cy@other.test",
      "dee@nowhere.test",
    ]);
    assertEquals(await emails(w.superadmin, "other"), ["cy@other.test"]);
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    assertEquals(await emails(admin), ["ana@acme.test", "bo@acme.test"]);
    const { session } = await createSession(w.kv, w.key, { user: bo.id });
    assertEquals(await emails(sessionPrincipal(session)), ["ana@acme.test", "bo@acme.test"]);
  },
);

serviceTest(
  "another tenant named is 403 before it is looked up; an unknown one is 404 for a superadmin",
  async (w) => {
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    await assertRejects(() => listUsers(w.services, admin, "other"), ForbiddenError);
    await assertRejects(() => listUsers(w.services, admin, "nope"), ForbiddenError);
    const err = await assertRejects(
      () => listUsers(w.services, w.superadmin, "nope"),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
  },
);

serviceTest("a namespace token and a person without an admin role get 403", async (w) => {
  const writer = await w.asWeb("namespace-write");
  await assertRejects(() => listUsers(w.services, writer), ForbiddenError);
  const user = await createUser(w.kv, { email: "ana@acme.test" });
  const { session } = await createSession(w.kv, w.key, {
    user: user.id,
    tenants: ["acme"],
    login_method: "oidc",
  });
  const err = await assertRejects(
    () => listUsers(w.services, sessionPrincipal(session)),
    ForbiddenError,
  );
  assertEquals(err.message, "Only a superadmin or a tenant admin can list users");
});

serviceTest(
  "a signed-in person's account: the email, or the id alone once the user is gone",
  async (w) => {
    const user = await createUser(w.kv, { email: "ana@acme.test" });
    const { session } = await createSession(w.kv, w.key, { user: user.id });
    const p = sessionPrincipal(session);
    assertEquals(await signedInUser(w.services, p), { id: user.id, email: "ana@acme.test" });
    await deleteUser(w.kv, user.id);
    assertEquals(await signedInUser(w.services, p), { id: user.id });
  },
);
