/**
 * What a relayed token may read, decided from its verdict
 * (lib/relay/verdicts.ts) and the relay's own copy of each namespace. The
 * rules are those of the service's permission table (docs/api.md, "Who may
 * do what") for the only two actions a relay serves, for service tokens:
 *
 * | token | `manifest.read` (events, closure, manifest) | `evaluate` |
 * |---|---|---|
 * | `superadmin` | every namespace | every namespace |
 * | `tenant-admin` | its tenant | its tenant |
 * | `namespace-read`, `namespace-write` | its namespace | its namespace |
 * | `namespace-client` | never | its (tenant, namespace, environment), while `public_evaluate = true` in the relay's copy of `namespace.toml` |
 *
 * A refusal is 403 `forbidden`, with the same words as the service's.
 * (lib/auth/permissions.ts is the service's one place for these decisions;
 * the layering lets only lib/services call it, and it needs the KV for the
 * roles of people, which a relay never serves.)
 *
 * @module
 */
import { ForbiddenError } from "../errors.ts";
import type { Verdict } from "./verdicts.ts";

/** A (tenant, namespace[, environment]) a request is about. */
export interface ReadTarget {
  tenant: string;
  namespace: string;
  environment?: string;
}

/** Where the public gate reads an environment's `public_evaluate`. */
export type PublicGate = (tenant: string, namespace: string, environment: string) => boolean;

/**
 * Throws 403 unless the token may read the manifest of the target.
 *
 * @param v the verdict
 * @param t the target
 * @returns nothing
 *
 * @example
 * ```ts
 * import { assertMayRead } from "./access.ts";
 * const v = { id: "tok_1", type: "namespace-read" as const, tenant: "acme", namespace: "web",
 *   environment: null, allowed_origins: [], expires_at: null, principal: {} };
 * assertMayRead(v, { tenant: "acme", namespace: "web" });
 * let code = "";
 * try { assertMayRead(v, { tenant: "acme", namespace: "api" }); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * ```
 */
export function assertMayRead(v: Verdict, t: ReadTarget): void {
  if (v.type === "namespace-client") {
    throw new ForbiddenError(
      "A namespace-client token may only evaluate flags; it cannot read the manifest",
    );
  }
  assertBinding(v, t);
}

/**
 * Throws 403 unless the token may evaluate the target's environment.
 *
 * @param v the verdict
 * @param t the target, environment included
 * @param isPublic the relay's copy of `public_evaluate`
 * @returns nothing
 *
 * @example
 * ```ts
 * import { assertMayEvaluate } from "./access.ts";
 * const v = { id: "tok_2", type: "namespace-client" as const, tenant: "acme", namespace: "web",
 *   environment: "prod", allowed_origins: [], expires_at: null, principal: {} };
 * const t = { tenant: "acme", namespace: "web", environment: "prod" };
 * assertMayEvaluate(v, t, () => true);
 * let code = "";
 * try { assertMayEvaluate(v, t, () => false); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * ```
 */
export function assertMayEvaluate(v: Verdict, t: ReadTarget, isPublic: PublicGate): void {
  assertBinding(v, t);
  if (v.type !== "namespace-client") return;
  if (t.environment !== v.environment) {
    throw new ForbiddenError(
      `Token ${v.id} is bound to environment ${v.environment}, not ${t.environment}`,
      { details: { environment: t.environment } },
    );
  }
  if (!isPublic(t.tenant, t.namespace, t.environment)) {
    throw new ForbiddenError(
      `Environment ${t.environment} of ${t.tenant}/${t.namespace} does not allow public evaluation`,
      { details: { tenant: t.tenant, namespace: t.namespace, environment: t.environment } },
    );
  }
}

/**
 * Whether the token may read the manifest of the target (for filtering lists).
 *
 * @param v the verdict
 * @param t the target
 * @returns true or false
 *
 * @example
 * ```ts
 * import { mayRead } from "./access.ts";
 * const v = { id: "tok_3", type: "tenant-admin" as const, tenant: "acme", namespace: null,
 *   environment: null, allowed_origins: [], expires_at: null, principal: {} };
 * if (!mayRead(v, { tenant: "acme", namespace: "web" }) || mayRead(v, { tenant: "beta", namespace: "web" })) {
 *   throw new Error();
 * }
 * ```
 */
export function mayRead(v: Verdict, t: ReadTarget): boolean {
  try {
    assertMayRead(v, t);
    return true;
  } catch {
    return false;
  }
}

function assertBinding(v: Verdict, t: ReadTarget): void {
  if (v.type === "superadmin") return;
  if (t.tenant !== v.tenant) {
    throw new ForbiddenError(`Token ${v.id} is bound to tenant ${v.tenant}, not ${t.tenant}`, {
      details: { tenant: t.tenant },
    });
  }
  if (v.type === "tenant-admin") return;
  if (t.namespace !== v.namespace) {
    throw new ForbiddenError(
      `Token ${v.id} is bound to namespace ${v.namespace}, not ${t.namespace}`,
      { details: { namespace: t.namespace } },
    );
  }
}
