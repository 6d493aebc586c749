/**
 * The people of a tenant as the console's people page shows them, read as
 * the reader may read them: the tenant admins and the admins of each
 * namespace the reader may read, each list with whether the reader may
 * change it; the people the API lets the reader list (`user.list`); the
 * login policy when the reader may read it (`tenant.login`). Each part is
 * authorised as its API route is (lib/services/tenants.ts, namespaces.ts,
 * users.ts, login_policies.ts). Also the names console pages show for ids
 * ({@linkcode peopleNames}), and the admin a removal page asks about.
 *
 * @module
 */
import type { AuthDeps } from "../auth/deps.ts";
import { authorize, can } from "../auth/permissions.ts";
import type { Principal } from "../auth/principal.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { LoginPolicyRecord } from "../protocol/login_policy.ts";
import type { Membership } from "../store/membership.ts";
import { listNamespaceAdmins as storeNamespaceAdmins } from "../store/namespaces.ts";
import { findTenant, listTenantAdmins as storeTenantAdmins } from "../store/tenants.ts";
import type { PublicToken } from "../store/tokens.ts";
import { findUser, type UserRecord } from "../store/users.ts";
import { withSpan } from "../telemetry/spans.ts";
import { authDepsOf, type ServiceDeps } from "./deps.ts";
import { getLoginPolicy } from "./login_policies.ts";
import { namespaceAdminLists } from "./namespaces.ts";
import { isSuperadmin, isTenantPerson, listTenantAdmins } from "./tenants.ts";
import { getToken } from "./tokens.ts";
import { listUsers } from "./users.ts";

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

/** A person of the tenant, as `GET /api/v1/users?tenant=` lists them, with their roles here. */
export interface Member {
  id: string;
  email: string;
  created_at: string;
  roles: string[];
}

/** What the people page shows. */
export interface PeopleModel {
  tenant: string;
  tenantAdmins: Admin[];
  mayChangeTenantAdmins: boolean;
  namespaces: NamespaceAdmins[];
  /** null: the reader may not list people (`user.list`). */
  members: Member[] | null;
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
 * if (model.members?.[0]?.roles.join() !== "tenant admin" || model.policy !== null) throw new Error();
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
    let members: Member[] | null = null;
    if (await can(kv, principal, "user.list", { tenant })) {
      members = (await listUsers(deps, principal, tenant)).map((user) => {
        const roles = tenantAdmins.some((a) => a.user_id === user.id) ? ["tenant admin"] : [];
        for (const ns of namespaces) {
          if (ns.admins.some((a) => a.user_id === user.id)) roles.push(`admin of ${ns.slug}`);
        }
        return { id: user.id, email: user.email, created_at: user.created_at, roles };
      });
    }
    let policy: PeopleModel["policy"] = "hidden";
    if (await can(kv, principal, "tenant.login", { tenant })) {
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
      mayChangeTenantAdmins: await can(kv, principal, "tenant.admins", { tenant }),
      namespaces,
      members,
      policy,
      policySetBy: await nameHere(deps, principal, tenant, setBy),
    };
    const changed = query.changed;
    if (changed !== undefined) {
      const ns = changed.namespace;
      const mayChange = ns
        ? await can(kv, principal, "namespace.admins", { tenant, namespace: ns })
        : await can(kv, principal, "tenant.admins", { tenant });
      if (mayChange) model.changed = await nameHere(deps, principal, tenant, changed.user);
    }
    return model;
  });
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
    if (namespace === null) await authorize(kv, principal, "tenant.admins", { tenant });
    else await authorize(kv, principal, "namespace.admins", { tenant, namespace });
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
