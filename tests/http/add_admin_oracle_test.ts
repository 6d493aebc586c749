/**
 * Adding a tenant or namespace admin by email or id tells a tenant's
 * admins nothing about the rest of the installation: an address with an
 * account only elsewhere (another tenant's person, a user made on the
 * server host) gets exactly the 404 an address without any account gets,
 * and nothing is written. People of the tenant (signed in to it, or on one
 * of its admin lists) are added as before; a superadmin, who sees every
 * user, adds any.
 */
import { assert, assertEquals } from "../assert.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { createUser, findUser } from "../../lib/store/users.ts";
import { signInTest, type SignInWorld } from "./auth/world.ts";
import {
  adminIds,
  assertSameAnswer,
  mint,
  publicNamespace,
  tenantAdmin,
  UNKNOWN_USER,
} from "./oracles.ts";

/** Adds `userId` (an id or an email) to acme's list, or to acme/web's, with `bearer`. */
function add(w: SignInWorld, bearer: string, userId: string, ns?: string) {
  const path = ns === undefined
    ? "/api/v1/tenants/acme/admins"
    : `/api/v1/tenants/acme/namespaces/${ns}/admins`;
  return w.json("POST", path, { bearer, json: { user_id: userId } });
}

/** The `admin.added` entries of acme's audit log. */
async function additions(w: SignInWorld): Promise<number> {
  return (await listAudit(w.kv, { tenant: "acme", type: "admin.added" })).items.length;
}

signInTest(
  "adding an admin by the email of another tenant's person answers as for an unknown address",
  async (w) => {
    await publicNamespace(w, "acme", "web");
    const boss = await tenantAdmin(w, "boss@acme.test", "acme");
    const automation = await mint(w, { type: "tenant-admin", name: "ops", tenant_slug: "acme" });
    const eve = await w.person("eve@other.test", "other");
    const host = await createUser(w.kv, { email: "hal@host.test" }); // `cfgtool admin user create`
    const [tenantList, webList, audited] = [
      await adminIds(w, "acme"),
      await adminIds(w, "acme", "web"),
      await additions(w),
    ];
    const cases = [
      ["tenant admin, tenant list", boss.secret, undefined],
      ["tenant-admin token, namespace list", automation.secret, "web"],
    ] as const;
    for (const [what, bearer, ns] of cases) {
      const none = await add(w, bearer, "nobody@other.test", ns);
      assertEquals([none.status, none.body.code], [404, "user_not_found"], what);
      for (const email of ["eve@other.test", "EVE@other.test ", "hal@host.test"]) {
        const real = await add(w, bearer, email, ns);
        assertSameAnswer(real, none, [[email, "nobody@other.test"]], `${what}: ${email}`);
      }
      for (const id of [eve.user_id, host.id]) {
        const real = await add(w, bearer, id, ns);
        const unknown = await add(w, bearer, UNKNOWN_USER, ns);
        assertSameAnswer(real, unknown, [[id, UNKNOWN_USER]], `${what}: ${id}`);
        assert(!JSON.stringify(real.body).includes("@"), `${what}: no email in the answer`);
      }
    }
    assertEquals(await adminIds(w, "acme"), tenantList, "no tenant admin added");
    assertEquals(await adminIds(w, "acme", "web"), webList, "no namespace admin added");
    assertEquals(await additions(w), audited, "no admin.added entry");
    assertEquals(await findUser(w.kv, "nobody@other.test"), null, "no user made");
  },
);

signInTest(
  "the tenant's people are added by email; a superadmin adds any user; no role crosses tenants",
  async (w) => {
    const boss = await tenantAdmin(w, "boss@acme.test", "acme");
    const bea = await w.person("bea@acme.test", "acme");
    const added = await add(w, boss.secret, "Bea@acme.test");
    assertEquals([added.status, (added.body.admin as { user_id: string }).user_id], [
      201,
      bea.user_id,
    ]);
    // a user made on the server host is the superadmin's to add
    const hal = await createUser(w.kv, { email: "hal@host.test" });
    assertEquals((await add(w, boss.secret, "hal@host.test")).status, 404);
    assertEquals((await add(w, w.admin, "hal@host.test")).status, 201);
    assertEquals((await adminIds(w, "acme")).includes(hal.id), true);
    // eve is a person of other; once she signs in to acme she is one of acme's too
    const eveInOther = await w.person("eve@both.test", "other");
    assertEquals((await add(w, boss.secret, "eve@both.test")).status, 404);
    await w.person("eve@both.test", "acme");
    assertEquals((await add(w, boss.secret, "eve@both.test")).status, 201);
    // her role is acme's: her sign-in to other does not carry it
    const inOther = await w.call("POST", "/api/v1/tenants/acme/namespaces", {
      bearer: eveInOther.secret,
      json: { slug: "nope" },
    });
    assertEquals(inOther.status, 403);
  },
);
