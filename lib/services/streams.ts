/**
 * What the push channel reads: who may open an event stream on which
 * namespaces ({@linkcode admitEventStream}), and the closure archive of one
 * version ({@linkcode closureFor}), by a bearer principal or by the signed
 * token an event's snapshot URL carries. The stream itself (subscriptions,
 * deltas, the fan-out) is the event hub's (lib/events/); re-authorisation
 * before each delivery is the stream guard's (lib/auth/stream_guard.ts).
 *
 * @module
 */
import { authorize } from "../auth/permissions.ts";
import { memoOf } from "../auth/level_memo.ts";
import type { Principal } from "../auth/principal.ts";
import { verifyClosureToken } from "../closure/signed_token.ts";
import { CfgtoolError, NotFoundError } from "../errors.ts";
import { closureArchive, loadVersion } from "../events/closures.ts";
import { SharedReads } from "../events/shared_reads.ts";
import type { FlagSelection } from "../protocol/subscription.ts";
import { getNamespace } from "../store/namespaces.ts";
import { findVersion, getHead } from "../store/versions.ts";
import { clockOf, type ServiceDeps } from "./deps.ts";

/**
 * Whether a namespace has a head, per store: streams that open while one
 * such read is under way share the next one (a read made after each of
 * them asked, so a namespace deleted before a stream opens is never seen
 * as existing), so a reconnect storm costs a few reads, not one per stream.
 */
const headChecks = new WeakMap<Deno.Kv, SharedReads<string, boolean>>();

function namespaceExists(kv: Deno.Kv, tenant: string, namespace: string): Promise<boolean> {
  let checks = headChecks.get(kv);
  if (checks === undefined) {
    checks = new SharedReads(async (key) => {
      const cut = key.indexOf("\u0000");
      return await getHead(kv, key.slice(0, cut), key.slice(cut + 1)) !== null;
    });
    headChecks.set(kv, checks);
  }
  return checks.read(`${tenant}\u0000${namespace}`);
}

/**
 * Admits an event stream of `principal` on `namespaces` of `tenant`: each
 * one it may read (`manifest.read`, 403 otherwise) and that exists (400
 * `invalid_subscription`, reason `unknown_namespace`, naming it). The
 * existence checks of streams opening together share their reads.
 *
 * @param deps store, runtime
 * @param principal the caller
 * @param tenant the connection's tenant
 * @param namespaces the subscribed namespace slugs
 * @returns nothing
 *
 * @example
 * ```ts
 * import { admitEventStream } from "./streams.ts";
 * const kv = await Deno.openKv(":memory:");
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * let code = "";
 * try { await admitEventStream({ kv, key: undefined as never, runtime: undefined as never }, p, "acme", ["web"]); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "forbidden") throw new Error(code);
 * kv.close();
 * ```
 */
export async function admitEventStream(
  deps: ServiceDeps,
  principal: Principal,
  tenant: string,
  namespaces: readonly string[],
): Promise<void> {
  for (const namespace of namespaces) {
    await authorize(deps.kv, principal, "manifest.read", { tenant, namespace }, {
      memo: memoOf(deps),
    });
    if (!await namespaceExists(deps.kv, tenant, namespace)) {
      throw new CfgtoolError(
        "invalid_subscription",
        `No namespace ${namespace} in tenant ${tenant}`,
        { status: 400, details: { reason: "unknown_namespace", namespace } },
      );
    }
  }
}

/** One closure to read: of which version of which namespace, for which subscription. */
export interface ClosureRequest {
  tenant: string;
  namespace: string;
  version: number;
  /** The subscription as the URL carries it (URL-safe base64 of the flag list). */
  subscription: string;
  /** The flags it selects. */
  flags: FlagSelection;
}

/** A closure archive and its hash. */
export interface ClosureAnswer {
  archive: Uint8Array;
  closureHash: string;
}

/**
 * The closure archive of one version for one subscription, for a bearer
 * `principal` with `manifest.read`, or, without one, for the holder of the
 * event's signed `token` (401 `closure_token_invalid` when it does not sign
 * exactly this closure or has expired). 404 `namespace_not_found` for a
 * version above the head; 410 `closure_unavailable` for a version pruned
 * past retention.
 *
 * @param deps store, key, runtime, clock
 * @param who the bearer principal, or the signed token
 * @param req the closure
 * @returns the archive and its hash
 *
 * @example
 * ```ts ignore
 * const { archive, closureHash } = await closureFor(deps, { principal }, req);
 * ```
 */
export async function closureFor(
  deps: ServiceDeps,
  who: { principal: Principal } | { token: string },
  req: ClosureRequest,
): Promise<ClosureAnswer & { head: number }> {
  const { kv } = deps;
  const { tenant, namespace, version } = req;
  if ("principal" in who) {
    await authorize(kv, who.principal, "manifest.read", { tenant, namespace }, {
      memo: memoOf(deps),
    });
  } else {
    const signed = await verifyClosureToken(
      deps.key,
      who.token,
      { tenant, namespace, version, subscription: req.subscription },
      clockOf(deps)(),
    );
    if (signed === null) {
      throw new CfgtoolError(
        "closure_token_invalid",
        "Signed closure token is invalid, expired or for another closure",
        { status: 401 },
      );
    }
  }
  await getNamespace(kv, tenant, namespace);
  const head = await getHead(kv, tenant, namespace);
  if (head === null || version > head.version) {
    throw new NotFoundError(
      "namespace_not_found",
      `No version ${version} of ${tenant}/${namespace}: the current version is ${
        head?.version ?? 0
      }`,
    );
  }
  const { runtime } = deps;
  const meta = await findVersion(kv, tenant, namespace, version);
  const entry = meta === null ? null : await closureArchive(
    runtime.closures,
    tenant,
    namespace,
    meta,
    req.flags,
    null,
    () => loadVersion(kv, tenant, namespace, version, runtime.workers),
    runtime.workers,
  );
  if (entry === null) {
    throw new CfgtoolError(
      "closure_unavailable",
      `The closure of version ${version} was pruned past retention; fetch a newer version`,
      { status: 410, details: { current_version: head.version } },
    );
  }
  return { archive: entry.archive, closureHash: entry.closureHash, head: head.version };
}
