/**
 * Every Deno KV key cfgtool writes, built by the typed helpers below. One
 * snake_case prefix per record kind; secondary indexes are named
 * `<collection>_by_<field>` and hold only ids (never record copies), except
 * the immutable audit entries.
 *
 * | key | value |
 * |---|---|
 * | `["tenant", t]` | tenant record (`lib/store/tenants.ts`) |
 * | `["tenant_admin", t, user_id]` | membership (`{user_id, added_at, added_by}`) |
 * | `["tenant_admin_by_user", user_id, t]` | `true` |
 * | `["ns", t, ns]` | namespace record (`lib/store/namespaces.ts`) |
 * | `["ns_admin", t, ns, user_id]` | membership |
 * | `["ns_admin_by_user", user_id, t, ns]` | `true` |
 * | `["ns_head", t, ns]` | head `{version, closure_hash, environments}` (watched) |
 * | `["version", t, ns, v]` | version metadata, with the tree blob id |
 * | `["blob", sha256, i]` | chunk `i` (≤ 60 KiB) of a content-addressed blob |
 * | `["blob_meta", sha256]` | `{size, chunks}`; written after the chunks |
 * | `["token", id]` | service-token record (`tok_<ulid>`) |
 * | `["token_by_digest", hmac]` | token id |
 * | `["token_by_tenant", t, id]` | token id (every token bound to tenant t) |
 * | `["token_by_namespace", t, ns, id]` | token id (tokens bound to t/ns) |
 * | `["token_by_name", t, ns, name]` | token id; `t` = `_installation` and `ns` = `_tenant` / `_installation` where unbound |
 * | `["audit", t, ulid]` | audit entry; `t` = `_installation` for unbound tokens |
 * | `["audit_by_time", ulid]` | the same (immutable) audit entry, installation-wide order |
 * | `["user", id]` | user record (`usr_<ulid>`) |
 * | `["user_by_email", email]` | user id |
 * | `["session", id]` | human session record (`ssn_<ulid>`), expires with the session |
 * | `["session_by_digest", hmac]` | session id |
 * | `["session_by_user", user_id, id]` | session id; expires with the session |
 * | `["tenant_person", t, email]` | someone who signed in to tenant t: `{user_id, email, first_sign_in_at, last_sign_in_at, last_sign_in_method, last_sign_in_client, groups}`, written in the commit of the sign-in's session (`lib/store/people.ts`); email order is the people list's order |
 * | `["tenant_person_by_user", user_id, t]` | `true` (the tenants a user signed in to: deleting the user deletes their records) |
 * | `["people_backfill"]` | progress of the one-time backfill of `tenant_person` from sessions and `login.succeeded` audit entries, then `{state: "done", …}` (`lib/store/people_backfill.ts`) |
 * | `["people_backfill_lease"]` | `{holder, until}`: the process running that backfill now (expires) |
 * | `["login_policy", t]` | the tenant's login policy record (`lib/store/login_policies.ts`) |
 * | `["one_time", kind, digest]` | a single-use record of a sign-in in progress (OIDC state, email code, CLI grant), expires (`lib/store/one_time.ts`) |
 * | `["login_rate", scope, id, window]` | the number of attempts in a fixed window (`lib/store/login_rate.ts`), expires |
 * | `["bootstrap_count"]` | `Deno.KvU64`, numbers `bootstrap-<n>` token names |
 * | `["token_key_check"]` | HMAC of a fixed string under the token key: detects a lost or changed key file |
 * | `["meta", "layout"]` | `{version, written_by, at}`: the store layout version and the cfgtool that wrote it (`lib/store/layout.ts`) |
 * | `["meta", "migration", id]` | progress of one layout migration: `{state, cursor, items, batches, …}`, then `{state: "done", …}` (`lib/store/layout_runner.ts`) |
 * | `["meta", "migration_lease"]` | `{holder, until}`: the process running the layout migrations now (expires) |
 * | `["lease_holder", holder]` | `{until}`: a server process is alive until then; renewed by heartbeat (`lib/store/leases.ts`) |
 * | `["conn_lease", credential]` | `{holders: {[holder]: count}}`: open event streams of a credential, per process |
 * | `["rate_bucket", key]` | `{tokens, at}`: the installation-wide token bucket of a client rate-limit key |
 * | `["credential_epoch"]` | `Deno.KvU64`, bumped in the commit of every change to what a credential may do (watched: `lib/store/credential_epoch.ts`) |
 * | `["ns_retention", t, ns]` | `{horizon, namespace_created_at, pruned_at}`: versions below `horizon` were pruned (`lib/store/retention.ts`) |
 * | `["blob_gc", sha256]` | `{at}`: when the retention task first found the blob unreferenced |
 * | `["retention_lease"]` | `{holder, until}`: the process running the retention task now (expires) |
 * | `["audit_retention_lease"]` | `{holder, until}`: the process running the audit-retention task now (`lib/store/audit_retention.ts`) |
 * | `["schedule_sweep_lease"]` | `{holder, until}`: the process sweeping overdue scheduled change requests (`lib/store/schedule_sweep.ts`) |
 * | `["saml_sp"]` | the installation's SAML signing certificate and its private key sealed with a key derived from the token key (`lib/store/saml_sp.ts`) |
 * | `["ns_protection", t, ns]` | `{environments: {env: {required_approvals}}, updated_at, updated_by}`: protected environments of a namespace (`lib/store/protection.ts`) |
 * | `["change_request", t, ns, id]` | a change request (`cr_<ulid>`) with the tree blob id of its files (`lib/store/change_requests.ts`) |
 * | `["change_comment", t, ns, id, ulid]` | one comment on a change request |
 * | `["webhook", t, id]` | a webhook (`whk_<ulid>`): URL, events, namespaces, format, its signing secret sealed with a key derived from the token key (`lib/store/webhooks.ts`) |
 * | `["webhook_lock", t]` | `{changed_at}`: every create and delete of a tenant's webhooks checks and sets it (the 20-webhook limit) |
 * | `["webhook_delivery", t, webhook_id, id]` | a delivery (`dlv_<ulid>`): the event, its status and attempts; the newest 100 per webhook are kept |
 * | `["webhook_entry", t, webhook_id, entry_id]` | the delivery id made for an audit entry: the fan-out's idempotency key |
 * | `["webhook_delivery_seq", t, webhook_id]` | `Deno.KvU64`, counts the webhook's deliveries (pruning runs every 20th) |
 *
 * Tenant and namespace slugs match `^[a-z0-9][a-z0-9._-]{0,62}$`, so the
 * `_`-prefixed placeholders never collide with a slug.
 *
 * @module
 */

/** Tenant part of keys for records bound to no tenant (superadmin tokens). */
export const INSTALLATION = "_installation";
/** Namespace part of `token_by_name` keys for tenant-wide tokens. */
export const TENANT_WIDE = "_tenant";

/**
 * Key of a tenant record.
 *
 * @example
 * ```ts
 * import { tenantKey } from "./keys.ts";
 * if (tenantKey("acme")[0] !== "tenant") throw new Error();
 * ```
 */
export const tenantKey = (t: string): Deno.KvKey => ["tenant", t];
/** Prefix of every tenant record. */
export const tenantPrefix = (): Deno.KvKey => ["tenant"];
/** Key of one tenant-admin membership. */
export const tenantAdminKey = (t: string, user: string): Deno.KvKey => [
  "tenant_admin",
  t,
  user,
];
/** Prefix of a tenant's admin memberships. */
export const tenantAdminPrefix = (t: string): Deno.KvKey => ["tenant_admin", t];
/** Index: tenants a user administers. */
export const tenantAdminByUserKey = (user: string, t: string): Deno.KvKey => [
  "tenant_admin_by_user",
  user,
  t,
];
/** Prefix of {@linkcode tenantAdminByUserKey} for one user. */
export const tenantAdminByUserPrefix = (user: string): Deno.KvKey => [
  "tenant_admin_by_user",
  user,
];
/** Key of a namespace record. */
export const namespaceKey = (t: string, ns: string): Deno.KvKey => [
  "ns",
  t,
  ns,
];
/** Prefix of a tenant's namespace records. */
export const namespacePrefix = (t: string): Deno.KvKey => ["ns", t];
/** Key of one namespace-admin membership. */
export const namespaceAdminKey = (
  t: string,
  ns: string,
  user: string,
): Deno.KvKey => ["ns_admin", t, ns, user];
/** Prefix of a namespace's admin memberships (without `ns`: of every namespace of `t`). */
export const namespaceAdminPrefix = (t: string, ns?: string): Deno.KvKey =>
  ns === undefined ? ["ns_admin", t] : ["ns_admin", t, ns];
/** Index: namespaces a user administers (prefix `[user]` or `[user, t]`). */
export const namespaceAdminByUserKey = (
  user: string,
  t: string,
  ns: string,
): Deno.KvKey => ["ns_admin_by_user", user, t, ns];
/** Prefix of {@linkcode namespaceAdminByUserKey} for one user and tenant (or every tenant). */
export const namespaceAdminByUserPrefix = (
  user: string,
  t?: string,
): Deno.KvKey => t === undefined ? ["ns_admin_by_user", user] : ["ns_admin_by_user", user, t];
/** Key of a namespace's manifest head (the key to watch). */
export const headKey = (t: string, ns: string): Deno.KvKey => [
  "ns_head",
  t,
  ns,
];
/** Key of one manifest version's metadata. */
export const versionKey = (t: string, ns: string, v: number): Deno.KvKey => [
  "version",
  t,
  ns,
  v,
];
/** Prefix of a namespace's version metadata. */
export const versionPrefix = (t: string, ns: string): Deno.KvKey => [
  "version",
  t,
  ns,
];
/** Key of one blob chunk. */
export const blobChunkKey = (sha: string, i: number): Deno.KvKey => [
  "blob",
  sha,
  i,
];
/** Prefix of a blob's chunks, in chunk order. */
export const blobChunkPrefix = (sha: string): Deno.KvKey => ["blob", sha];
/** Key of a blob's metadata. */
export const blobMetaKey = (sha: string): Deno.KvKey => ["blob_meta", sha];
/** Key of a token record. */
export const tokenKey = (id: string): Deno.KvKey => ["token", id];
/** Prefix of every token record. */
export const tokenPrefix = (): Deno.KvKey => ["token"];
/** Index: token digest → id. */
export const tokenByDigestKey = (digest: string): Deno.KvKey => [
  "token_by_digest",
  digest,
];
/** Index: tokens bound to a tenant. */
export const tokenByTenantKey = (t: string, id: string): Deno.KvKey => [
  "token_by_tenant",
  t,
  id,
];
/** Prefix of {@linkcode tokenByTenantKey}. */
export const tokenByTenantPrefix = (t: string): Deno.KvKey => [
  "token_by_tenant",
  t,
];
/** Index: tokens bound to a namespace. */
export const tokenByNamespaceKey = (
  t: string,
  ns: string,
  id: string,
): Deno.KvKey => ["token_by_namespace", t, ns, id];
/** Prefix of {@linkcode tokenByNamespaceKey}. */
export const tokenByNamespacePrefix = (t: string, ns: string): Deno.KvKey => [
  "token_by_namespace",
  t,
  ns,
];
/**
 * Index: token name within its bound scope. Pass `null` for an unbound
 * tenant or namespace.
 *
 * @example
 * ```ts
 * import { tokenByNameKey } from "./keys.ts";
 * const k = tokenByNameKey(null, null, "bootstrap-1");
 * if (k[1] !== "_installation" || k[2] !== "_installation") throw new Error();
 * ```
 */
export const tokenByNameKey = (
  t: string | null,
  ns: string | null,
  name: string,
): Deno.KvKey => [
  "token_by_name",
  t ?? INSTALLATION,
  ns ?? (t === null ? INSTALLATION : TENANT_WIDE),
  name,
];
/** Key of an audit entry (`t` = null for installation-level entries). */
export const auditKey = (t: string | null, id: string): Deno.KvKey => [
  "audit",
  t ?? INSTALLATION,
  id,
];
/** Prefix of a tenant's audit entries. */
export const auditPrefix = (t: string | null): Deno.KvKey => [
  "audit",
  t ?? INSTALLATION,
];
/** Key of an audit entry in installation-wide time order. */
export const auditByTimeKey = (id: string): Deno.KvKey => [
  "audit_by_time",
  id,
];
/** Prefix of {@linkcode auditByTimeKey}. */
export const auditByTimePrefix = (): Deno.KvKey => ["audit_by_time"];
/** Key of a user record. */
export const userKey = (id: string): Deno.KvKey => ["user", id];
/** Prefix of every user record. */
export const userPrefix = (): Deno.KvKey => ["user"];
/** Index: user email (lower case) → id. */
export const userByEmailKey = (email: string): Deno.KvKey => [
  "user_by_email",
  email,
];
/** Key of a human session record. */
export const sessionKey = (id: string): Deno.KvKey => ["session", id];
/** Prefix of every human session record. */
export const sessionPrefix = (): Deno.KvKey => ["session"];
/** Index: session digest → id. */
export const sessionByDigestKey = (digest: string): Deno.KvKey => [
  "session_by_digest",
  digest,
];
/** Prefix of every session digest index entry. */
export const sessionByDigestPrefix = (): Deno.KvKey => ["session_by_digest"];
/** Index: user → session id. */
export const sessionByUserKey = (user: string, id: string): Deno.KvKey => [
  "session_by_user",
  user,
  id,
];
/** Prefix of a user's session index entries. */
export const sessionByUserPrefix = (user: string): Deno.KvKey => ["session_by_user", user];
/** Prefix of every user's session index entries. */
export const allSessionsByUserPrefix = (): Deno.KvKey => ["session_by_user"];
/** One person of a tenant: someone who signed in to it (lib/store/people.ts). */
export const tenantPersonKey = (t: string, email: string): Deno.KvKey => [
  "tenant_person",
  t,
  email,
];
/** Prefix of a tenant's people (email order). */
export const tenantPersonPrefix = (t: string): Deno.KvKey => ["tenant_person", t];
/** Index: the tenants a user signed in to. */
export const tenantPersonByUserKey = (user: string, t: string): Deno.KvKey => [
  "tenant_person_by_user",
  user,
  t,
];
/** Prefix of {@linkcode tenantPersonByUserKey} for one user. */
export const tenantPersonByUserPrefix = (user: string): Deno.KvKey => [
  "tenant_person_by_user",
  user,
];
/** Progress of the one-time backfill of the people index (lib/store/people_backfill.ts). */
export const peopleBackfillKey = (): Deno.KvKey => ["people_backfill"];
/** The lease of the process running the people backfill. */
export const peopleBackfillLeaseKey = (): Deno.KvKey => ["people_backfill_lease"];
/** A tenant's login policy. */
export const loginPolicyKey = (t: string): Deno.KvKey => ["login_policy", t];
/** A single-use record of a sign-in in progress, by kind and digest. */
export const oneTimeKey = (kind: string, digest: string): Deno.KvKey => ["one_time", kind, digest];
/** Attempt counter of a sign-in rate limit in one fixed window. */
export const loginRateKey = (scope: string, id: string, window: number): Deno.KvKey => [
  "login_rate",
  scope,
  id,
  window,
];
/** Counter numbering default bootstrap token names. */
export const bootstrapCountKey = (): Deno.KvKey => ["bootstrap_count"];
/** Retention record of a namespace: the oldest version kept (lib/store/retention.ts). */
export const retentionKey = (t: string, ns: string): Deno.KvKey => [
  "ns_retention",
  t,
  ns,
];
/** Mark of a blob found unreferenced by the retention task. */
export const blobGcKey = (sha: string): Deno.KvKey => ["blob_gc", sha];
/** Prefix of {@linkcode blobGcKey}. */
export const blobGcPrefix = (): Deno.KvKey => ["blob_gc"];
/** Prefix of every blob's metadata. */
export const blobMetaPrefix = (): Deno.KvKey => ["blob_meta"];
/** Prefix of every version record of every namespace. */
export const allVersionsPrefix = (): Deno.KvKey => ["version"];
/** Prefix of every namespace head. */
export const allHeadsPrefix = (): Deno.KvKey => ["ns_head"];
/** Lease that lets one process at a time run the retention task. */
export const retentionLeaseKey = (): Deno.KvKey => ["retention_lease"];
/** Lease that lets one process at a time run the audit-retention task. */
export const auditRetentionLeaseKey = (): Deno.KvKey => ["audit_retention_lease"];
/** The lease of the sweep of overdue scheduled change requests (lib/store/schedule_sweep.ts). */
export const scheduleSweepLeaseKey = (): Deno.KvKey => ["schedule_sweep_lease"];
/** Fingerprint of the token HMAC key the store's digests were made with. */
export const tokenKeyCheckKey = (): Deno.KvKey => ["token_key_check"];
/** The store layout version record (lib/store/layout.ts). */
export const layoutKey = (): Deno.KvKey => ["meta", "layout"];
/** Progress of one layout migration (lib/store/layout_runner.ts). */
export const migrationKey = (id: string): Deno.KvKey => ["meta", "migration", id];
/** The lease of the process running the layout migrations. */
export const migrationLeaseKey = (): Deno.KvKey => ["meta", "migration_lease"];
/** Counter bumped by every write that changes what a credential may do. */
export const credentialEpochKey = (): Deno.KvKey => ["credential_epoch"];
/** The installation's SAML service-provider signing key pair (private key sealed). */
export const samlSpKey = (): Deno.KvKey => ["saml_sp"];
/** Protected environments of a namespace (lib/store/protection.ts). */
export const protectionKey = (t: string, ns: string): Deno.KvKey => ["ns_protection", t, ns];
/** A change request (lib/store/change_requests.ts). */
export const changeRequestKey = (t: string, ns: string, id: string): Deno.KvKey => [
  "change_request",
  t,
  ns,
  id,
];
/** Prefix of a namespace's change requests (id order: time order). */
export const changeRequestPrefix = (t: string, ns: string): Deno.KvKey => ["change_request", t, ns];
/** Prefix of every change request of every namespace. */
export const allChangeRequestsPrefix = (): Deno.KvKey => ["change_request"];
/** One comment on a change request. */
export const changeCommentKey = (
  t: string,
  ns: string,
  id: string,
  comment: string,
): Deno.KvKey => [
  "change_comment",
  t,
  ns,
  id,
  comment,
];
/** Prefix of a change request's comments (time order). */
export const changeCommentPrefix = (t: string, ns: string, id: string): Deno.KvKey => [
  "change_comment",
  t,
  ns,
  id,
];
/** A tenant's webhook (lib/store/webhooks.ts). */
export const webhookKey = (t: string, id: string): Deno.KvKey => ["webhook", t, id];
/** Prefix of a tenant's webhooks. */
export const webhookPrefix = (t: string): Deno.KvKey => ["webhook", t];
/** Prefix of every webhook of every tenant. */
export const allWebhooksPrefix = (): Deno.KvKey => ["webhook"];
/** Checked and set by every change to a tenant's webhooks. */
export const webhookLockKey = (t: string): Deno.KvKey => ["webhook_lock", t];
/** One delivery of a webhook (id order: time order). */
export const webhookDeliveryKey = (t: string, webhook: string, id: string): Deno.KvKey => [
  "webhook_delivery",
  t,
  webhook,
  id,
];
/** Prefix of a webhook's deliveries. */
export const webhookDeliveryPrefix = (t: string, webhook: string): Deno.KvKey => [
  "webhook_delivery",
  t,
  webhook,
];
/** The delivery made for an audit entry (the fan-out's idempotency key). */
export const webhookEntryKey = (t: string, webhook: string, entry: string): Deno.KvKey => [
  "webhook_entry",
  t,
  webhook,
  entry,
];
/** Prefix of a webhook's entry keys. */
export const webhookEntryPrefix = (t: string, webhook: string): Deno.KvKey => [
  "webhook_entry",
  t,
  webhook,
];
/** Counter of a webhook's deliveries. */
export const webhookDeliverySeqKey = (t: string, webhook: string): Deno.KvKey => [
  "webhook_delivery_seq",
  t,
  webhook,
];
