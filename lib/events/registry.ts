/**
 * Concurrent event-stream connections per credential. Over the limit a new
 * connection is refused with 429 `rate_limit_exceeded`.
 *
 * Without a KV the count is this process's alone. With one (as the event
 * hub builds it) the limit holds for the whole installation: each process
 * stores its own count per credential in the KV, next to a liveness lease
 * it renews every third of `leaseMs` (lib/store/leases.ts). Taking a slot
 * adds the counts of every live process and stores this process's new
 * count in one atomic commit, so two processes cannot both take the last
 * slot. The streams of a process that died stop counting once its lease
 * has run out (at most `leaseMs`); a process that stops gracefully
 * ({@linkcode ConnectionRegistry.close}) deletes its lease, and its streams
 * stop counting at once. A process that was too busy to renew in time
 * (its lease lapsed and others dropped its counts) writes its counts back
 * at its next renewal. Giving a slot back is local at once and reaches the
 * KV a moment later; nothing is written per stream while it stays open.
 * The streams of one credential that open while its previous commit is
 * under way are admitted together by the next one (a reconnect storm costs
 * a few commits, not one per stream), in arrival order: when they do not
 * all fit, the first ones that fit get slots and the others are refused, as
 * one commit each would have decided. While this process's count is the
 * only one in the credential's record, the next commit is made against the
 * record it last wrote, without reading it first; any other write to the
 * record makes that commit fail, and the counts are then read as usual.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { leaseConnection, removeHolder, renewHolder, setConnectionCount } from "../store/leases.ts";

/** A stream waiting for its slot. */
interface Waiter {
  resolve: (release: () => void) => void;
  reject: (err: unknown) => void;
}

/** How a {@linkcode ConnectionRegistry} shares its counts with other processes. */
export interface SharedCountOptions {
  /** The installation's store. */
  kv: Deno.Kv;
  /** Lease time of this process's counts, ms (renewed every third of it). */
  leaseMs: number;
  /** Aborting it stops the renewals (the server is shutting down); nothing more is written. */
  signal?: AbortSignal;
  /** Where failed renewals are logged. */
  log?: Logger;
  /** Clock, ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** This process's id in the KV (default: a random UUID). */
  holder?: string;
}

/**
 * Counts connections per credential id, in this process or (with a KV)
 * across the installation.
 *
 * @example
 * ```ts
 * import { ConnectionRegistry } from "./registry.ts";
 * const r = new ConnectionRegistry(1);
 * const release = await r.acquire("tok_1");
 * let status = 0;
 * try { await r.acquire("tok_1"); } catch (e) { status = (e as { status: number }).status; }
 * release();
 * if (status !== 429 || r.count("tok_1") !== 0) throw new Error();
 * ```
 */
export class ConnectionRegistry {
  readonly #limit: number;
  readonly #counts = new Map<string, number>();
  readonly #shared: SharedCountOptions | undefined;
  readonly #now: () => number;
  /** This process's id in the KV, or null when counting in this process only. */
  readonly holder: string | null;
  /** What this process last stored per credential. */
  readonly #stored = new Map<string, number>();
  /**
   * Per credential, the versionstamp of the record this process last
   * committed when it held this process's count alone: the next slot is
   * then committed against it without reading first.
   */
  readonly #sole = new Map<string, string>();
  /** Credentials whose stored count may be wrong (a write failed, or the lease lapsed). */
  readonly #dirty = new Set<string>();
  /** One KV operation at a time per credential. */
  readonly #chains = new Map<string, Promise<void>>();
  /** Per credential, the streams that wait for the next commit. */
  readonly #waiting = new Map<string, Waiter[]>();
  #started: Promise<void> | null = null;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Until when the last renewal that was stored keeps this process alive. */
  #until = 0;
  #stopped = false;
  #closing: Promise<void> | null = null;

  /**
   * @param limit connections allowed per credential
   * @param shared the KV and lease time that make the limit installation-wide
   */
  constructor(limit: number, shared?: SharedCountOptions) {
    this.#limit = limit;
    this.#shared = shared;
    this.#now = shared?.now ?? Date.now;
    this.holder = shared === undefined ? null : shared.holder ?? crypto.randomUUID();
    if (shared?.signal?.aborted) this.#stop();
    else shared?.signal?.addEventListener("abort", () => this.#stop(), { once: true });
  }

  /** Open connections of a credential in this process. */
  count(id: string): number {
    return this.#counts.get(id) ?? 0;
  }

  /** Open connections in this process in total. */
  get total(): number {
    let n = 0;
    for (const c of this.#counts.values()) n += c;
    return n;
  }

  /**
   * Takes a slot for a credential, or rejects with 429 `rate_limit_exceeded`.
   * Resolves to the function that gives the slot back (idempotent).
   *
   * @param id token id or session id
   * @returns the release function
   */
  async acquire(id: string): Promise<() => void> {
    if (this.count(id) >= this.#limit) throw this.#refusal();
    const shared = this.#shared;
    if (shared === undefined || this.#stopped) return this.#take(id);
    await this.#start(shared);
    return await new Promise<() => void>((resolve, reject) => {
      let group = this.#waiting.get(id);
      if (group === undefined) {
        this.#waiting.set(id, group = []);
        void this.#serial(id, () => this.#admit(id, shared)).catch(() => {});
      }
      group.push({ resolve, reject });
    });
  }

  /**
   * Admits the streams waiting for a slot of `id` with one commit: as many
   * as fit, in arrival order (the count of every live process decides, as
   * in {@linkcode leaseConnection}); the others are refused.
   */
  async #admit(id: string, shared: SharedCountOptions): Promise<void> {
    const group = this.#waiting.get(id) ?? [];
    this.#waiting.delete(id);
    let admitted = 0;
    try {
      let fit = Math.min(group.length, this.#limit - this.count(id));
      if (this.#stopped) admitted = Math.max(fit, 0); // counted in this process only
      while (fit > 0 && !this.#stopped) {
        const next = this.count(id) + fit;
        const lease = await leaseConnection(
          shared.kv,
          id,
          this.holder!,
          next,
          this.#limit,
          this.#now(),
          this.#sole.get(id) ?? null,
        );
        if (lease.sole === null) this.#sole.delete(id);
        else this.#sole.set(id, lease.sole);
        if (lease.acquired) {
          this.#stored.set(id, next);
          admitted = fit;
          break;
        }
        fit -= lease.total - this.#limit; // over the limit by that many
      }
    } catch (err) {
      for (const w of group) w.reject(err);
      return;
    }
    group.forEach((w, i) => i < admitted ? w.resolve(this.#take(id)) : w.reject(this.#refusal()));
  }

  /**
   * Stops the renewals and deletes this process's lease, so its streams
   * stop counting at once (a graceful shutdown; call it before closing the
   * KV). Idempotent.
   *
   * @returns once the lease is deleted (failures are ignored: the lease then runs out)
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop();
      const shared = this.#shared;
      if (shared === undefined || this.#started === null) return;
      await Promise.all([...this.#chains.values()]);
      try {
        await removeHolder(shared.kv, this.holder!);
      } catch {
        // the lease runs out by itself
      }
    })();
    return this.#closing;
  }

  #refusal(): CfgtoolError {
    return new CfgtoolError(
      "rate_limit_exceeded",
      `Too many concurrent event streams for this credential: the limit is ${this.#limit}`,
      { status: 429, details: { limit: this.#limit, retry_after: 1 } },
    );
  }

  /** Counts a slot in this process and returns its release. */
  #take(id: string): () => void {
    this.#counts.set(id, this.count(id) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(id) - 1;
      if (left <= 0) this.#counts.delete(id);
      else this.#counts.set(id, left);
      if (this.#shared !== undefined && !this.#stopped) this.#sync(id);
    };
  }

  /** Writes this process's count of `id` to the KV when it differs from what was stored. */
  #sync(id: string): void {
    const shared = this.#shared!;
    void this.#serial(id, async () => {
      if (this.#stopped) return;
      const count = this.count(id);
      if ((this.#stored.get(id) ?? 0) === count && !this.#dirty.has(id)) return;
      this.#dirty.delete(id);
      this.#sole.delete(id); // the record changes here
      try {
        await setConnectionCount(shared.kv, id, this.holder!, count);
        if (count === 0) this.#stored.delete(id);
        else this.#stored.set(id, count);
      } catch {
        this.#dirty.add(id); // the next renewal tries again
      }
    }).catch(() => {});
  }

  /** Runs `fn` after the earlier KV operations on `id` of this process. */
  #serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#chains.get(id) ?? Promise.resolve();
    const run = prev.then(fn);
    const tail = run.then(() => {}, () => {});
    this.#chains.set(id, tail);
    void tail.then(() => {
      if (this.#chains.get(id) === tail) this.#chains.delete(id);
    });
    return run;
  }

  /** Stores the first liveness lease and starts the renewals (once). */
  #start(shared: SharedCountOptions): Promise<void> {
    this.#started ??= this.#renew(shared).then(() => {
      if (this.#stopped) return;
      this.#timer = setInterval(
        () => void this.#renew(shared).catch((err) => this.#renewFailed(shared, err)),
        Math.max(1, Math.floor(shared.leaseMs / 3)),
      );
      Deno.unrefTimer(this.#timer);
    }, (err) => {
      this.#started = null; // the next acquire tries again
      throw err;
    });
    return this.#started;
  }

  /** Renews the liveness lease; after a lapse, writes every count back. */
  async #renew(shared: SharedCountOptions): Promise<void> {
    if (this.#stopped) return;
    const now = this.#now();
    const until = now + shared.leaseMs;
    await renewHolder(shared.kv, this.holder!, until, now);
    const lapsed = this.#until !== 0 && now >= this.#until;
    this.#until = until;
    if (lapsed) {
      // other processes may have dropped this one's counts meanwhile
      for (const id of new Set([...this.#counts.keys(), ...this.#stored.keys()])) {
        this.#dirty.add(id);
      }
      shared.log?.("warn", "stream lease lapsed: restoring this process's stream counts", {
        credentials: this.#dirty.size,
      });
    }
    for (const id of [...this.#dirty]) this.#sync(id);
  }

  #renewFailed(shared: SharedCountOptions, err: unknown): void {
    if (this.#stopped) return;
    shared.log?.("warn", "could not renew the stream lease", {
      error: err instanceof Error ? err.message : String(err),
    });
  }

  #stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
