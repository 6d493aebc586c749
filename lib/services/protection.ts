/**
 * Protected environments: per namespace and environment, how many
 * approvals (1–5) a change that affects the environment needs before it
 * lands. Read by anyone who may read the namespace; set only by people who
 * administer it (human tenant and namespace admins) and superadmins,
 * audited `namespace.protection_changed`.
 *
 * The guard ({@linkcode protectionGuard}) runs inside the commit of every
 * new version (push, rollback, console change, change request apply)
 * against the exact head it replaces: the environments whose behaviour
 * the new files change (lib/flags/impact.ts) are compared with the
 * protected ones, and a commit that affects a protected environment is
 * refused with 409 `approval_required` naming them, unless it is the
 * apply of a change request with enough approvals, or a superadmin's
 * break-glass commit (its reason goes into a
 * `manifest.protection_bypassed` audit entry of the same commit).
 *
 * @module
 */
import type { RequestContext } from "../auth/deps.ts";
import { actorOf, type Principal, principalId } from "../auth/principal.ts";
import { CfgtoolError, ForbiddenError, InvalidRequestError } from "../errors.ts";
import { SLUG_PATTERN } from "../protocol/slug.ts";
import { eventAuditEntry } from "../store/audit.ts";
import {
  type EnvironmentProtection,
  type ProtectionRecord,
  putProtection,
  readProtection,
} from "../store/protection.ts";
import { type CommitAdditions, type Head, readFiles } from "../store/versions.ts";
import { withSpan } from "../telemetry/spans.ts";
import { clockOf, type Deferred, resolveInput, type ServiceDeps } from "./deps.ts";
import { isSuperadmin } from "./tenants.ts";
import { manifestTarget, type NamespaceRef, refAttributes } from "./versions.ts";

/** The protection a namespace's environments have, as the API shows it. */
export type { EnvironmentProtection, ProtectionRecord };

/** The most environments a protection names: as many as a manifest may declare. */
export const MAX_PROTECTED_ENVIRONMENTS = 100;

/** The most approvals an environment may require. */
export const MAX_REQUIRED_APPROVALS = 5;

/**
 * The change touches protected environments: 409 `approval_required`,
 * `details.environments` naming them (and the approvals they need).
 */
export class ApprovalRequiredError extends CfgtoolError {
  /** The protected environments the change affects. */
  readonly environments: string[];

  /**
   * @param environments the protected environments affected
   * @param requiredApprovals the approvals they need (the largest)
   */
  constructor(environments: string[], requiredApprovals: number) {
    super(
      "approval_required",
      `This change affects protected environment${environments.length === 1 ? "" : "s"} ` +
        `${environments.join(", ")}: open a change request (propose it) and have ` +
        `${requiredApprovals} ${requiredApprovals === 1 ? "person" : "people"} approve it`,
      { status: 409, details: { environments, required_approvals: requiredApprovals } },
    );
    this.name = "ApprovalRequiredError";
    this.environments = environments;
  }
}

/**
 * A namespace's protected environments: anyone who may read the namespace
 * (403 otherwise, 404 for an unknown namespace).
 *
 * @param deps store, runtime
 * @param principal the caller
 * @param ref the namespace
 * @returns the protection record
 *
 * @example
 * ```ts ignore
 * const { environments } = await getProtection(deps, principal, { tenant: "acme", namespace: "web" });
 * ```
 */
export function getProtection(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
): Promise<ProtectionRecord> {
  return withSpan("cfgtool.service.get_protection", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "namespace.read");
    return (await readProtection(deps.kv, ref.tenant, ref.namespace)).record;
  });
}

/**
 * Sets a namespace's protected environments (the whole set): human tenant
 * and namespace admins and superadmins only (403, nothing written), 404 for
 * an unknown namespace, 400 for a bad body; audited
 * `namespace.protection_changed` with the set before and after.
 *
 * @param deps store, runtime, clock
 * @param principal the caller
 * @param ref the namespace
 * @param environments the protected environments ({@linkcode parseProtection} of the body), read once authorised
 * @param ctx the request
 * @returns the new record
 *
 * @example
 * ```ts ignore
 * await setProtection(deps, admin, ref, () => parseProtection(body), ctx);
 * ```
 */
export function setProtection(
  deps: ServiceDeps,
  principal: Principal,
  ref: NamespaceRef,
  environments: Deferred<Record<string, EnvironmentProtection>>,
  ctx: RequestContext,
): Promise<ProtectionRecord> {
  return withSpan("cfgtool.service.set_protection", refAttributes(ref), async () => {
    await manifestTarget(deps, principal, ref, "namespace.protect");
    const asked = await resolveInput(environments);
    const now = clockOf(deps)();
    const previous = (await readProtection(deps.kv, ref.tenant, ref.namespace)).record;
    const record: ProtectionRecord = {
      environments: asked,
      updated_at: now.toISOString(),
      updated_by: principalId(principal),
    };
    await putProtection(
      deps.kv,
      ref.tenant,
      ref.namespace,
      record,
      eventAuditEntry("namespace.protection_changed", actorOf(principal, ctx.requestId), now, {
        tenant_slug: ref.tenant,
        namespace_slug: ref.namespace,
        details: { environments: asked, previous: previous.environments },
      }),
    );
    return record;
  });
}

/**
 * Reads and checks a protection body: `{environments: {env:
 * {required_approvals}}}` with environment keys and 0–5 approvals (0 and
 * absent leave the environment unprotected).
 *
 * @param body the request body
 * @returns the protected environments
 *
 * @example
 * ```ts
 * import { parseProtection } from "./protection.ts";
 * const p = parseProtection({ environments: { production: { required_approvals: 2 }, staging: { required_approvals: 0 } } });
 * if (JSON.stringify(p) !== '{"production":{"required_approvals":2}}') throw new Error();
 * ```
 */
export function parseProtection(body: unknown): Record<string, EnvironmentProtection> {
  const envs = (body as { environments?: unknown } | null)?.environments;
  if (envs === null || typeof envs !== "object" || Array.isArray(envs)) {
    throw new InvalidRequestError(
      'The body is {"environments": {"<environment>": {"required_approvals": 1}}}',
      { details: { field: "environments" } },
    );
  }
  const entries = Object.entries(envs as Record<string, unknown>);
  if (entries.length > MAX_PROTECTED_ENVIRONMENTS) {
    throw new InvalidRequestError(
      `At most ${MAX_PROTECTED_ENVIRONMENTS} environments (a manifest declares no more)`,
      { details: { field: "environments" } },
    );
  }
  const out: Record<string, EnvironmentProtection> = {};
  for (const [env, value] of entries) {
    if (!SLUG_PATTERN.test(env)) {
      throw new InvalidRequestError(
        `${JSON.stringify(env.slice(0, 80))} is not an environment key`,
        {
          details: { field: "environments" },
        },
      );
    }
    const n = (value as { required_approvals?: unknown } | null)?.required_approvals;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > MAX_REQUIRED_APPROVALS) {
      throw new InvalidRequestError(
        `required_approvals of ${env} must be a whole number from 0 to ${MAX_REQUIRED_APPROVALS}`,
        { details: { field: `environments.${env}.required_approvals` } },
      );
    }
    if (n > 0) out[env] = { required_approvals: n };
  }
  return out;
}

/** How a commit may pass protected environments. */
export interface GuardOptions {
  /**
   * A superadmin's break-glass reason (`X-Cfgtool-Bypass-Protection`): the
   * commit lands anyway, with a `manifest.protection_bypassed` audit entry.
   */
  bypass?: { principal: Principal; reason: string; requestId: string | null };
  /** The approvals of the change request being applied. */
  approvals?: number;
}

/**
 * The protected environments a change affects, and the approvals they
 * need (the largest over them; 0 when none is affected).
 *
 * @param protectedEnvs the namespace's protected environments
 * @param impact the environments the change affects
 * @returns the protected ones among them, and the approvals they need
 *
 * @example
 * ```ts
 * import { protectedImpact } from "./protection.ts";
 * const p = protectedImpact({ production: { required_approvals: 2 } }, ["production", "staging"]);
 * if (p.environments.join() !== "production" || p.required !== 2) throw new Error();
 * ```
 */
export function protectedImpact(
  protectedEnvs: Readonly<Record<string, EnvironmentProtection>>,
  impact: readonly string[],
): { environments: string[]; required: number } {
  const environments = impact.filter((env) => Object.hasOwn(protectedEnvs, env));
  const required = Math.max(0, ...environments.map((e) => protectedEnvs[e]!.required_approvals));
  return { environments, required };
}

/**
 * The guard of a commit of `files` into `ref` (see the module
 * documentation): given the head the commit replaces, reads the
 * protection and the head's files, and refuses, lets pass, or lets pass
 * with a break-glass audit entry. The commit also checks that the
 * protection did not change meanwhile.
 *
 * @param deps store
 * @param ref the namespace
 * @param files the new version's files
 * @param options break-glass, or a change request's approvals
 * @returns the guard for `commitVersion`
 *
 * @example
 * ```ts ignore
 * await commitVersion(kv, { ...input, guard: protectionGuard(deps, ref, files, {}) });
 * ```
 */
export function protectionGuard(
  deps: Pick<ServiceDeps, "kv" | "now" | "runtime">,
  ref: NamespaceRef,
  files: ReadonlyMap<string, Uint8Array>,
  options: GuardOptions,
): (head: Head) => Promise<CommitAdditions> {
  return async (head) => {
    const { record, entry } = await readProtection(deps.kv, ref.tenant, ref.namespace);
    const checks = [entry];
    if (Object.keys(record.environments).length === 0) return { checks };
    const before = await readFiles(deps.kv, ref.tenant, ref.namespace, head.version);
    // off the event loop when large
    const { impact } = await deps.runtime.workers.compare(before, files);
    const hit = protectedImpact(record.environments, impact);
    if (hit.environments.length === 0) return { checks };
    if (options.approvals !== undefined && options.approvals >= hit.required) return { checks };
    const bypass = options.bypass;
    if (bypass === undefined) throw new ApprovalRequiredError(hit.environments, hit.required);
    if (!isSuperadmin(bypass.principal)) {
      throw new ForbiddenError(
        "Only a superadmin may bypass protected environments; open a change request instead",
      );
    }
    const now = deps.now?.() ?? new Date();
    return {
      checks,
      details: { protection_bypassed: true },
      audit: (version) => [
        eventAuditEntry(
          "manifest.protection_bypassed",
          actorOf(bypass.principal, bypass.requestId),
          now,
          {
            tenant_slug: ref.tenant,
            namespace_slug: ref.namespace,
            details: { version, environments: hit.environments, reason: bypass.reason },
          },
        ),
      ],
    };
  };
}
