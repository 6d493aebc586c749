/**
 * Keeps long-lived streams honest about their credential. A stream (the
 * event stream, the OFREP event stream) is authenticated once, when it
 * opens; a token revoked or expired afterwards, a session that ended, must
 * not keep receiving data. The guard holds one entry per open stream and,
 * at a fixed interval, reads every distinct credential with batched
 * `getMany` calls (one KV key per credential, not per stream), closing the
 * streams whose credential is no longer valid. `recheck()` runs a check at
 * once: the token endpoints call it after a revocation, so streams held by
 * this process end immediately and those of other processes within the
 * interval.
 *
 * @module
 */
import { effectiveStatus, readCredentialRecords, type TokenRecord } from "../store/tokens.ts";
import { sessionLive, type SessionRecord } from "./sessions.ts";
import { normalizeSession } from "../store/sessions.ts";

/** `getMany` takes at most 10 keys. */

/** Options of {@linkcode StreamGuard}. */
export interface StreamGuardOptions {
  /** Check interval, ms (default 5000). */
  intervalMs?: number;
  /** Clock, for tests. */
  now?: () => Date;
}

/**
 * Closes streams whose credential (`tok_…` token id or `ssn_…` session id)
 * stops being valid.
 *
 * @example
 * ```ts
 * import { StreamGuard } from "./stream_guard.ts";
 * const kv = await Deno.openKv(":memory:");
 * const guard = new StreamGuard(kv, { intervalMs: 10 });
 * let closed = false;
 * guard.register("tok_gone", () => (closed = true));
 * await guard.recheck();
 * guard.close();
 * kv.close();
 * if (!closed) throw new Error("an unknown token's stream is closed");
 * ```
 */
export class StreamGuard {
  readonly #kv: Deno.Kv;
  readonly #interval: number;
  readonly #now: () => Date;
  readonly #streams = new Map<string, Set<() => void>>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #running: Promise<void> | undefined;

  constructor(kv: Deno.Kv, options: StreamGuardOptions = {}) {
    this.#kv = kv;
    this.#interval = options.intervalMs ?? 5000;
    this.#now = options.now ?? (() => new Date());
  }

  /** Number of streams watched. */
  get size(): number {
    let n = 0;
    for (const s of this.#streams.values()) n += s.size;
    return n;
  }

  /**
   * Watches a stream held by `credentialId`; `close` ends it. Returns the
   * function that stops watching (call it when the stream ends).
   */
  register(credentialId: string, close: () => void): () => void {
    let set = this.#streams.get(credentialId);
    if (set === undefined) this.#streams.set(credentialId, set = new Set());
    set.add(close);
    this.#ensureTimer();
    return () => {
      const s = this.#streams.get(credentialId);
      if (s === undefined) return;
      s.delete(close);
      if (s.size === 0) this.#streams.delete(credentialId);
      if (this.#streams.size === 0) this.#stopTimer();
    };
  }

  /** Checks every credential now (concurrent calls share one check). */
  recheck(): Promise<void> {
    this.#running ??= this.#check().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stops the timer; registered streams stay open. */
  close(): void {
    this.#stopTimer();
  }

  async #check(): Promise<void> {
    const ids = [...this.#streams.keys()];
    const invalid = new Set<string>();
    const now = this.#now();
    let records: unknown[];
    try {
      records = await readCredentialRecords(this.#kv, ids);
    } catch {
      return; // the KV is closing or unreachable: try again next time
    }
    records.forEach((value, j) => {
      if (!stillValid(ids[j]!, value, now)) invalid.add(ids[j]!);
    });
    for (const id of invalid) {
      for (const close of [...(this.#streams.get(id) ?? [])]) {
        try {
          close();
        } catch {
          // a stream that is already gone
        }
      }
      this.#streams.delete(id);
    }
    if (this.#streams.size === 0) this.#stopTimer();
  }

  #ensureTimer(): void {
    if (this.#timer !== undefined) return;
    const timer = setInterval(() => void this.recheck(), this.#interval);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

function stillValid(id: string, value: unknown, now: Date): boolean {
  if (value === null || value === undefined) return false;
  if (id.startsWith("ssn_")) {
    // its absolute end and its idle limit: a stream is no request, it does not keep a session alive
    return sessionLive(normalizeSession(value as SessionRecord), now.getTime());
  }
  const token = value as TokenRecord;
  return token.status === "active" && effectiveStatus(token, now) === "active";
}
