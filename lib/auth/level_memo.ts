/**
 * A person's role level on a tenant or namespace, remembered per process
 * so that authorising a signed-in person costs no KV read, with the same
 * revocation guarantee as the credential cache (lib/auth/credential_cache.ts).
 *
 * A level is computed from the store (the tenant's record, its login
 * policy's admin groups, the tenant and namespace admin lists) and kept
 * under the cache's {@linkcode CredentialCache.generation}, taken before
 * the first read. Every write that can change a level bumps the credential
 * epoch in its own commit (admin lists, login policies, tenant creation
 * and deletion, namespace deletion, user deletion), and the generation
 * moves whenever this process sees the epoch move or makes such a change
 * itself; so a remembered level is used only while nothing that could
 * change it has been committed, as far as the epoch poll can tell. A
 * level is not kept when the generation moved while it was computed, and
 * nothing is remembered (every check reads the KV) while the cache cannot
 * tell: not started, closed, or no poll succeeded lately.
 *
 * The key is everything about the session that the level depends on: the
 * user, when the session was made, the tenants its sign-in admitted it
 * to, its identity provider's groups, and the tenant and namespace asked
 * about. It is kept as a SHA-256, so long group lists cost no memory.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { CredentialCache } from "./credential_cache.ts";
import type { SessionPrincipal } from "./principal.ts";

/** Levels kept at most per memo; when full it starts over. */
const MAX_LEVELS = 10_000;

/**
 * Remembered levels of one credential cache's process.
 *
 * @example
 * ```ts
 * import { LevelMemo } from "./level_memo.ts";
 * import { CredentialCache } from "./credential_cache.ts";
 * import { bumpCredentialEpoch } from "../store/credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * const cache = new CredentialCache(kv, { pollMs: 60_000 });
 * const memo = new LevelMemo(cache);
 * const p = { kind: "session" as const, user_id: "usr_1", session_id: "ssn_1", tenants: [], groups: [], since: "" };
 * let reads = 0;
 * const read = () => Promise.resolve(`level ${++reads}`);
 * await memo.level(p, "acme", undefined, read); // not started: computed, not kept
 * await cache.start();
 * await memo.level(p, "acme", undefined, read);
 * if (await memo.level(p, "acme", undefined, read) !== "level 2" || reads !== 2) throw new Error();
 * await bumpCredentialEpoch(kv.atomic()).commit(); // an admin removed, anywhere
 * await cache.sync(); // what the poll does
 * if (await memo.level(p, "acme", undefined, read) !== "level 3") throw new Error();
 * cache.close();
 * kv.close();
 * ```
 */
export class LevelMemo {
  readonly #cache: CredentialCache;
  readonly #max: number;
  readonly #levels = new Map<string, string>();
  /** The generation the kept levels were computed under. */
  #generation: number | null = null;
  /** Checks answered from the memo (for tests). */
  hits = 0;
  /** Checks that read the store (for tests). */
  misses = 0;

  /**
   * @param cache the credential cache whose epoch and staleness rule it follows
   * @param maxEntries levels kept at most; when full it starts over (default 10,000)
   */
  constructor(cache: CredentialCache, maxEntries = MAX_LEVELS) {
    this.#cache = cache;
    this.#max = maxEntries;
  }

  /**
   * The level of a person on a tenant (and namespace): remembered when it
   * still holds, else `compute`d from the store and remembered when nothing
   * changed meanwhile.
   *
   * @param p the session
   * @param tenant the tenant
   * @param namespace the namespace, if any
   * @param compute reads the level from the store
   * @returns the level
   */
  async level<L extends string>(
    p: SessionPrincipal,
    tenant: string,
    namespace: string | undefined,
    compute: () => Promise<L>,
  ): Promise<L> {
    const before = this.#cache.generation;
    if (before === null) {
      this.misses++;
      return await compute();
    }
    if (before !== this.#generation) {
      this.#levels.clear();
      this.#generation = before;
    }
    const key = levelKey(p, tenant, namespace);
    const known = this.#levels.get(key);
    if (known !== undefined) {
      this.hits++;
      return known as L;
    }
    this.misses++;
    const level = await compute();
    // kept only when nothing changed while it was read (the generation only grows)
    if (this.#cache.generation === before && this.#generation === before) {
      if (this.#levels.size >= this.#max) this.#levels.clear();
      this.#levels.set(key, level);
    }
    return level;
  }
}

/** The memo key of a question: a SHA-256 of everything the answer depends on. */
function levelKey(p: SessionPrincipal, tenant: string, namespace: string | undefined): string {
  const facts = [p.user_id, p.since, p.tenants, p.groups, tenant, namespace ?? null];
  return createHash("sha256").update(JSON.stringify(facts)).digest("base64");
}

const MEMOS = new WeakMap<CredentialCache, LevelMemo>();

/**
 * The level memo of a credential cache (one per cache, made on first use).
 *
 * @param cache the process's credential cache
 * @returns its memo
 *
 * @example
 * ```ts
 * import { levelMemoOf } from "./level_memo.ts";
 * import { CredentialCache } from "./credential_cache.ts";
 * const kv = await Deno.openKv(":memory:");
 * const cache = new CredentialCache(kv);
 * if (levelMemoOf(cache) !== levelMemoOf(cache)) throw new Error();
 * kv.close();
 * ```
 */
export function levelMemoOf(cache: CredentialCache): LevelMemo {
  let memo = MEMOS.get(cache);
  if (memo === undefined) MEMOS.set(cache, memo = new LevelMemo(cache));
  return memo;
}

/**
 * The credential cache of a service call's deps, when the caller passed
 * the server's runtime (the `memo` option of `authorize`): a route passes
 * its whole deps even to a service that declares only the store.
 *
 * @param deps the deps a service was given
 * @returns the runtime's credential cache, or undefined
 *
 * @example
 * ```ts
 * import { memoOf } from "./level_memo.ts";
 * import { CredentialCache } from "./credential_cache.ts";
 * const kv = await Deno.openKv(":memory:");
 * const credentials = new CredentialCache(kv);
 * const serverDeps = { kv, runtime: { credentials } }; // what a route passes
 * if (memoOf({ kv }) !== undefined || memoOf(serverDeps) !== credentials) throw new Error();
 * kv.close();
 * ```
 */
export function memoOf(deps: { kv: Deno.Kv }): CredentialCache | undefined {
  const credentials = (deps as { runtime?: { credentials?: unknown } }).runtime?.credentials;
  return credentials instanceof CredentialCache ? credentials : undefined;
}
