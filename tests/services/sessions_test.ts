/**
 * Who the caller is (`whoAmI`, lib/services/sessions.ts): a token without
 * its digest, or a person with their account, session and tenant roles.
 */
import { assert, assertEquals } from "../assert.ts";
import { sessionPrincipal } from "../../lib/auth/principal.ts";
import { createSession, publicSession } from "../../lib/auth/sessions.ts";
import { whoAmI } from "../../lib/services/sessions.ts";
import { addTenantAdmin } from "../../lib/services/tenants.ts";
import { deleteSessionRecord } from "../../lib/store/sessions.ts";
import { createUser } from "../../lib/store/users.ts";
import { serviceTest } from "./world.ts";

serviceTest("a service token is described by its record, without the digest", async (w) => {
  const reader = await w.asWeb("namespace-read");
  const me = await whoAmI(w.services, reader);
  assert(me.type === "service");
  assert(reader.kind === "token");
  assertEquals(me.token.id, reader.token.id);
  assert(!("digest" in me.token));
});

serviceTest(
  "a person is described by account, session and roles in the tenants they read",
  async (w) => {
    const user = await createUser(w.kv, { email: "ana@acme.test" });
    await addTenantAdmin(w.services, w.superadmin, "other", user.id, { requestId: "r" });
    const { session } = await createSession(w.kv, w.key, {
      user: user.id,
      tenants: ["acme", "other"],
      login_method: "oidc",
    });
    const me = await whoAmI(w.services, sessionPrincipal(session));
    assertEquals(me, {
      type: "user",
      user: { id: user.id, email: "ana@acme.test" },
      session: publicSession(session),
      tenants: [{ slug: "acme", role: "member" }, { slug: "other", role: "admin" }],
    });
  },
);

serviceTest("a session gone meanwhile is named by its id alone", async (w) => {
  const user = await createUser(w.kv, { email: "ana@acme.test" });
  const { session } = await createSession(w.kv, w.key, { user: user.id });
  const p = sessionPrincipal(session);
  await deleteSessionRecord(w.kv, session.id);
  const me = await whoAmI(w.services, p);
  assert(me.type === "user");
  assertEquals(me.session, { id: session.id });
});
