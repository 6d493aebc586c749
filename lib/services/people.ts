/**
 * The people of a tenant ({@linkcode listTenantPeople},
 * `GET /api/v1/users?tenant=`): everyone who signed in to it and everyone
 * on one of its admin lists, with their last sign-in and their roles, a
 * page at a time. And the tenant's people as the console's people page
 * shows them, read as the reader may read them: the tenant admins and the
 * admins of each namespace the reader may read, each list with whether the
 * reader may change it; a page of the people when the reader may list them
 * (`user.list`); the login policy when the reader may read it
 * (`tenant.login`). Each part is authorised as its API route is
 * (lib/services/tenants.ts, namespaces.ts, users.ts, login_policies.ts).
 * Also the names console pages show for ids ({@linkcode peopleNames}), and
 * the admin a removal page asks about.
 *
 * @module
 */
import type { AuthDeps } from "../auth/deps.ts";
import { authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { LoginPolicyRecord } from "../protocol/login_policy.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import type { Membership } from "../store/membership.ts";
import { listNamespaceAdmins as storeNamespaceAdmins } from "../store/namespaces.ts";
import type { Page } from "../store/page.ts";
import {
  listTenantPeople as storeTenantPeople,
  type PeoplePageQuery,
  type PersonRow,
} from "../store/people.ts";
import type { SessionClient, SessionLoginMethod } from "../store/sessions.ts";
import { findTenant, getTenant, listTenantAdmins as storeTenantAdmins } from "../store/tenants.ts";
import type { PublicToken } from "../store/tokens.ts";
import { findUser, type UserRecord } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";
import { authDepsOf, type ServiceDeps } from "./deps.ts";
import { getLoginPolicy } from "./login_policies.ts";
import { namespaceAdminLists } from "./namespaces.ts";
import { isSuperadmin, isTenantPerson, listTenantAdmins } from "./tenants.ts";
import { getToken } from "./tokens.ts";

/** An admin as listed: the membership and the person's email ("" when the user is gone). */
export interface Admin extends Membership {
  email: string;
}

/** One namespace's admins. */
export interface NamespaceAdmins {
  slug: string;
  admins: Admin[];
  /** The reader may add and remove them (`namespace.admins`). */
  mayChange: boolean;
}

/**
 * One role of a person in a tenant: tenant admin through the tenant's
 * admin list or through identity-provider groups of their last sign-in
 * that the login policy's `admin_groups` name; admin of a namespace; or,
 * with none of these, a member (signed in, and reads the tenant).
 */
export type PersonRole =
  | { role: "tenant_admin"; via: "list" }
  | { role: "tenant_admin"; via: "group"; groups: string[] }
  | { role: "namespace_admin"; namespace: string }
  | { role: "member" };

/** A person of a tenant, as `GET /api/v1/users?tenant=` lists them. */
export interface TenantPerson {
  /** The user id. */
  id: string;
  email: string;
  /** When the user record was made. */
  created_at: string;
  /** First and last sign-in to the tenant; null for an admin who never signed in to it. */
  first_sign_in_at: string | null;
  last_sign_in_at: string | null;
  /** How the last sign-in proved them (`oidc`, `saml`, `email`), or null. */
  last_sign_in_method: SessionLoginMethod | null;
  /** Where they signed in last: `browser` or `cli`, or null. */
  last_sign_in_client: SessionClient | null;
  /** Their roles in the tenant (`member` alone when they hold no admin role). */
  roles: PersonRole[];
}

/** Page size and cursor of {@linkcode listTenantPeople}. */
export type { PeoplePageQuery };

/** What the people page shows. */
export interface PeopleModel {
  tenant: string;
  tenantAdmins: Admin[];
  mayChangeTenantAdmins: boolean;
  namespaces: NamespaceAdmins[];
  /** A page of the tenant's people; null: the reader may not list people (`user.list`). */
  people: Page<TenantPerson> | null;
  /** "hidden": the reader may not read it (`tenant.login`); null: the tenant has none. */
  policy: LoginPolicyRecord | null | "hidden";
  /** Who last set the policy, as this tenant's pages name them ("" without a policy). */
  policySetBy: string;
  /**
   * The name of the person of {@linkcode PeopleQuery.changed}, when it was
   * asked for and the reader may make that change; else undefined.
   */
  changed?: string;
}

/** What the people page asks besides the lists. */
export interface PeopleQuery {
  /** The page of people: size and cursor ({@linkcode listTenantPeople}). */
  page?: PeoplePageQuery;
  /**
   * A change the reader just made to an admin list (a user id, and the
   * namespace, or none for the tenant's list): its notice names the person
   * (only to a reader who may make that change: the query is anyone's to
   * write, and must not turn a user id into an email).
   */
  changed?: { user: string; namespace?: string | undefined } | undefined;
}

/**
 * The model of a tenant's people page ({@linkcode PeopleModel}): needs
 * `tenant.read` (403, as `GET /api/v1/tenants/{t}/admins`), then the
 * tenant (404 `tenant_not_found`). Namespaces the reader may not read, the
 * people list without `user.list` and the policy without `tenant.login`
 * are left out, as the API refuses them.
 *
 * @param deps store, key, runtime, clock
 * @param principal the reader
 * @param tenant tenant slug
 * @param query the change to name, if any
 * @returns the model
 *
 * @example
 * ```ts
 * import { tenantPeople } from "./people.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * const model = await tenantPeople({ kv, key, runtime }, person, "acme", { changed: { user: ana.id } });
 * if (model.tenantAdmins[0]?.email !== "ana@acme.test" || !model.mayChangeTenantAdmins) throw new Error();
 * if (model.people?.items[0]?.roles[0]?.role !== "tenant_admin" || model.policy !== null) throw new Error();
 * if (model.changed !== "ana@acme.test") throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function tenantPeople(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  query: PeopleQuery = {},
): Promise<PeopleModel> {
  return withSpan("cfgtool.service.tenant_people", { "cfgtool.tenant": tenant }, async () => {
    const { kv } = deps;
    const names = peopleNames(authDepsOf(deps), principal);
    const withEmails = async (list: Membership[]): Promise<Admin[]> => {
      const out: Admin[] = [];
      for (const m of list) out.push({ ...m, email: (await names.email(m.user_id)) ?? "" });
      return out.sort(byEmail);
    };
    const tenantAdmins = await withEmails(await listTenantAdmins(deps, principal, tenant));
    const namespaces: NamespaceAdmins[] = [];
    for (const ns of await namespaceAdminLists(deps, principal, tenant)) {
      namespaces.push({ ...ns, admins: await withEmails(ns.admins) });
    }
    let people: Page<TenantPerson> | null = null;
    if (await can(kv, principal, "user.list", { tenant }, { memo: memoOf(deps) })) {
      people = await listTenantPeople(deps, principal, tenant, query.page);
    }
    let policy: PeopleModel["policy"] = "hidden";
    if (await can(kv, principal, "tenant.login", { tenant }, { memo: memoOf(deps) })) {
      try {
        policy = await getLoginPolicy(deps, principal, tenant);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        policy = null;
      }
    }
    const setBy = policy !== "hidden" && policy !== null ? policy.updated_by : "";
    const model: PeopleModel = {
      tenant,
      tenantAdmins,
      mayChangeTenantAdmins: await can(kv, principal, "tenant.admins", { tenant }, {
        memo: memoOf(deps),
      }),
      namespaces,
      people,
      policy,
      policySetBy: await nameHere(deps, principal, tenant, setBy),
    };
    const changed = query.changed;
    if (changed !== undefined) {
      const ns = changed.namespace;
      const mayChange = ns
        ? await can(kv, principal, "namespace.admins", { tenant, namespace: ns }, {
          memo: memoOf(deps),
        })
        : await can(kv, principal, "tenant.admins", { tenant }, { memo: memoOf(deps) });
      if (mayChange) model.changed = await nameHere(deps, principal, tenant, changed.user);
    }
    return model;
  });
}

/**
 * A page of a tenant's people, in email order: everyone who signed in to
 * it (its people index, lib/store/people.ts) and everyone on its admin
 * list or the admin list of one of its namespaces, each with their first
 * and last sign-in, the last one's method and client, and their roles
 * ({@linkcode PersonRole}). Needs `user.list` on the tenant (a superadmin;
 * a tenant admin, human or token, of that tenant): 403 before the tenant
 * is looked up, then 404 `tenant_not_found`; 400 for a page size that is
 * not a positive integer (50 by default, at most 500). `next` is the
 * cursor of the following page (the email of the page's last person), or
 * null at the end.
 *
 * @param deps the store
 * @param principal the caller
 * @param tenant the tenant slug
 * @param query page size and cursor (`after`: the previous page's `next`)
 * @returns the page
 *
 * @example
 * ```ts
 * import { listTenantPeople } from "./people.ts";
 * import { createSession } from "../auth/sessions.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const bo = await createUser(kv, { email: "bo@acme.test" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * await createSession(kv, await randomTokenKey(), { user: bo.id, tenants: ["acme"], login_method: "email", client: "browser" });
 * const admin = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * const page = await listTenantPeople({ kv }, admin, "acme");
 * if (page.items.map((p) => p.email).join() !== "ana@acme.test,bo@acme.test") throw new Error();
 * if (page.items[1]?.last_sign_in_method !== "email" || page.items[1].roles[0]?.role !== "member") throw new Error();
 * let code = "";
 * try { await listTenantPeople({ kv }, { ...admin, user_id: bo.id, tenants: ["acme"] }, "acme"); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export function listTenantPeople(
  deps: Pick<ServiceDeps, "kv">,
  principal: Principal,
  tenant: string,
  query: PeoplePageQuery = {},
): Promise<Page<TenantPerson>> {
  return withSpan("cfgtool.service.list_tenant_people", { "cfgtool.tenant": tenant }, async () => {
    const { kv } = deps;
    await authorize(kv, principal, "user.list", { tenant }, { memo: memoOf(deps) });
    await getTenant(kv, tenant);
    const page = await storeTenantPeople(kv, tenant, query);
    const policy = (await findLoginPolicy(kv, tenant))?.policy;
    const adminGroups = policy !== undefined && "admin_groups" in policy
      ? policy.admin_groups ?? []
      : [];
    return { items: page.items.map((row) => tenantPerson(row, adminGroups)), next: page.next };
  });
}

/** A row of the people index as the API shows it, with its roles. */
function tenantPerson(row: PersonRow, adminGroups: readonly string[]): TenantPerson {
  const roles: PersonRole[] = [];
  if (row.roles.tenantAdmin) roles.push({ role: "tenant_admin", via: "list" });
  const groups = (row.signIn?.groups ?? []).filter((g) => adminGroups.includes(g));
  if (groups.length > 0) roles.push({ role: "tenant_admin", via: "group", groups });
  for (const namespace of row.roles.namespaces) roles.push({ role: "namespace_admin", namespace });
  if (roles.length === 0) roles.push({ role: "member" });
  const s = row.signIn;
  return {
    id: row.user.id,
    email: row.user.email,
    created_at: row.user.created_at,
    first_sign_in_at: s?.first_sign_in_at ?? null,
    last_sign_in_at: s?.last_sign_in_at ?? null,
    last_sign_in_method: s?.last_sign_in_method ?? null,
    last_sign_in_client: s?.last_sign_in_client ?? null,
    roles,
  };
}

/**
 * An id as a tenant's pages name it: the email of one of the tenant's
 * people (for a superadmin: of any user), else the id as given, so a page
 * of one tenant never shows the email of another tenant's person.
 */
async function nameHere(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  id: string,
): Promise<string> {
  if (!id.startsWith("usr_")) return id;
  if (!isSuperadmin(principal)) {
    const record = await findTenant(deps.kv, tenant);
    if (record === null || !await isTenantPerson(deps, record, id)) return id;
  }
  return (await peopleNames(authDepsOf(deps), principal).email(id)) ?? id;
}

/** Sorts people by email. */
function byEmail(a: { email: string }, b: { email: string }): number {
  return a.email < b.email ? -1 : a.email > b.email ? 1 : 0;
}

/**
 * The admin a removal asks about, named for the confirmation page: needs
 * the right to change the list (`tenant.admins`, or `namespace.admins` for
 * a namespace's; 403), then 404 `admin_not_found` when the user is not on
 * it.
 *
 * @param deps store, key, runtime, clock
 * @param principal the reader
 * @param tenant tenant slug
 * @param namespace the namespace whose list it is, or null for the tenant's
 * @param userId the admin's user id
 * @returns the admin's email (their id when the user is gone)
 *
 * @example
 * ```ts
 * import { adminToRemove } from "./people.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { addTenantAdmin, createTenant } from "../store/tenants.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * await createTenant(kv, { slug: "acme", created_by: "tok_1" });
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * await addTenantAdmin(kv, { tenant: "acme", user_id: ana.id, added_by: "tok_1" });
 * const person = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if (await adminToRemove({ kv, key, runtime }, person, "acme", null, ana.id) !== "ana@acme.test") throw new Error();
 * let code = "";
 * try { await adminToRemove({ kv, key, runtime }, person, "acme", null, "usr_1"); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "admin_not_found") throw new Error(code);
 * runtime.close();
 * kv.close();
 * ```
 */
export function adminToRemove(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  namespace: string | null,
  userId: string,
): Promise<string> {
  const attributes = namespace === null
    ? { "cfgtool.tenant": tenant }
    : { "cfgtool.tenant": tenant, "cfgtool.namespace": namespace };
  return withSpan("cfgtool.service.admin_to_remove", attributes, async () => {
    const { kv } = deps;
    if (namespace === null) {
      await authorize(kv, principal, "tenant.admins", { tenant }, { memo: memoOf(deps) });
    } else {await authorize(kv, principal, "namespace.admins", { tenant, namespace }, {
        memo: memoOf(deps),
      });}
    const list = namespace === null
      ? await storeTenantAdmins(kv, tenant)
      : await storeNamespaceAdmins(kv, tenant, namespace);
    if (!list.some((m) => m.user_id === userId)) {
      throw new NotFoundError(
        "admin_not_found",
        namespace === null
          ? `That person is not a tenant admin of ${tenant}`
          : `That person is not an admin of namespace ${namespace}`,
      );
    }
    return await peopleNames(authDepsOf(deps), principal).label(userId);
  });
}

/** Cached lookups of one page ({@linkcode peopleNames}). */
export interface PeopleNames {
  /** The user of a user id (`usr_…`), or null (no such user, or not a user id). */
  user(userId: string): Promise<UserRecord | null>;
  /** The email of a user id, or null (no such user, or not a user id). */
  email(userId: string): Promise<string | null>;
  /** The token, when it exists and the reader may read it; else null. */
  token(tokenId: string): Promise<PublicToken | null>;
  /** A user's email, a readable token's name, or else the id itself. */
  label(id: string): Promise<string>;
}

/**
 * Names for the ids console pages show (audit entries, version authors,
 * admins, who set a login policy), read as `principal`: a user id becomes
 * the user's email, a token id the token's name when the reader may read
 * that token (`getToken`, lib/services/tokens.ts, so a token's name shows
 * only to those the API shows it to); otherwise the id stays. Each id is
 * looked up once.
 *
 * @param deps store, key, clock
 * @param principal the reader
 * @returns the lookups
 *
 * @example
 * ```ts
 * import { peopleNames } from "./people.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const p = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: ["acme"], groups: [], since: "" };
 * const names = peopleNames({ kv } as never, p);
 * if (await names.email(ana.id) !== "ana@acme.test" || await names.email("anonymous") !== null) throw new Error();
 * if (await names.token("tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") !== null) throw new Error();
 * if (await names.label(ana.id) !== "ana@acme.test" || await names.label("tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") !== "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") throw new Error();
 * kv.close();
 * ```
 */
export function peopleNames(deps: AuthDeps, principal: Principal): PeopleNames {
  const users = new Map<string, Promise<UserRecord | null>>();
  const tokens = new Map<string, Promise<PublicToken | null>>();
  const names: PeopleNames = {
    user(userId) {
      if (!userId.startsWith("usr_")) return Promise.resolve(null);
      let found = users.get(userId);
      if (found === undefined) {
        found = findUser(deps.kv, userId);
        users.set(userId, found);
      }
      return found;
    },
    async email(userId) {
      return (await names.user(userId))?.email ?? null;
    },
    token(tokenId) {
      if (!tokenId.startsWith("tok_")) return Promise.resolve(null);
      let found = tokens.get(tokenId);
      if (found === undefined) {
        found = getToken(deps, principal, tokenId).catch((err) => {
          if (err instanceof ForbiddenError || err instanceof NotFoundError) return null;
          throw err;
        });
        tokens.set(tokenId, found);
      }
      return found;
    },
    async label(id) {
      return (await names.email(id)) ?? (await names.token(id))?.name ?? id;
    },
  };
  return names;
}
