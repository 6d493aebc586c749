/**
 * The Origin index behind CORS preflights of the evaluation endpoints
 * (lib/http/cors.ts): which Origins the active `namespace-client` tokens
 * list, and for which bindings. One scan of the token records per process,
 * rebuilt every 30 s, and at most once a second on a miss, so a new
 * token's origins are honoured by preflights within about a second. Owned
 * by the server's runtime (lib/runtime/runtime.ts).
 *
 * @module
 */
import { eachTokenRecord, effectiveStatus } from "../store/tokens.ts";

/** Options of {@linkcode ClientOriginIndex}. */
export interface ClientOriginIndexOptions {
  /** Rebuild at least this often, ms (default 30 s). */
  ttlMs?: number;
  /** On a miss, rebuild when the index is older than this, ms (default 1 s). */
  missRefreshMs?: number;
  /** Clock in ms, for tests. */
  now?: () => number;
}

/** (tenant, namespace, environment) as one string. */
function tripleKey(t: string, ns: string, env: string): string {
  return `${t}\u0000${ns}\u0000${env}`;
}

/**
 * Which Origins the active `namespace-client` tokens list, and for which
 * bindings: the data behind preflight answers.
 *
 * @example
 * ```ts
 * import { ClientOriginIndex } from "./client_origins.ts";
 * const kv = await Deno.openKv(":memory:");
 * const index = new ClientOriginIndex(kv);
 * if (await index.allows("https://a.example")) throw new Error();
 * kv.close();
 * ```
 */
export class ClientOriginIndex {
  readonly #kv: Deno.Kv;
  readonly #ttl: number;
  readonly #missRefresh: number;
  readonly #now: () => number;
  #origins = new Map<string, Set<string>>();
  #builtAt = -Infinity;
  #building: Promise<void> | null = null;

  constructor(kv: Deno.Kv, options: ClientOriginIndexOptions = {}) {
    this.#kv = kv;
    this.#ttl = options.ttlMs ?? 30_000;
    this.#missRefresh = options.missRefreshMs ?? 1_000;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Whether an active `namespace-client` token lists `origin`: any token,
   * or one bound to `triple` when given.
   *
   * @param origin the preflight's Origin
   * @param triple the binding the token must have
   * @returns whether to approve the preflight
   */
  async allows(
    origin: string,
    triple?: { tenant: string; namespace: string; environment: string },
  ): Promise<boolean> {
    if (this.#now() - this.#builtAt > this.#ttl) await this.#rebuild();
    if (this.#has(origin, triple)) return true;
    if (this.#now() - this.#builtAt > this.#missRefresh) {
      await this.#rebuild();
      return this.#has(origin, triple);
    }
    return false;
  }

  #has(
    origin: string,
    triple: { tenant: string; namespace: string; environment: string } | undefined,
  ): boolean {
    const bindings = this.#origins.get(origin);
    if (bindings === undefined) return false;
    return triple === undefined ||
      bindings.has(tripleKey(triple.tenant, triple.namespace, triple.environment));
  }

  #rebuild(): Promise<void> {
    this.#building ??= (async () => {
      try {
        const now = new Date(this.#now());
        const next = new Map<string, Set<string>>();
        for await (const t of eachTokenRecord(this.#kv)) {
          if (t.type !== "namespace-client" || effectiveStatus(t, now) !== "active") continue;
          if (t.tenant_slug === null || t.namespace_slug === null || t.environment_slug === null) {
            continue;
          }
          const key = tripleKey(t.tenant_slug, t.namespace_slug, t.environment_slug);
          for (const o of t.allowed_origins) {
            let set = next.get(o);
            if (set === undefined) next.set(o, set = new Set());
            set.add(key);
          }
        }
        this.#origins = next;
        this.#builtAt = this.#now();
      } finally {
        this.#building = null;
      }
    })();
    return this.#building;
  }
}
