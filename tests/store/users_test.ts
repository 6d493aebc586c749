import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ConflictError, NotFoundError } from "../../lib/errors.ts";
import { createSession, findSession } from "../../lib/auth/sessions.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  addNamespaceAdmin,
  createNamespace,
  isNamespaceAdmin,
} from "../../lib/store/namespaces.ts";
import { addTenantAdmin, createTenant, isTenantAdmin } from "../../lib/store/tenants.ts";
import { createUser, deleteUser, findUser, listUsers, userExists } from "../../lib/store/users.ts";

Deno.test("createUser() refuses a taken email with 409, in any letter case", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await createUser(kv, { email: "ana@example.com" });
    await assertRejects(() => createUser(kv, { email: "ANA@example.com" }), ConflictError);
  } finally {
    kv.close();
  }
});

Deno.test("listUsers() returns every user in email order", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    assertEquals(await listUsers(kv), []);
    const cy = await createUser(kv, { email: "cy@example.com" });
    const ana = await createUser(kv, { email: "ana@example.com" });
    assertEquals(await listUsers(kv), [ana, cy]);
  } finally {
    kv.close();
  }
});

Deno.test("deleteUser() removes the user, its memberships and sessions, leaving no record that names it", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = await randomTokenKey();
    const ana = await createUser(kv, { email: "ana@example.com" });
    const bo = await createUser(kv, { email: "bo@example.com" });
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
    for (const u of [ana, bo]) {
      await addTenantAdmin(kv, { tenant: "acme", user_id: u.id, added_by: "tok_1" });
      await addNamespaceAdmin(kv, {
        tenant: "acme",
        namespace: "web",
        user_id: u.id,
        added_by: "tok_1",
      });
    }
    const s1 = await createSession(kv, key, { user: ana.id });
    const s2 = await createSession(kv, key, { user: ana.id });
    const boSession = await createSession(kv, key, { user: bo.id });

    const gone = await deleteUser(kv, "ANA@example.com");
    assertEquals(gone.user, ana);
    assertEquals(gone.memberships, [
      { tenant: "acme", namespace: null },
      { tenant: "acme", namespace: "web" },
    ]);
    assertEquals(gone.sessions.sort(), [s1.session.id, s2.session.id].sort());

    assertEquals(await findUser(kv, ana.id), null);
    assertEquals(await findUser(kv, "ana@example.com"), null);
    assertEquals(await findSession(kv, key, s1.secret, new Date()), null);
    assertEquals(await isTenantAdmin(kv, "acme", ana.id), false);
    assertEquals(await isNamespaceAdmin(kv, "acme", "web", ana.id), false);
    const dangling: unknown[] = [];
    const history: string[] = [];
    for await (const e of kv.list({ prefix: [] })) {
      if (e.value instanceof Deno.KvU64) continue; // counters name nobody
      const names = JSON.stringify([e.key, e.value]).includes(ana.id);
      // the audit log is history: it keeps who was made an admin, and when that
      // ended, until audit retention
      if (e.key[0] === "audit_by_time") {
        const entry = e.value as {
          type: string;
          namespace_slug: string | null;
          details: { reason?: string };
        };
        if (names) {
          history.push(
            `${entry.type} ${entry.namespace_slug ?? "(tenant)"}${
              entry.details.reason ? ` ${entry.details.reason}` : ""
            }`,
          );
        }
        continue;
      }
      if (e.key[0] === "audit") continue;
      if (names) dangling.push(e.key);
      if (JSON.stringify(e.value).includes(s1.session.digest)) dangling.push(e.key);
    }
    assertEquals(dangling, []);
    assertEquals(history, [
      "admin.added (tenant)",
      "admin.added web",
      "admin.removed (tenant) user_deleted",
      "admin.removed web user_deleted",
    ]);

    // bo keeps everything, and the email is free again
    assert(await isTenantAdmin(kv, "acme", bo.id));
    assert(await isNamespaceAdmin(kv, "acme", "web", bo.id));
    assert(await findSession(kv, key, boSession.secret, new Date()) !== null);
    await createUser(kv, { email: "ana@example.com" });
  } finally {
    kv.close();
  }
});

Deno.test("deleteUser() of an unknown user is 404 user_not_found", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const err = await assertRejects(() => deleteUser(kv, "nobody@example.com"), NotFoundError);
    assertEquals(err.code, "user_not_found");
  } finally {
    kv.close();
  }
});

Deno.test("deleteUser() of a user with more records than one commit holds still removes them all", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const ana = await createUser(kv, { email: "ana@example.com" });
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    for (let i = 0; i < 300; i++) {
      await createNamespace(kv, { tenant: "acme", slug: `ns${i}`, created_by: "tok_1" });
      await addNamespaceAdmin(kv, {
        tenant: "acme",
        namespace: `ns${i}`,
        user_id: ana.id,
        added_by: "tok_1",
      });
    }
    const gone = await deleteUser(kv, ana.id);
    assertEquals(gone.memberships.length, 300);
    let left = 0;
    for await (const e of kv.list({ prefix: [] })) {
      if (JSON.stringify(e.key).includes(ana.id)) left++;
    }
    assertEquals(left, 0);
  } finally {
    kv.close();
  }
});

Deno.test("userExists() is true for a user id until the user is deleted", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const ana = await createUser(kv, { email: "ana@example.com" });
    assertEquals(await userExists(kv, ana.id), true);
    assertEquals(await userExists(kv, "usr_unknown"), false);
    await deleteUser(kv, ana.id);
    assertEquals(await userExists(kv, ana.id), false);
  } finally {
    kv.close();
  }
});
