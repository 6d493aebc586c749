/**
 * The people index (lib/store/people.ts): a sign-in's record is written in
 * the commit of its session, merged with the earlier ones, never for a
 * tenant that is gone or was made after the sign-in; deleting a tenant or
 * a user deletes their records; the list pages in email order with the
 * admins who never signed in.
 */
import { assert, assertEquals } from "../assert.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import {
  findPerson,
  hasSignedIn,
  listTenantPeople,
  type PersonRecord,
} from "../../lib/store/people.ts";
import { insertSession, normalizeSession } from "../../lib/store/sessions.ts";
import {
  addTenantAdmin,
  createTenant,
  deleteTenant,
  isPersonOfTenant,
} from "../../lib/store/tenants.ts";
import { createUser, deleteUser } from "../../lib/store/users.ts";
import { storeWorld, worldTest } from "./world.ts";

const wtest = worldTest(() => storeWorld({ tenants: ["acme", "other"], namespaces: ["web"] }));
const SYSTEM = { id: "system", principal_type: "system" as const, request_id: null };

/** Every key under the two people prefixes. */
async function peopleKeys(kv: Deno.Kv): Promise<string[]> {
  const out: string[] = [];
  for (const prefix of [["tenant_person"], ["tenant_person_by_user"]]) {
    for await (const e of kv.list({ prefix })) out.push(e.key.join("/"));
  }
  return out;
}

/** A session made by a sign-in to `tenants` at `at`. */
function signInSession(userId: string, tenants: string[], at: string, id = "ssn_1") {
  return normalizeSession({
    id,
    user_id: userId,
    prefix: "ses_x",
    digest: `d-${id}`,
    created_at: at,
    expires_at: "2099-01-01T00:00:00.000Z",
    tenants,
    login_method: "saml",
    client: "cli",
    groups: ["eng"],
  });
}

wtest("a sign-in writes its people record in the commit of its session", async (w) => {
  const key = await randomTokenKey();
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  const at = () => new Date("2099-01-01T00:00:00Z");
  assertEquals(await findPerson(w.kv, "acme", ana.id), null);
  const { session } = await createSession(w.kv, key, {
    user: ana.id,
    tenants: ["acme"],
    login_method: "oidc",
    client: "browser",
    groups: ["ops"],
    now: at,
  });
  const record: PersonRecord = {
    user_id: ana.id,
    email: "ana@acme.test",
    first_sign_in_at: session.created_at,
    last_sign_in_at: session.created_at,
    last_sign_in_method: "oidc",
    last_sign_in_client: "browser",
    groups: ["ops"],
  };
  assertEquals(await findPerson(w.kv, "acme", ana.id), record);
  assert(await hasSignedIn(w.kv, "acme", ana.id));
  assert(!await hasSignedIn(w.kv, "other", ana.id), "signed in to acme only");
  // a later sign-in moves the last one; the first stays
  const later = () => new Date("2099-02-01T00:00:00Z");
  await createSession(w.kv, key, {
    user: ana.id,
    tenants: ["acme"],
    login_method: "email",
    client: "cli",
    now: later,
  });
  assertEquals(await findPerson(w.kv, "acme", ana.id), {
    ...record,
    last_sign_in_at: later().toISOString(),
    last_sign_in_method: "email",
    last_sign_in_client: "cli",
    groups: [],
  });
  // a session made on the server host (no tenant) is no sign-in to a tenant
  const bo = await createUser(w.kv, { email: "bo@acme.test" });
  await createSession(w.kv, key, { user: bo.id });
  assertEquals(await hasSignedIn(w.kv, "acme", bo.id), false);
});

wtest("the session and its people record commit together or not at all", async (w) => {
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  const s = signInSession(ana.id, ["acme"], new Date().toISOString());
  // a person record changed between the read and the commit: nothing is written
  const kv = new Proxy(w.kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = async () => {
          await target.set(["tenant_person", "acme", "ana@acme.test"], { user_id: "usr_other" });
          return await commit();
        };
        return op;
      };
    },
  });
  assertEquals(await insertSession(kv, s, 60_000), "conflict");
  assertEquals((await w.kv.get(["session", s.id])).value, null, "no session either");
  await w.kv.delete(["tenant_person", "acme", "ana@acme.test"]);
  assertEquals(await insertSession(w.kv, s, 60_000), "created");
  assertEquals((await findPerson(w.kv, "acme", ana.id))?.last_sign_in_method, "saml");
});

wtest("no record for a tenant that is gone, or made after the sign-in", async (w) => {
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  const early = signInSession(ana.id, ["acme", "nope"], "2000-01-01T00:00:00.000Z");
  assertEquals(await insertSession(w.kv, early, 60_000), "created", "the session is made");
  assertEquals(await peopleKeys(w.kv), [], "acme was made after that sign-in; nope is no tenant");
});

wtest("deleting a tenant deletes its people; deleting a user deletes theirs", async (w) => {
  const key = await randomTokenKey();
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  const bo = await createUser(w.kv, { email: "bo@acme.test" });
  for (const u of [ana, bo]) {
    for (const t of ["acme", "other"]) {
      await createSession(w.kv, key, { user: u.id, tenants: [t], login_method: "oidc" });
    }
  }
  assertEquals((await peopleKeys(w.kv)).length, 8);
  await deleteTenant(w.kv, "acme", SYSTEM);
  assertEquals(
    (await peopleKeys(w.kv)).sort(),
    [
      "tenant_person/other/ana@acme.test",
      "tenant_person/other/bo@acme.test",
      `tenant_person_by_user/${ana.id}/other`,
      `tenant_person_by_user/${bo.id}/other`,
    ].sort(),
  );
  await deleteUser(w.kv, bo.id);
  assertEquals(await peopleKeys(w.kv), [
    "tenant_person/other/ana@acme.test",
    `tenant_person_by_user/${ana.id}/other`,
  ]);
  // a tenant made again under the same slug starts with no people
  await createTenant(w.kv, { slug: "acme", created_by: "tok_1" });
  assertEquals((await listTenantPeople(w.kv, "acme")).items, []);
  assertEquals(await isPersonOfTenant(w.kv, "acme", ana.id, () => false), false);
});

wtest("someone who signed in is one of the tenant's people, whatever their sessions", async (w) => {
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  await insertSession(w.kv, signInSession(ana.id, ["acme"], new Date().toISOString()), 60_000);
  await w.kv.delete(["session", "ssn_1"]); // ended, or expired from the KV
  assert(await isPersonOfTenant(w.kv, "acme", ana.id, () => false));
  assert(!await isPersonOfTenant(w.kv, "other", ana.id, () => true));
});

wtest("the list pages in email order and holds the admins who never signed in", async (w) => {
  const key = await randomTokenKey();
  const emails = ["dee", "ana", "cy", "eve"].map((n) => `${n}@acme.test`);
  for (const email of emails) {
    const u = await createUser(w.kv, { email });
    await createSession(w.kv, key, { user: u.id, tenants: ["acme"], login_method: "email" });
  }
  const bo = await createUser(w.kv, { email: "bo@acme.test" }); // made on the server host
  await addTenantAdmin(w.kv, { tenant: "acme", user_id: bo.id, added_by: "tok_1" });
  const seen: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 10; pages++) {
    const page = await listTenantPeople(w.kv, "acme", { limit: 2, ...(after ? { after } : {}) });
    seen.push(...page.items.map((p) => p.user.email));
    if (page.next === null) break;
    after = page.next;
  }
  assertEquals(seen, ["ana", "bo", "cy", "dee", "eve"].map((n) => `${n}@acme.test`));
  const bos = (await listTenantPeople(w.kv, "acme")).items.find((p) => p.user.id === bo.id);
  assertEquals(bos?.signIn, null);
  assertEquals(bos?.roles, { tenantAdmin: true, namespaces: [] });
});
