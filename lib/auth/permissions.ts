/**
 * The one place that decides what a principal may do. Every decision is
 * allow or a typed refusal: 403 `ForbiddenError` (`forbidden`), including
 * a `{tenant}` (or namespace) in the path that differs from a token's
 * binding. Human roles are read from the current tenant-admin and
 * namespace-admin lists, so removing an admin takes effect at once. A
 * person signed in to a tenant (admitted by its login policy) reads it;
 * membership of one of the policy's `admin_groups` makes them a tenant
 * admin, also decided from the current policy. With the server's
 * credential cache (the `memo` option), a person's level is remembered
 * per process while the credential epoch stands (lib/auth/level_memo.ts):
 * every write that can change a level bumps it, so the writing process
 * decides from the store again at once and others within one epoch poll.
 *
 * Summary (docs/api.md, "Who may do what"):
 *
 * | action | allowed |
 * |---|---|
 * | `tenant.create`, `tenant.delete` | superadmin |
 * | `tenant.list` | any principal but `namespace-client` (callers filter with `tenant.read`) |
 * | `tenant.read`, `namespace.list` | superadmin; any non-client principal of the tenant; a person the tenant's sign-in admitted |
 * | `tenant.admins` | superadmin; human tenant admin |
 * | `tenant.login` (read the login policy) | superadmin; tenant admin (human or token) |
 * | `tenant.login.set` (change the login policy) | superadmin; human tenant admin |
 * | `namespace.create`, `namespace.delete`, `namespace.admins` | superadmin; tenant admin (human or token) |
 * | `namespace.read`, `manifest.read`, `evaluate` | superadmin; tenant admin; namespace admin; namespace-read/-write token of the namespace; an admitted person |
 * | `manifest.write` (push, lint, rollback) | as above without namespace-read |
 * | `versions.read` (version metadata) | as `manifest.write`, and an admitted person |
 * | `evaluate.public` | `namespace-client` for its bound triple while `public_evaluate = true` (and everyone with `evaluate`) |
 * | `audit.read` | superadmin; tenant admin (human or token) for its tenant; an admitted person |
 * | `user.list` | superadmin; tenant admin (human or token) for its tenant |
 * | `namespace.protect` (set protected environments) | superadmin; human tenant admin; human namespace admin |
 * | `change.read` (list and read change requests) | as `namespace.read` |
 * | `change.propose` (open, update, comment, withdraw one's own) | superadmin; tenant admin; namespace admin; namespace-write token; an admitted person |
 * | `change.review` (approve, reject) | superadmin; human tenant admin; human namespace admin (the service also requires a person, never the author) |
 * | `change.apply` (apply or schedule anyone's approved request) | superadmin; tenant admin (human or token); namespace admin |
 * | `webhook.manage` (create, list, test, delete webhooks, read deliveries) | superadmin; tenant admin (human or token) |
 *
 * "Superadmin" is a superadmin token, or an operator's console session
 * (a one-time link made on the server host, `cfgtool admin console-link`),
 * which may do everything a superadmin token may except issue superadmin
 * tokens.
 *
 * Token actions and issuance: {@linkcode authorizeTokenAction},
 * {@linkcode authorizeIssue}.
 *
 * @module
 */
import { ForbiddenError } from "../errors.ts";
import { isNamespaceAdmin, namespacesAdministeredBy } from "../store/namespaces.ts";
import { isTenantAdmin } from "../store/tenants.ts";
import { admittedTo } from "./admission.ts";
import type { CredentialCache } from "./credential_cache.ts";
import { levelMemoOf } from "./level_memo.ts";
import type { TokenRecord, TokenType } from "../store/tokens.ts";
import type { Principal, SessionPrincipal } from "./principal.ts";
import { assertPublicEvaluate } from "./public_gate.ts";
import type { Head } from "../store/versions.ts";

/** Actions on tenants, namespaces, manifests, evaluation and audit. */
export type Action =
  | "tenant.create"
  | "tenant.list"
  | "tenant.read"
  | "tenant.delete"
  | "tenant.admins"
  | "tenant.login"
  | "tenant.login.set"
  | "namespace.create"
  | "namespace.list"
  | "namespace.read"
  | "namespace.delete"
  | "namespace.admins"
  | "manifest.read"
  | "manifest.write"
  | "versions.read"
  | "evaluate"
  | "evaluate.public"
  | "audit.read"
  | "user.list"
  | "namespace.protect"
  | "change.read"
  | "change.propose"
  | "change.review"
  | "change.apply"
  | "webhook.manage";

/** Actions on an existing token. */
export type TokenAction = "token.read" | "token.rotate" | "token.revoke";

/** What an action is about: the path's tenant, namespace, environment. */
export interface Target {
  tenant?: string;
  namespace?: string;
  environment?: string;
}

/** Role level of a principal on a (tenant, namespace?) target. */
type Level =
  | "none"
  | "client"
  | "read"
  | "member"
  | "write"
  | "ns-admin"
  | "tenant-token"
  | "tenant-human"
  | "super";

/** What each action means, for refusal messages users read. */
const PHRASES: Record<Action, string> = {
  "tenant.create": "create tenants",
  "tenant.list": "list tenants",
  "tenant.read": "read the tenant",
  "tenant.delete": "delete tenants",
  "tenant.admins": "change tenant admins",
  "tenant.login": "read the tenant's login policy",
  "tenant.login.set": "change the tenant's login policy",
  "namespace.create": "create namespaces",
  "namespace.list": "list namespaces",
  "namespace.read": "read the namespace",
  "namespace.delete": "delete namespaces",
  "namespace.admins": "change namespace admins",
  "manifest.read": "read the manifest",
  "manifest.write": "change the manifest (push, lint, versions, rollback)",
  "versions.read": "read version metadata",
  "evaluate": "evaluate flags",
  "evaluate.public": "evaluate flags",
  "audit.read": "read the audit log",
  "user.list": "list users",
  "namespace.protect": "change the namespace's protected environments",
  "change.read": "read change requests",
  "change.propose": "propose changes",
  "change.review": "approve or reject change requests",
  "change.apply": "apply change requests",
  "webhook.manage": "manage the tenant's webhooks",
};

const refuse = (message: string, details?: Record<string, unknown>) =>
  new ForbiddenError(message, details === undefined ? {} : { details });

/**
 * Checks a token's binding against the target; throws 403 on a mismatch.
 * Returns the level of the token on the target.
 */
function tokenLevel(token: TokenRecord, target: Target): Level {
  if (token.type === "superadmin") return "super";
  if (target.tenant !== undefined && target.tenant !== token.tenant_slug) {
    throw refuse(
      `Token ${token.id} is bound to tenant ${token.tenant_slug}, not ${target.tenant}`,
      { tenant: target.tenant },
    );
  }
  if (token.type === "tenant-admin") return "tenant-token";
  if (target.namespace !== undefined && target.namespace !== token.namespace_slug) {
    throw refuse(
      `Token ${token.id} is bound to namespace ${token.namespace_slug}, not ${target.namespace}`,
      { namespace: target.namespace },
    );
  }
  switch (token.type) {
    case "namespace-client":
      return "client";
    case "namespace-read":
      return "read";
    default:
      return "write";
  }
}

async function userLevel(
  kv: Deno.Kv,
  p: SessionPrincipal,
  target: Target,
  memo: CredentialCache | undefined,
): Promise<Level> {
  const tenant = target.tenant;
  if (tenant === undefined) return "none";
  // A sign-in admits to its tenants only: another tenant's admin lists do not
  // count for it, even for the same email (that tenant's identity provider
  // did not vouch for this person). Host-made sessions have no tenants and
  // carry the user's admin roles everywhere.
  if (p.tenants.length > 0 && !p.tenants.includes(tenant)) return "none";
  if (memo === undefined) return await storedUserLevel(kv, p, tenant, target.namespace);
  return await levelMemoOf(memo).level(
    p,
    tenant,
    target.namespace,
    () => storedUserLevel(kv, p, tenant, target.namespace),
  );
}

/** A person's level on a tenant (and namespace), read from the store. */
async function storedUserLevel(
  kv: Deno.Kv,
  p: SessionPrincipal,
  tenant: string,
  namespace: string | undefined,
): Promise<Level> {
  const userId = p.user_id;
  const admitted = await admittedTo(kv, p, tenant);
  if (admitted === "stale") return "none";
  if (await isTenantAdmin(kv, tenant, userId)) return "tenant-human";
  if (admitted === "admin") return "tenant-human";
  const floor: Level = admitted === "member" ? "member" : "none";
  if (namespace === undefined) {
    if (floor === "member") return floor;
    const some = await namespacesAdministeredBy(kv, userId, tenant);
    return some.length > 0 ? "read" : "none";
  }
  return await isNamespaceAdmin(kv, tenant, namespace, userId) ? "ns-admin" : floor;
}

async function levelOf(
  kv: Deno.Kv,
  p: Principal,
  target: Target,
  memo?: CredentialCache,
): Promise<Level> {
  if (p.kind === "token") return tokenLevel(p.token, target);
  return p.superadmin === true ? "super" : await userLevel(kv, p, target, memo);
}

const NS_READERS: readonly Level[] = [
  "read",
  "member",
  "write",
  "ns-admin",
  "tenant-token",
  "tenant-human",
  "super",
];
const NS_WRITERS: readonly Level[] = ["write", "ns-admin", "tenant-token", "tenant-human", "super"];
const TENANT_ADMINS: readonly Level[] = ["tenant-token", "tenant-human", "super"];

/** Levels allowed per action (evaluate.public and tenant.list are special). */
const ALLOWED: Record<Exclude<Action, "evaluate.public" | "tenant.list">, readonly Level[]> = {
  "tenant.create": ["super"],
  "tenant.delete": ["super"],
  "tenant.read": NS_READERS,
  "namespace.list": NS_READERS,
  "tenant.admins": ["tenant-human", "super"],
  "tenant.login": TENANT_ADMINS,
  // Who may sign in and which groups are admins decide rights no token
  // holds (a human tenant admin mints tenant-admin tokens and adds admins):
  // a token that could change them could make its holder an admin.
  "tenant.login.set": ["tenant-human", "super"],
  "namespace.create": TENANT_ADMINS,
  "namespace.delete": TENANT_ADMINS,
  "namespace.admins": TENANT_ADMINS,
  "namespace.read": NS_READERS,
  "manifest.read": NS_READERS,
  "manifest.write": NS_WRITERS,
  "versions.read": [...NS_WRITERS, "member"],
  "evaluate": NS_READERS,
  "audit.read": [...TENANT_ADMINS, "member"],
  "user.list": TENANT_ADMINS,
  // Protection decides who must agree before a change lands: people only.
  "namespace.protect": ["ns-admin", "tenant-human", "super"],
  "change.read": NS_READERS,
  "change.propose": ["member", "write", "ns-admin", "tenant-token", "tenant-human", "super"],
  "change.review": ["ns-admin", "tenant-human", "super"],
  "change.apply": ["ns-admin", "tenant-token", "tenant-human", "super"],
  "webhook.manage": TENANT_ADMINS,
};

/** Actions whose target must name a namespace. */
const NEEDS_NAMESPACE: ReadonlySet<Action> = new Set([
  "namespace.protect",
  "change.read",
  "change.propose",
  "change.review",
  "change.apply",
  "namespace.read",
  "namespace.delete",
  "namespace.admins",
  "manifest.read",
  "manifest.write",
  "versions.read",
  "evaluate",
  "evaluate.public",
]);

/** Options of {@linkcode authorize}. */
export interface AuthorizeOptions {
  /**
   * Where the public_evaluate gate of a `namespace-client` token reads the
   * namespace's current head: the server's model cache (memory, following
   * every push); default: the KV.
   */
  headOf?: (tenant: string, namespace: string) => Promise<Head | null>;
  /**
   * The server's credential cache: a person's level is remembered under
   * its epoch and staleness rule (lib/auth/level_memo.ts), so a repeated
   * check reads nothing; default: read from the store on every call.
   */
  memo?: CredentialCache | undefined;
}

/** Options of {@linkcode can}, {@linkcode authorizeIssue} and {@linkcode authorizeTokenAction}. */
export type MemoOptions = Pick<AuthorizeOptions, "memo">;

/**
 * Allows an action or throws 403 `forbidden`. For `namespace-client`
 * tokens, `evaluate` means `evaluate.public`: allowed only for the bound
 * (tenant, namespace, environment) and only while that environment's head
 * has `public_evaluate = true` (read through `options.headOf`).
 *
 * @param kv the store (admin lists, manifest head)
 * @param p the principal
 * @param action the action
 * @param target the path's tenant, namespace and environment
 * @param options where the public gate reads the head; the memo of levels
 * @returns nothing
 *
 * @example
 * ```ts
 * import { authorize } from "./permissions.ts";
 * const kv = await Deno.openKv(":memory:");
 * let status = 0;
 * try {
 *   await authorize(kv, { kind: "session", user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" }, "tenant.create", {});
 * } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 403) throw new Error();
 * kv.close();
 * ```
 */
export async function authorize(
  kv: Deno.Kv,
  p: Principal,
  action: Action,
  target: Target = {},
  options: AuthorizeOptions = {},
): Promise<void> {
  const level = await levelOf(kv, p, target, options.memo);
  if (level === "super") return;
  if (action === "tenant.create" || action === "tenant.delete") {
    throw refuse(`Only a superadmin can ${PHRASES[action]}`);
  }
  if (target.tenant === undefined && action !== "tenant.list") {
    throw refuse(`Cannot ${PHRASES[action]} without naming a tenant`);
  }
  if (NEEDS_NAMESPACE.has(action) && target.namespace === undefined) {
    throw refuse(`Cannot ${PHRASES[action]} without naming a namespace`);
  }
  if (level === "client") {
    if (action !== "evaluate" && action !== "evaluate.public") {
      throw refuse(
        `A namespace-client token may only evaluate flags; it cannot ${PHRASES[action]}`,
      );
    }
    const token = (p as { token: TokenRecord }).token;
    if (target.environment !== token.environment_slug) {
      throw refuse(
        `Token ${token.id} is bound to environment ${token.environment_slug}, not ${target.environment}`,
        { environment: target.environment },
      );
    }
    await assertPublicEvaluate(kv, token, options.headOf);
    return;
  }
  if (action === "tenant.list") return;
  const allowed = action === "evaluate.public" ? NS_READERS : ALLOWED[action];
  if (level === "tenant-token" && allowed.includes("tenant-human") && !allowed.includes(level)) {
    throw refuse(
      `A tenant-admin token cannot ${PHRASES[action]}: only a person who is a tenant admin, ` +
        "or a superadmin, can (it decides who holds rights no token holds)",
    );
  }
  if (!allowed.includes(level)) {
    throw refuse(`Not allowed to ${PHRASES[action]} in ${describe(target)}`);
  }
}

/**
 * Like {@linkcode authorize}, but answers true or false (for filtering
 * lists). Errors other than 403 still throw.
 *
 * @param kv the store
 * @param p the principal
 * @param action the action
 * @param target the target
 * @param options the memo of levels (see {@linkcode authorize})
 * @returns whether the action is allowed
 *
 * @example
 * ```ts
 * import { can } from "./permissions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if (await can(kv, p, "tenant.read", { tenant: "acme" })) throw new Error();
 * kv.close();
 * ```
 */
export async function can(
  kv: Deno.Kv,
  p: Principal,
  action: Action,
  target: Target = {},
  options: MemoOptions = {},
): Promise<boolean> {
  try {
    await authorize(kv, p, action, target, options);
    return true;
  } catch (err) {
    if (err instanceof ForbiddenError) return false;
    throw err;
  }
}

function describe(target: Target): string {
  return [target.tenant, target.namespace, target.environment]
    .filter((x) => x !== undefined).join("/");
}

/** The binding of a token to issue. */
export interface IssueBinding {
  type: TokenType;
  tenant_slug: string | null;
  namespace_slug: string | null;
}

/**
 * Allows issuing a token of a type and binding, or throws 403 (issuance
 * table of docs/api.md): namespace tokens by a namespace admin of
 * that namespace, a tenant admin (human or token) of its tenant, or a
 * superadmin; `tenant-admin` by a human tenant admin of that tenant or a
 * superadmin (a tenant-admin token cannot mint another); `superadmin` only
 * by a superadmin token (or bootstrap, which does not come through here).
 * Namespace-bound tokens cannot issue any token.
 *
 * @param kv the store
 * @param p the principal
 * @param b the type and binding to issue
 * @param options the memo of levels (see {@linkcode authorize})
 * @returns nothing
 *
 * @example
 * ```ts
 * import { authorizeIssue } from "./permissions.ts";
 * const kv = await Deno.openKv(":memory:");
 * let status = 0;
 * try {
 *   await authorizeIssue(kv, { kind: "session", user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" },
 *     { type: "superadmin", tenant_slug: null, namespace_slug: null });
 * } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 403) throw new Error();
 * kv.close();
 * ```
 */
export async function authorizeIssue(
  kv: Deno.Kv,
  p: Principal,
  b: IssueBinding,
  options: MemoOptions = {},
): Promise<void> {
  if (p.kind === "token") {
    if (p.token.type === "superadmin") return;
    if (p.token.type !== "tenant-admin") {
      throw refuse("A namespace-bound token cannot issue tokens");
    }
  }
  if (b.type === "superadmin") {
    throw refuse("Only a superadmin token (or the bootstrap CLI) can issue a superadmin token");
  }
  if (b.tenant_slug === null) {
    throw refuse(`Cannot issue ${b.type} without a tenant`);
  }
  const target: Target = { tenant: b.tenant_slug };
  if (b.namespace_slug !== null) target.namespace = b.namespace_slug;
  const level = await levelOf(kv, p, target, options.memo);
  if (level === "super") return; // an operator's console session
  if (b.type === "tenant-admin") {
    if (level === "tenant-token") {
      throw refuse("A tenant-admin token cannot issue another tenant-admin token");
    }
    if (level !== "tenant-human") {
      throw refuse(`Only a tenant admin of ${b.tenant_slug} can issue a tenant-admin token`);
    }
    return;
  }
  if (!["ns-admin", "tenant-token", "tenant-human"].includes(level)) {
    throw refuse(
      `Not allowed to issue ${b.type} tokens for ${describe(target)}`,
    );
  }
}

/**
 * Allows reading, rotating or revoking an existing token, or throws 403.
 * Namespace-bound tokens cannot act on other tokens (they may read and
 * revoke themselves). A tenant admin (human or token) acts on tokens bound
 * to its tenant, a namespace admin on tokens bound to its namespace, a
 * superadmin on every token. Rotation also needs permission to issue the
 * replacement ({@linkcode authorizeIssue}).
 *
 * @param kv the store
 * @param p the principal
 * @param action `token.read`, `token.rotate` or `token.revoke`
 * @param token the token acted on
 * @param options the memo of levels (see {@linkcode authorize})
 * @returns nothing
 *
 * @example
 * ```ts
 * import { authorizeTokenAction } from "./permissions.ts";
 * import type { TokenRecord } from "../store/tokens.ts";
 * const kv = await Deno.openKv(":memory:");
 * const admin = { id: "tok_a", type: "superadmin", tenant_slug: null } as TokenRecord;
 * const reader = {
 *   id: "tok_r", type: "namespace-read", tenant_slug: "acme", namespace_slug: "web",
 * } as TokenRecord;
 * // a superadmin acts on every token; a namespace token reads itself
 * await authorizeTokenAction(kv, { kind: "token", token: admin }, "token.revoke", reader);
 * await authorizeTokenAction(kv, { kind: "token", token: reader }, "token.read", reader);
 * let code = "";
 * try { await authorizeTokenAction(kv, { kind: "token", token: reader }, "token.read", admin); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export async function authorizeTokenAction(
  kv: Deno.Kv,
  p: Principal,
  action: TokenAction,
  token: TokenRecord,
  options: MemoOptions = {},
): Promise<void> {
  const self = p.kind === "token" && p.token.id === token.id;
  if (self && p.token.type === "namespace-client") {
    // Its secret is public (credentials.md, namespace-client rule 1): holding
    // it must not let anyone read the record or revoke the token.
    throw refuse("A namespace-client token may only evaluate flags; ask an admin to manage it");
  }
  if (self && action !== "token.rotate") return;
  if (p.kind === "token") {
    if (p.token.type === "superadmin") return;
    if (p.token.type !== "tenant-admin") {
      throw refuse(
        self
          ? `A namespace-bound token cannot ${action.slice(6)} itself (ask an admin to rotate it)`
          : `A namespace-bound token cannot ${action.slice(6)} other tokens`,
      );
    }
  }
  if (action === "token.rotate") {
    await authorizeIssue(kv, p, token, options);
    return;
  }
  if (token.tenant_slug === null) {
    throw refuse(`Not allowed to ${action.slice(6)} token ${token.id}`);
  }
  const target: Target = { tenant: token.tenant_slug };
  if (p.kind === "session" && token.namespace_slug !== null) {
    target.namespace = token.namespace_slug;
  }
  const level = await levelOf(kv, p, target, options.memo);
  if (!["ns-admin", "tenant-token", "tenant-human", "super"].includes(level)) {
    throw refuse(`Not allowed to ${action.slice(6)} token ${token.id}`);
  }
}
