/**
 * Token verdicts at a relay: who a client's own bearer token is, asked of
 * the upstream once (`GET /api/v1/me`) and kept.
 *
 * - A verdict is cached by the SHA-256 of the token (the token itself is
 *   never kept, logged or written) for `ttlMs` (`--token-ttl`, default
 *   30 s); a refusal (401 or 403 from the upstream) for `refusalTtlMs`
 *   (5 s). Concurrent requests with the same token share one upstream call.
 * - When the upstream does not answer (a network error, a timeout, a 5xx),
 *   a verdict the upstream confirmed less than `offlineGraceMs` ago
 *   (`--offline-grace`, default 1 h) still counts; without one the request
 *   is 503 `upstream_unavailable`. A refusal stays a refusal.
 * - Verdicts the upstream confirmed are also written to the data directory
 *   (`verdicts.json`, keyed by the digest, atomically), so a relay
 *   restarted while its upstream is down keeps serving the clients it
 *   knew, within the grace.
 * - A token past its `expires_at` is refused at once, whatever the cache.
 *
 * The trade: a token revoked at the primary keeps working at a relay for up
 * to `ttlMs` while the upstream answers, and for up to `offlineGraceMs`
 * while it does not (docs/operations.md, "Scaling reads").
 *
 * @module
 */
import { join } from "node:path";
import { trimTrailing } from "../ascii.ts";
import { sha256Hex } from "../bytes.ts";
import { ForbiddenError, UnauthorizedError } from "../errors.ts";
import type { Principal } from "../auth/principal.ts";
import { parseToken } from "../auth/token_format.ts";
import type { TokenRecord } from "../store/tokens.ts";
import type { Logger } from "../log.ts";
import { writeFileAtomic } from "./atomic_file.ts";
import { UpstreamUnavailableError } from "./errors.ts";

/** A token the upstream vouched for. */
export interface Verdict {
  /** The token's id (`tok_…`). */
  id: string;
  /** Its type (`superadmin`, `tenant-admin`, `namespace-read`, …). */
  type: TokenRecord["type"];
  /** Bound tenant, namespace and environment (null where unbound). */
  tenant: string | null;
  namespace: string | null;
  environment: string | null;
  /** `namespace-client` only: the origins whose browsers may read answers. */
  allowed_origins: string[];
  /** RFC 3339 expiry, or null. */
  expires_at: string | null;
  /** The upstream's `principal` object, as `GET /api/v1/me` at the relay repeats it. */
  principal: Record<string, unknown>;
}

/** What the cache holds per digest. */
type Entry =
  | { ok: true; verdict: Verdict; confirmedAt: number }
  | { ok: false; status: 401 | 403; message: string; confirmedAt: number };

/** How a lookup was answered, for `/metrics`. */
export type VerdictOutcome = "hit" | "upstream" | "refused" | "offline" | "unavailable";

/** Options of {@linkcode VerdictCache}. */
export interface VerdictCacheOptions {
  /** The upstream's base URL. */
  upstream: string;
  /** How long a verdict counts before it is asked again, ms (default 30,000). */
  ttlMs?: number;
  /** How long a refusal counts, ms (default 5,000). */
  refusalTtlMs?: number;
  /** How long a verdict counts past its last confirmation while the upstream is down, ms (default 1 h). */
  offlineGraceMs?: number;
  /** Where `verdicts.json` lives; absent: memory only. */
  dataDir?: string;
  /** Timeout of one upstream call, ms (default 5,000). */
  timeoutMs?: number;
  /** The fetch to use. */
  fetch?: typeof fetch;
  /** Clock, ms. */
  now?: () => number;
  /** Where logs go. */
  log?: Logger;
  /** Told how each lookup was answered. */
  onOutcome?: (outcome: VerdictOutcome) => void;
}

const FILE = "verdicts.json";

/**
 * Most refusals remembered: anyone can present made-up tokens, so their
 * refusals are kept in a bounded map (oldest forgotten first), never grown
 * without end.
 */
export const MAX_REFUSALS = 10_000;

/** Most accepted tokens held; past it, those beyond the offline grace go, then the oldest. */
export const MAX_VERDICTS = 100_000;

/** Most upstream token checks at once; more wait their turn, up to {@linkcode MAX_WAITING}. */
export const MAX_CHECKS_IN_FLIGHT = 32;

/** Most token checks waiting for a turn; past it, a new token is answered 503 at once. */
export const MAX_WAITING = 1_000;

/**
 * Verdicts on client tokens, asked of the upstream and kept.
 *
 * @example
 * ```ts
 * import { VerdictCache } from "./verdicts.ts";
 * import { generateToken } from "../auth/token_format.ts";
 * const me = { principal: { type: "service", token: { id: "tok_1", type: "namespace-read",
 *   tenant_slug: "acme", namespace_slug: "web", environment_slug: null, allowed_origins: [],
 *   status: "active", expires_at: null } } };
 * let calls = 0;
 * const fetch = (() => { calls++; return Promise.resolve(Response.json(me)); }) as typeof globalThis.fetch;
 * const cache = new VerdictCache({ upstream: "http://primary", fetch });
 * const token = generateToken("namespace-read");
 * const v = await cache.check(token);
 * await cache.check(token);
 * if (v.type !== "namespace-read" || calls !== 1) throw new Error();
 * ```
 */
export class VerdictCache {
  readonly #o: Required<Omit<VerdictCacheOptions, "dataDir" | "onOutcome">> & {
    dataDir: string | undefined;
    onOutcome: (o: VerdictOutcome) => void;
  };
  /** Accepted tokens (and refusals of tokens that were accepted before), by digest. */
  readonly #entries = new Map<string, Entry>();
  /** Refusals of tokens never accepted here, by digest, oldest first (bounded). */
  readonly #refusals = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<Entry | null>>();
  /** Upstream checks running now, and those waiting for a turn. */
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #saveTimer: ReturnType<typeof setTimeout> | undefined;
  #saving: Promise<void> = Promise.resolve();

  /** @param options upstream, lifetimes, data directory */
  constructor(options: VerdictCacheOptions) {
    this.#o = {
      upstream: trimTrailing(options.upstream, "/"),
      ttlMs: options.ttlMs ?? 30_000,
      refusalTtlMs: options.refusalTtlMs ?? 5_000,
      offlineGraceMs: options.offlineGraceMs ?? 3_600_000,
      dataDir: options.dataDir,
      timeoutMs: options.timeoutMs ?? 5_000,
      fetch: options.fetch ?? ((i, init) => fetch(i, init)),
      now: options.now ?? Date.now,
      log: options.log ?? (() => {}),
      onOutcome: options.onOutcome ?? (() => {}),
    };
  }

  /** Verdicts held now (refusals included). */
  get size(): number {
    return this.#entries.size + this.#refusals.size;
  }

  /**
   * Reads the verdicts kept in the data directory: those confirmed within
   * the offline grace.
   *
   * @returns how many were loaded
   */
  async load(): Promise<number> {
    if (this.#o.dataDir === undefined) return 0;
    let text: string;
    try {
      text = await Deno.readTextFile(join(this.#o.dataDir, FILE));
    } catch {
      return 0;
    }
    let loaded = 0;
    try {
      const all = JSON.parse(text) as Record<string, { verdict: Verdict; confirmedAt: number }>;
      const now = this.#o.now();
      for (const [digest, e] of Object.entries(all)) {
        if (!/^[0-9a-f]{64}$/.test(digest) || typeof e?.confirmedAt !== "number") continue;
        if (now - e.confirmedAt >= this.#o.offlineGraceMs || !isVerdict(e.verdict)) continue;
        this.#entries.set(digest, { ok: true, verdict: e.verdict, confirmedAt: e.confirmedAt });
        loaded++;
      }
    } catch (err) {
      this.#o.log("warn", "relay: cannot read the kept token verdicts; starting without them", {
        error: (err as Error).message,
      });
    }
    return loaded;
  }

  /**
   * The verdict on a token: from the cache while fresh, else from the
   * upstream; 401/403 as the upstream refused it, 503 when nobody can say.
   *
   * @param token the bearer token as the client presented it
   * @returns the verdict
   */
  async check(token: string): Promise<Verdict> {
    // not shaped like a service token (a session, garbage): refused without asking anyone
    if (parseToken(token) === null) {
      throw new UnauthorizedError(
        token.startsWith("ses_")
          ? "A relay accepts service tokens only (sign-in sessions go to the primary)"
          : "Malformed credential",
      );
    }
    const digest = await sha256Hex(new TextEncoder().encode(token));
    const now = this.#o.now();
    const held = this.#entries.get(digest) ?? this.#refusals.get(digest);
    if (held !== undefined && now - held.confirmedAt < this.#lifetime(held)) {
      this.#o.onOutcome(held.ok ? "hit" : "refused");
      return this.#answer(held);
    }
    let asked = this.#inFlight.get(digest);
    if (asked === undefined) {
      if (this.#running >= MAX_CHECKS_IN_FLIGHT && this.#waiting.length >= MAX_WAITING) {
        this.#o.onOutcome("unavailable");
        throw new UpstreamUnavailableError(this.#o.upstream, "too many token checks at once");
      }
      asked = this.#turn(() => this.#ask(digest, token))
        .finally(() => this.#inFlight.delete(digest));
      this.#inFlight.set(digest, asked);
    }
    const fresh = await asked;
    if (fresh !== null) {
      this.#o.onOutcome(fresh.ok ? "upstream" : "refused");
      return this.#answer(fresh);
    }
    // the upstream did not answer: an earlier verdict within the grace still counts
    const kept = this.#entries.get(digest) ?? this.#refusals.get(digest);
    if (kept !== undefined && !kept.ok) {
      this.#o.onOutcome("refused");
      return this.#answer(kept);
    }
    if (kept !== undefined && this.#o.now() - kept.confirmedAt < this.#o.offlineGraceMs) {
      this.#o.onOutcome("offline");
      return this.#answer(kept);
    }
    this.#o.onOutcome("unavailable");
    throw new UpstreamUnavailableError(this.#o.upstream, "no answer to GET /api/v1/me");
  }

  /**
   * Whether a `namespace-client` token the relay holds a verdict on lists
   * an Origin (bound to `t` when given): the relay's answer to CORS
   * preflights, which carry no credential.
   *
   * @param origin the preflight's Origin
   * @param t the triple of the path, if it names one
   * @returns true or false
   */
  knowsOrigin(
    origin: string,
    t?: { tenant: string; namespace: string; environment: string },
  ): boolean {
    for (const e of this.#entries.values()) {
      if (!e.ok || e.verdict.type !== "namespace-client") continue;
      const v = e.verdict;
      if (!v.allowed_origins.includes(origin)) continue;
      if (
        t === undefined ||
        (v.tenant === t.tenant && v.namespace === t.namespace && v.environment === t.environment)
      ) {
        return true;
      }
    }
    return false;
  }

  /** Writes pending verdicts to the data directory now. */
  async flush(): Promise<void> {
    if (this.#saveTimer !== undefined) {
      clearTimeout(this.#saveTimer);
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.#save());
    }
    await this.#saving;
  }

  /** Runs an upstream check when a turn is free (at most {@linkcode MAX_CHECKS_IN_FLIGHT} at once). */
  async #turn<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= MAX_CHECKS_IN_FLIGHT) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
    this.#running++;
    try {
      return await work();
    } finally {
      this.#running--;
      this.#waiting.shift()?.();
    }
  }

  /** Remembers a refusal: in place of an accepted token's verdict, else in the bounded map. */
  #refuse(digest: string, e: Entry): void {
    if (this.#entries.has(digest)) {
      this.#entries.set(digest, e); // a known token now refused: it stays refused while offline
      return;
    }
    this.#refusals.delete(digest);
    this.#refusals.set(digest, e);
    if (this.#refusals.size > MAX_REFUSALS) {
      this.#refusals.delete(this.#refusals.keys().next().value!);
    }
  }

  /** Keeps an accepted token's verdict; past the bound, drops what the grace no longer covers, then the oldest. */
  #accept(digest: string, e: Entry): void {
    this.#refusals.delete(digest);
    this.#entries.delete(digest);
    this.#entries.set(digest, e);
    if (this.#entries.size <= MAX_VERDICTS) return;
    const now = this.#o.now();
    for (const [d, held] of this.#entries) {
      if (now - held.confirmedAt >= this.#o.offlineGraceMs) this.#entries.delete(d);
    }
    while (this.#entries.size > MAX_VERDICTS) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  #lifetime(e: Entry): number {
    return e.ok ? this.#o.ttlMs : this.#o.refusalTtlMs;
  }

  #answer(e: Entry): Verdict {
    if (!e.ok) {
      throw e.status === 401 ? new UnauthorizedError(e.message) : new ForbiddenError(e.message);
    }
    const exp = e.verdict.expires_at;
    if (exp !== null && Date.parse(exp) <= this.#o.now()) {
      throw new UnauthorizedError("Token has expired");
    }
    return e.verdict;
  }

  /** Asks the upstream; null when it did not answer (network, timeout, 5xx). */
  async #ask(digest: string, token: string): Promise<Entry | null> {
    let res: Response;
    try {
      res = await this.#o.fetch(`${this.#o.upstream}/api/v1/me`, {
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
        signal: AbortSignal.timeout(this.#o.timeoutMs),
      });
    } catch (err) {
      this.#o.log("warn", "relay: upstream did not answer a token check", {
        error: (err as Error).name,
      });
      return null;
    }
    const now = this.#o.now();
    if (res.status === 401 || res.status === 403) {
      const message = await envelopeMessage(res) ??
        (res.status === 401 ? "Unknown credential" : "Not allowed");
      const e: Entry = { ok: false, status: res.status, message, confirmedAt: now };
      const had = this.#entries.get(digest);
      this.#refuse(digest, e);
      if (had?.ok) this.#scheduleSave(); // a known token is now refused: forget it on disk too
      return e;
    }
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    let verdict: Verdict | null;
    try {
      verdict = verdictOf(await res.json());
    } catch {
      verdict = null;
    }
    if (verdict === null) {
      // a signed-in person (sessions are not relayed) or an answer we cannot read
      const e: Entry = {
        ok: false,
        status: 401,
        message: "A relay accepts service tokens only (sign-in sessions go to the primary)",
        confirmedAt: now,
      };
      this.#refuse(digest, e);
      return e;
    }
    const e: Entry = { ok: true, verdict, confirmedAt: now };
    this.#accept(digest, e);
    this.#scheduleSave();
    return e;
  }

  #scheduleSave(): void {
    if (this.#o.dataDir === undefined || this.#saveTimer !== undefined) return;
    this.#saveTimer = setTimeout(() => {
      this.#saveTimer = undefined;
      this.#saving = this.#saving.then(() => this.#save());
    }, 100);
    Deno.unrefTimer(this.#saveTimer);
  }

  async #save(): Promise<void> {
    const out: Record<string, { verdict: Verdict; confirmedAt: number }> = {};
    for (const [digest, e] of this.#entries) {
      if (e.ok) out[digest] = { verdict: e.verdict, confirmedAt: e.confirmedAt };
    }
    try {
      await writeFileAtomic(
        join(this.#o.dataDir!, FILE),
        new TextEncoder().encode(JSON.stringify(out)),
      );
    } catch (err) {
      this.#o.log("warn", "relay: cannot keep token verdicts on disk", {
        error: (err as Error).message,
      });
    }
  }
}

/**
 * The principal the route modules read (`c.get("principal")`) for a
 * verdict: a token principal whose record holds what the upstream said
 * (never a digest: the relay has none).
 *
 * @param v the verdict
 * @returns the principal
 *
 * @example
 * ```ts
 * import { principalOf } from "./verdicts.ts";
 * const p = principalOf({ id: "tok_1", type: "namespace-client", tenant: "acme", namespace: "web",
 *   environment: "prod", allowed_origins: ["https://a.example"], expires_at: null, principal: {} });
 * if (p.kind !== "token" || p.token.environment_slug !== "prod" || p.token.digest !== "") throw new Error();
 * ```
 */
export function principalOf(v: Verdict): Principal {
  const token: TokenRecord = {
    id: v.id,
    type: v.type,
    name: "",
    description: null,
    tenant_slug: v.tenant,
    namespace_slug: v.namespace,
    environment_slug: v.environment,
    allowed_origins: v.allowed_origins,
    scopes: [],
    prefix: "",
    digest: "",
    created_by: "",
    created_at: "",
    expires_at: v.expires_at,
    last_used_at: null,
    last_used_ip_hash: null,
    status: "active",
    revoked_at: null,
    revoked_by: null,
    rotated_from_token_id: null,
    rotated_to_token_id: null,
  };
  return { kind: "token", token };
}

const TYPES: ReadonlySet<string> = new Set([
  "superadmin",
  "tenant-admin",
  "namespace-read",
  "namespace-write",
  "namespace-client",
]);

function str(x: unknown): string | null {
  return typeof x === "string" ? x : null;
}

/** Reads a `GET /api/v1/me` answer about a service token; null for anything else. */
function verdictOf(body: unknown): Verdict | null {
  const p = (body as { principal?: Record<string, unknown> } | null)?.principal;
  if (p === undefined || p === null || typeof p !== "object") return null;
  if (p.type !== "service" && p.type !== "client") return null;
  const t = p.token as Record<string, unknown> | undefined;
  if (t === undefined || t === null || typeof t !== "object") return null;
  const binding = (p.binding ?? {}) as Record<string, unknown>;
  const type = str(p.token_type) ?? str(t.type);
  const id = str(t.id);
  const status = str(p.status) ?? str(t.status);
  if (type === null || !TYPES.has(type) || id === null || status !== "active") return null;
  const origins = Array.isArray(t.allowed_origins)
    ? t.allowed_origins.filter((o): o is string => typeof o === "string")
    : [];
  const v: Verdict = {
    id,
    type: type as Verdict["type"],
    tenant: str(binding.tenant) ?? str(t.tenant_slug),
    namespace: str(binding.namespace) ?? str(t.namespace_slug),
    environment: str(binding.environment) ?? str(t.environment_slug),
    allowed_origins: origins,
    expires_at: str(p.expires_at) ?? str(t.expires_at),
    principal: p,
  };
  return v;
}

function isVerdict(v: unknown): v is Verdict {
  const x = v as Verdict | null;
  return x !== null && typeof x === "object" && typeof x.id === "string" &&
    TYPES.has(x.type) && Array.isArray(x.allowed_origins) && typeof x.principal === "object";
}

async function envelopeMessage(res: Response): Promise<string | null> {
  try {
    const body = await res.json() as { message?: unknown };
    return typeof body.message === "string" ? body.message : null;
  } catch {
    return null;
  }
}
