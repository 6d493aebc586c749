/**
 * A tenant's login policy: reading and setting it. Reading needs
 * `tenant.login` (superadmin, or a tenant admin, human or token); setting
 * needs `tenant.login.set` (superadmin, or a human tenant admin), validates
 * the whole policy (lib/login/policy.ts) and writes it with its
 * `tenant.login_policy_changed` audit entry (naming the fields that
 * changed) in one commit.
 *
 * Who may change what, with escalation in mind (a principal must not be
 * able to grant rights it does not hold, directly or through a policy):
 *
 * | part | who may change it |
 * |---|---|
 * | the identity provider: OIDC `issuer`, `client_id`, `client_secret_ref`; SAML `idp_metadata_xml`, `idp_metadata_url`, `email_attribute` | superadmin |
 * | admission: the method, `allowed_email_domains` / `domains` | superadmin; human tenant admin |
 * | admin mapping: `admin_groups`, `groups_claim`, `groups_attribute` | superadmin; human tenant admin |
 * | anything, by a service token other than superadmin | nobody |
 *
 * The identity provider is the superadmin's: an OIDC secret reference makes
 * the server read a secret from its own environment or disk and send it to
 * the issuer, so a tenant admin who could choose both could make the server
 * send any of its files or variables to a site of their choosing; and
 * whoever names a SAML provider or its email attribute decides which
 * emails its assertions may claim (user records are keyed by email across
 * tenants), and a URL makes the server fetch from a place of the setter's
 * choosing. Admission and the admin mapping decide who reads the tenant and
 * who is its admin: a human tenant admin holds those rights and may pass
 * them on; a tenant-admin token does not (it may not mint a tenant-admin
 * token or add a tenant admin), so it may not change them either.
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { parseLoginPolicy } from "../login/policy.ts";
import { authorize, can } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { LoginPolicy, LoginPolicyRecord } from "../protocol/login_policy.ts";
import { eventAuditEntry } from "../store/audit.ts";
import { findLoginPolicy, putLoginPolicy } from "../store/login_policies.ts";
import { getTenant } from "../store/tenants.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import { isSuperadmin } from "./tenants.ts";

/**
 * Sets a tenant's login policy: 403 without `tenant.login.set`, 404 for an
 * unknown tenant, 400 for a bad policy (read only once authorised).
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param tenant the tenant slug
 * @param body the policy JSON, read only once authorised
 * @param ctx request id
 * @returns the stored record
 *
 * @example
 * ```ts
 * import { setLoginPolicy, getLoginPolicy } from "./login_policies.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { bootstrapSuperadmin } from "../auth/bootstrap.ts";
 * import { authenticate } from "../auth/principal.ts";
 * import { createTenant } from "../store/tenants.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const boot = await bootstrapSuperadmin(kv, key);
 * const admin = await authenticate({ kv, key }, `Bearer ${boot.secret}`, { requestId: "r1" });
 * await createTenant(kv, { slug: "acme", created_by: boot.token.id });
 * await setLoginPolicy({ kv, key, runtime }, admin, "acme", { method: "email", domains: ["acme.com"] }, { requestId: "r1" });
 * if ((await getLoginPolicy({ kv }, admin, "acme")).policy.method !== "email") throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function setLoginPolicy(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  body: Deferred<unknown>,
  ctx: RequestContext,
): Promise<LoginPolicyRecord> {
  return withSpan("cfgtool.service.set_login_policy", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.login.set", { tenant }, { memo: memoOf(deps) });
    await getTenant(deps.kv, tenant);
    const policy = parseLoginPolicy(await resolveInput(body));
    const now = clockOf(deps)();
    const previous = await findLoginPolicy(deps.kv, tenant);
    if (policy.method === "oidc" && !isSuperadmin(principal)) {
      const before = previous?.policy;
      const same = before?.method === "oidc" && before.issuer === policy.issuer &&
        before.client_id === policy.client_id &&
        before.client_secret_ref === policy.client_secret_ref;
      if (!same) {
        throw new ForbiddenError(
          "Only a superadmin can set an OIDC policy's issuer, client_id or client_secret_ref " +
            "(the server sends the secret to the issuer); a tenant admin may change the rest",
        );
      }
    }
    if (policy.method === "saml" && !isSuperadmin(principal)) {
      const before = previous?.policy;
      const same = before?.method === "saml" &&
        before.idp_metadata_xml === policy.idp_metadata_xml &&
        before.idp_metadata_url === policy.idp_metadata_url &&
        before.email_attribute === policy.email_attribute;
      if (!same) {
        throw new ForbiddenError(
          "Only a superadmin can set a SAML policy's identity provider (idp_metadata_xml or " +
            "idp_metadata_url) or email_attribute; a tenant admin may change the rest",
        );
      }
    }
    const record: LoginPolicyRecord = {
      tenant_slug: tenant,
      policy,
      updated_at: now.toISOString(),
      updated_by: principalId(principal),
    };
    await putLoginPolicy(
      deps.kv,
      record,
      eventAuditEntry("tenant.login_policy_changed", actorOf(principal, ctx.requestId), now, {
        tenant_slug: tenant,
        details: {
          method: policy.method,
          previous_method: previous?.policy.method ?? null,
          changed: changedFields(previous?.policy, policy),
        },
      }),
    );
    deps.runtime.credentials.changed(); // admin groups decide who is a tenant admin
    return record;
  });
}

/**
 * Reads a tenant's login policy: 403 without `tenant.login`, 404
 * `not_found` when the tenant has none (`tenant_not_found` when it does
 * not exist).
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @returns the record
 *
 * @example
 * ```ts
 * import { getLoginPolicy } from "./login_policies.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * let code = "";
 * try { await getLoginPolicy({ kv }, p, "acme"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export function getLoginPolicy(
  deps: { kv: Deno.Kv },
  principal: Principal,
  tenant: string,
): Promise<LoginPolicyRecord> {
  return withSpan("cfgtool.service.get_login_policy", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.login", { tenant }, { memo: memoOf(deps) });
    await getTenant(deps.kv, tenant);
    const record = await findLoginPolicy(deps.kv, tenant);
    if (record === null) {
      throw new NotFoundError("not_found", `Tenant ${tenant} has no login policy`);
    }
    return record;
  });
}

/** What the console's login-policy form is drawn from. */
export interface LoginPolicyForm {
  /** The current record, or null when the tenant has none. */
  record: LoginPolicyRecord | null;
  /** Whether the caller may set the identity provider's fields too. */
  superadmin: boolean;
}

/**
 * The login policy as the form that changes it starts: 403 without
 * `tenant.login.set`, 404 for an unknown tenant.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @returns the current record (or null) and whether the caller is a superadmin
 *
 * @example
 * ```ts
 * import { loginPolicyForm } from "./login_policies.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * let code = "";
 * try { await loginPolicyForm({ kv }, p, "acme"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export function loginPolicyForm(
  deps: { kv: Deno.Kv },
  principal: Principal,
  tenant: string,
): Promise<LoginPolicyForm> {
  return withSpan("cfgtool.service.login_policy_form", { "cfgtool.tenant": tenant }, async () => {
    await authorize(deps.kv, principal, "tenant.login.set", { tenant }, { memo: memoOf(deps) });
    await getTenant(deps.kv, tenant);
    return {
      record: await findLoginPolicy(deps.kv, tenant),
      superadmin: isSuperadmin(principal),
    };
  });
}

/**
 * Whether the caller may change a tenant's login policy (the people page
 * links to the form for those who may). Refuses nothing.
 *
 * @param deps store
 * @param principal the caller
 * @param tenant the tenant slug
 * @returns true for a superadmin or a human tenant admin
 *
 * @example
 * ```ts
 * import { mayChangeLoginPolicy } from "./login_policies.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * if (await mayChangeLoginPolicy({ kv }, p, "acme")) throw new Error();
 * kv.close();
 * ```
 */
export function mayChangeLoginPolicy(
  deps: { kv: Deno.Kv },
  principal: Principal,
  tenant: string,
): Promise<boolean> {
  return can(deps.kv, principal, "tenant.login.set", { tenant }, { memo: memoOf(deps) });
}

/**
 * The fields of a login policy that differ between two policies (every
 * field of either when the method changed), sorted: what a
 * `tenant.login_policy_changed` audit entry names.
 *
 * @param before the previous policy, if any
 * @param after the new policy
 * @returns the names of the fields that changed
 *
 * @example
 * ```ts
 * import { changedFields } from "./login_policies.ts";
 * const before = { method: "email" as const, domains: ["acme.com"] };
 * if (changedFields(before, { method: "email", domains: ["acme.com", "acme.org"] }).join() !== "domains") {
 *   throw new Error();
 * }
 * if (changedFields(before, before).length !== 0) throw new Error();
 * ```
 */
export function changedFields(before: LoginPolicy | undefined, after: LoginPolicy): string[] {
  const a = (before ?? {}) as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).sort();
}
