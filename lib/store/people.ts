/**
 * The people of a tenant: everyone who has signed in to it. One record per
 * tenant and person at `["tenant_person", t, email]` (first and last
 * sign-in, the last one's method, client and identity-provider groups),
 * and the index `["tenant_person_by_user", user_id, t]`. A sign-in writes
 * its record in the same atomic commit as its session
 * (lib/store/sessions.ts, `insertSession`), checked against the tenant
 * record, so no record outlives a tenant deleted meanwhile; deleting a
 * tenant (lib/store/tenants.ts) or a user (lib/store/users.ts) deletes
 * their records. Installations that had sign-ins before the index existed
 * fill it once from their sessions and audit log
 * (lib/store/people_backfill.ts).
 *
 * The list of a tenant's people ({@linkcode listTenantPeople}) is in email
 * order, one page at a time, and also holds the people on an admin list of
 * the tenant or of one of its namespaces who never signed in to it (made
 * on the server host, or admins of a sign-in that predates the index).
 *
 * @module
 */
import { deleteInBatches, getManyChunked } from "./kv_batch.ts";
import {
  namespaceAdminPrefix,
  tenantAdminPrefix,
  tenantKey,
  tenantPersonByUserKey,
  tenantPersonByUserPrefix,
  tenantPersonKey,
  tenantPersonPrefix,
  userKey,
} from "./keys.ts";
import { type Page, pageLimit } from "./page.ts";
import type { SessionClient, SessionLoginMethod } from "./sessions.ts";
import type { UserRecord } from "./users.ts";

/** Someone who signed in to a tenant, as its people index holds them. */
export interface PersonRecord {
  user_id: string;
  /** The user's email (lower case): the record's key in the tenant. */
  email: string;
  first_sign_in_at: string;
  last_sign_in_at: string;
  /** How the last sign-in proved the person (`oidc`, `saml`, `email`). */
  last_sign_in_method: SessionLoginMethod;
  /** Who holds the last sign-in's session: `browser` or `cli`. */
  last_sign_in_client: SessionClient;
  /** The identity provider's groups at the last sign-in (matched against `admin_groups`). */
  groups: string[];
}

/** One sign-in of a person to a tenant, as a session or a `login.succeeded` entry tells it. */
export interface SignInFact {
  user_id: string;
  /** When (RFC 3339, as `toISOString` writes it). */
  at: string;
  method: SessionLoginMethod;
  client: SessionClient;
  groups: string[];
}

/**
 * A person's record after one more sign-in: the earliest first sign-in and
 * the latest last one (with its method, client and groups) of the two, so
 * merging the same sign-in again, or an older one, changes nothing. A
 * record of another user (an email whose user was deleted and made again)
 * is replaced.
 *
 * @param existing the stored record, or null
 * @param email the person's email
 * @param fact the sign-in
 * @returns the record to store
 *
 * @example
 * ```ts
 * import { mergeSignIn } from "./people.ts";
 * const first = { user_id: "usr_1", at: "2030-01-01T00:00:00.000Z", method: "email" as const, client: "browser" as const, groups: [] };
 * const later = { ...first, at: "2030-02-01T00:00:00.000Z", method: "oidc" as const, client: "cli" as const };
 * const r = mergeSignIn(mergeSignIn(null, "a@b.c", later), "a@b.c", first);
 * if (r.first_sign_in_at !== first.at || r.last_sign_in_at !== later.at || r.last_sign_in_method !== "oidc") {
 *   throw new Error();
 * }
 * if (JSON.stringify(mergeSignIn(r, "a@b.c", later)) !== JSON.stringify(r)) throw new Error("idempotent");
 * ```
 */
export function mergeSignIn(
  existing: PersonRecord | null,
  email: string,
  fact: SignInFact,
): PersonRecord {
  const latest = {
    last_sign_in_at: fact.at,
    last_sign_in_method: fact.method,
    last_sign_in_client: fact.client,
    groups: fact.groups,
  };
  if (existing === null || existing.user_id !== fact.user_id) {
    return { user_id: fact.user_id, email, first_sign_in_at: fact.at, ...latest };
  }
  const first = fact.at < existing.first_sign_in_at ? fact.at : existing.first_sign_in_at;
  return fact.at > existing.last_sign_in_at
    ? { ...existing, first_sign_in_at: first, ...latest }
    : { ...existing, first_sign_in_at: first };
}

/** What a sign-in's commit checks and writes for one tenant ({@linkcode readSignInSlots}). */
export interface SignInSlot {
  tenant: string;
  /** The tenant's entry as read (value null: no such tenant, nothing is written). */
  tenantEntry: Deno.KvEntryMaybe<{ created_at: string }>;
  /** The person's record as read. */
  personEntry: Deno.KvEntryMaybe<PersonRecord>;
}

/**
 * Reads what the commit of a sign-in to `tenants` checks: each tenant's
 * record and the person's record in it.
 *
 * @param kv the store
 * @param tenants the tenants the sign-in admitted the person to
 * @param email the person's email
 * @returns one slot per tenant
 *
 * @example
 * ```ts
 * import { readSignInSlots } from "./people.ts";
 * const kv = await Deno.openKv(":memory:");
 * const [slot] = await readSignInSlots(kv, ["acme"], "a@b.c");
 * if (slot?.tenantEntry.value !== null || slot.personEntry.value !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function readSignInSlots(
  kv: Deno.Kv,
  tenants: readonly string[],
  email: string,
): Promise<SignInSlot[]> {
  const keys = tenants.flatMap((t) => [tenantKey(t), tenantPersonKey(t, email)]);
  const entries = await getManyChunked(kv, keys);
  return tenants.map((tenant, i) => ({
    tenant,
    tenantEntry: entries[2 * i] as Deno.KvEntryMaybe<{ created_at: string }>,
    personEntry: entries[2 * i + 1] as Deno.KvEntryMaybe<PersonRecord>,
  }));
}

/**
 * Adds a sign-in's people records to its commit: for each slot, a check of
 * the tenant and of the person's record as read, and, when the tenant
 * exists and was made at or before the sign-in, the merged record and its
 * by-user index entry. The commit fails (read again) when either changed
 * meanwhile; a tenant deleted before the read gets no record.
 *
 * @param op the sign-in's atomic operation
 * @param slots what {@linkcode readSignInSlots} read
 * @param email the person's email
 * @param fact the sign-in
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { addSignIn, findPerson, readSignInSlots } from "./people.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1", now: () => new Date("2030-01-01T00:00:00Z") });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const fact = { user_id: ana.id, at: "2030-01-02T00:00:00.000Z", method: "email" as const, client: "browser" as const, groups: [] };
 * const slots = await readSignInSlots(kv, ["acme"], ana.email);
 * await addSignIn(kv.atomic(), slots, ana.email, fact).commit();
 * if ((await findPerson(kv, "acme", ana.id))?.last_sign_in_at !== fact.at) throw new Error();
 * kv.close();
 * ```
 */
export function addSignIn(
  op: Deno.AtomicOperation,
  slots: readonly SignInSlot[],
  email: string,
  fact: SignInFact,
): Deno.AtomicOperation {
  for (const slot of slots) {
    op = op.check(slot.tenantEntry, slot.personEntry);
    const tenant = slot.tenantEntry.value;
    if (tenant === null || tenant.created_at > fact.at) continue;
    op = op
      .set(tenantPersonKey(slot.tenant, email), mergeSignIn(slot.personEntry.value, email, fact))
      .set(tenantPersonByUserKey(fact.user_id, slot.tenant), true);
  }
  return op;
}

/**
 * Records one sign-in of a person to a tenant outside a sign-in (the
 * backfill): merged into the person's record ({@linkcode mergeSignIn}) in
 * a commit checked against the tenant, the user and the record, retried
 * when one changed meanwhile. Nothing is written when the tenant or the
 * user is gone, when the tenant was made after the sign-in (a tenant of
 * the same slug deleted since), or when the record already holds it.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param fact the sign-in
 * @returns whether a record was written
 *
 * @example
 * ```ts
 * import { findPerson, recordSignIn } from "./people.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const fact = { user_id: ana.id, at: new Date().toISOString(), method: "oidc" as const, client: "cli" as const, groups: [] };
 * if (!await recordSignIn(kv, "acme", fact)) throw new Error();
 * if (await recordSignIn(kv, "acme", fact)) throw new Error("already recorded");
 * if ((await findPerson(kv, "acme", ana.id))?.email !== "ana@acme.test") throw new Error();
 * kv.close();
 * ```
 */
export async function recordSignIn(
  kv: Deno.Kv,
  tenant: string,
  fact: SignInFact,
): Promise<boolean> {
  while (true) {
    const user = await kv.get<UserRecord>(userKey(fact.user_id));
    if (user.value === null) return false;
    const email = user.value.email;
    const [slot] = await readSignInSlots(kv, [tenant], email);
    const t = slot!.tenantEntry.value;
    if (t === null || t.created_at > fact.at) return false;
    const existing = slot!.personEntry.value;
    const merged = mergeSignIn(existing, email, fact);
    if (existing !== null && JSON.stringify(merged) === JSON.stringify(existing)) return false;
    const res = await addSignIn(kv.atomic().check(user), [slot!], email, fact).commit();
    if (res.ok) return true;
  }
}

/**
 * The people record of a user in a tenant, or null when they never signed
 * in to it (since it was made).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param userId the user id
 * @returns the record, or null
 *
 * @example
 * ```ts
 * import { findPerson } from "./people.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await findPerson(kv, "acme", "usr_1") !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function findPerson(
  kv: Deno.Kv,
  tenant: string,
  userId: string,
): Promise<PersonRecord | null> {
  const mark = await kv.get(tenantPersonByUserKey(userId, tenant));
  if (mark.value === null) return null;
  const user = await kv.get<UserRecord>(userKey(userId));
  if (user.value === null) return null;
  const person = (await kv.get<PersonRecord>(tenantPersonKey(tenant, user.value.email))).value;
  return person?.user_id === userId ? person : null;
}

/**
 * Whether a user has signed in to a tenant (its people index holds them):
 * one read.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param userId the user id
 * @returns true when they have
 *
 * @example
 * ```ts
 * import { hasSignedIn } from "./people.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await hasSignedIn(kv, "acme", "usr_1")) throw new Error();
 * kv.close();
 * ```
 */
export async function hasSignedIn(kv: Deno.Kv, tenant: string, userId: string): Promise<boolean> {
  return (await kv.get(tenantPersonByUserKey(userId, tenant))).value !== null;
}

/** A user's admin roles in one tenant, as the admin lists hold them. */
export interface AdminRoles {
  /** On the tenant's admin list. */
  tenantAdmin: boolean;
  /** The namespaces on whose admin list they are, in slug order. */
  namespaces: string[];
}

/**
 * The admin roles of a tenant's people, from its tenant-admin list and the
 * admin lists of its namespaces, by user id.
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns the roles of each user on one of the lists
 *
 * @example
 * ```ts
 * import { adminRolesOf } from "./people.ts";
 * const kv = await Deno.openKv(":memory:");
 * await kv.set(["tenant_admin", "acme", "usr_1"], {});
 * await kv.set(["ns_admin", "acme", "web", "usr_1"], {});
 * const roles = await adminRolesOf(kv, "acme");
 * if (!roles.get("usr_1")?.tenantAdmin || roles.get("usr_1")?.namespaces.join() !== "web") throw new Error();
 * kv.close();
 * ```
 */
export async function adminRolesOf(kv: Deno.Kv, tenant: string): Promise<Map<string, AdminRoles>> {
  const out = new Map<string, AdminRoles>();
  const of = (id: string) => {
    let roles = out.get(id);
    if (roles === undefined) {
      roles = { tenantAdmin: false, namespaces: [] };
      out.set(id, roles);
    }
    return roles;
  };
  for await (const e of kv.list({ prefix: tenantAdminPrefix(tenant) })) {
    of(String(e.key[2])).tenantAdmin = true;
  }
  for await (const e of kv.list({ prefix: namespaceAdminPrefix(tenant) })) {
    of(String(e.key[3])).namespaces.push(String(e.key[2]));
  }
  return out;
}

/** One person of a tenant's list ({@linkcode listTenantPeople}). */
export interface PersonRow {
  user: UserRecord;
  /** Their sign-ins to the tenant; null for an admin who never signed in to it. */
  signIn: PersonRecord | null;
  /** Their admin roles in the tenant. */
  roles: AdminRoles;
}

/** Pagination of {@linkcode listTenantPeople}. */
export interface PeoplePageQuery {
  /** Page size (default 50, at most 500; 0 or less is a 400). */
  limit?: number;
  /** The `next` of the previous page: the email of its last person. */
  after?: string;
}

/**
 * One page of a tenant's people in email order: everyone who signed in to
 * it, and everyone on one of its admin lists, each with their admin roles.
 * `next` is the email of the page's last person when more follow. A page
 * reads at most `limit + 2` index records, the tenant's admin lists and
 * the user records of the page and of the admins (admin lists are short).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @param query page size and cursor
 * @returns the page
 *
 * @example
 * ```ts
 * import { listTenantPeople, recordSignIn } from "./people.ts";
 * import { addTenantAdmin, createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const bo = await createUser(kv, { email: "bo@acme.test" });
 * await recordSignIn(kv, "acme", { user_id: bo.id, at: new Date().toISOString(), method: "email", client: "browser", groups: [] });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * const first = await listTenantPeople(kv, "acme", { limit: 1 });
 * if (first.items[0]?.user.email !== "ana@acme.test" || first.items[0].signIn !== null) throw new Error();
 * if (first.next !== "ana@acme.test") throw new Error();
 * const second = await listTenantPeople(kv, "acme", { limit: 1, after: first.next });
 * if (second.items[0]?.signIn?.last_sign_in_method !== "email" || second.next !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function listTenantPeople(
  kv: Deno.Kv,
  tenant: string,
  query: PeoplePageQuery = {},
): Promise<Page<PersonRow>> {
  const limit = pageLimit(query.limit);
  const after = query.after;
  const roles = await adminRolesOf(kv, tenant);
  const prefix = tenantPersonPrefix(tenant);
  const selector = after === undefined ? { prefix } : { prefix, start: [...prefix, after] };
  const signedIn: PersonRecord[] = [];
  for await (const e of kv.list<PersonRecord>(selector, { limit: limit + 2 })) {
    if (e.key[2] === after) continue; // the start key is inclusive
    if (signedIn.length > limit) break;
    signedIn.push(e.value);
  }
  // Admins who never signed in to the tenant are on the list too.
  const admins = [...roles.keys()];
  const marks = await getManyChunked(kv, admins.map((id) => tenantPersonByUserKey(id, tenant)));
  const unsigned = admins.filter((_, i) => marks[i]!.value === null);
  const adminUsers = await getManyChunked<UserRecord>(kv, unsigned.map(userKey));
  const candidates: { email: string; user_id: string; signIn: PersonRecord | null }[] = [
    ...signedIn.map((p) => ({ email: p.email, user_id: p.user_id, signIn: p })),
  ];
  for (const e of adminUsers) {
    const u = e.value;
    if (u === null || (after !== undefined && u.email <= after)) continue;
    candidates.push({ email: u.email, user_id: u.id, signIn: null });
  }
  candidates.sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0);
  const page = candidates.slice(0, limit);
  const next = candidates.length > limit ? page[page.length - 1]!.email : null;
  const users = await getManyChunked<UserRecord>(kv, page.map((c) => userKey(c.user_id)));
  const items: PersonRow[] = [];
  page.forEach((c, i) => {
    const user = users[i]!.value;
    // A record whose user is gone (a deletion still sweeping) is left out.
    if (user === null || user.email !== c.email) return;
    items.push({
      user,
      signIn: c.signIn,
      roles: roles.get(user.id) ?? { tenantAdmin: false, namespaces: [] },
    });
  });
  return { items, next };
}

/**
 * The keys of a user's people records ({@linkcode tenantPersonKey} in each
 * tenant they signed in to, and the index entries): what deleting the user
 * deletes.
 *
 * @param kv the store
 * @param userId the user id
 * @param email the user's email
 * @returns the keys
 *
 * @example
 * ```ts
 * import { personKeysOfUser, recordSignIn } from "./people.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await recordSignIn(kv, "acme", { user_id: ana.id, at: new Date().toISOString(), method: "oidc", client: "browser", groups: [] });
 * if ((await personKeysOfUser(kv, ana.id, ana.email)).length !== 2) throw new Error();
 * kv.close();
 * ```
 */
export async function personKeysOfUser(
  kv: Deno.Kv,
  userId: string,
  email: string,
): Promise<Deno.KvKey[]> {
  const keys: Deno.KvKey[] = [];
  for await (const e of kv.list({ prefix: tenantPersonByUserPrefix(userId) })) {
    keys.push(tenantPersonKey(String(e.key[2]), email), e.key);
  }
  return keys;
}

/**
 * Deletes a tenant's people records and their index entries, in batches
 * (after the tenant record is gone: a sign-in committing meanwhile finds
 * no tenant and writes none).
 *
 * @param kv the store
 * @param tenant the tenant slug
 * @returns how many people records were deleted
 *
 * @example
 * ```ts
 * import { deleteTenantPeople, recordSignIn } from "./people.ts";
 * import { createTenant } from "./tenants.ts";
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await recordSignIn(kv, "acme", { user_id: ana.id, at: new Date().toISOString(), method: "oidc", client: "browser", groups: [] });
 * if (await deleteTenantPeople(kv, "acme") !== 1) throw new Error();
 * if ((await Array.fromAsync(kv.list({ prefix: ["tenant_person_by_user"] }))).length !== 0) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteTenantPeople(kv: Deno.Kv, tenant: string): Promise<number> {
  let people = 0;
  async function* keys(): AsyncGenerator<Deno.KvKey> {
    for await (const e of kv.list<PersonRecord>({ prefix: tenantPersonPrefix(tenant) })) {
      people++;
      yield e.key;
      yield tenantPersonByUserKey(e.value.user_id, tenant);
    }
  }
  await deleteInBatches(kv, keys());
  return people;
}
