/**
 * `FlagClient`: subscribes to a cfgtool service's event stream
 * (`GET /api/v1/events`, protocol v2 of docs/events.md), keeps a verified
 * closure of every subscribed namespace in memory and evaluates flags
 * locally with the server's own engine: no round trip per evaluation.
 *
 * Every change passes the four integrity checks of the spec before it
 * replaces anything: the tracked hash must equal an inline event's
 * `prev_closure_hash`; each file must match its `sha256`; the closure after
 * a delta must hash to `closure_hash`; an unpacked snapshot must hash to
 * `closure_hash`. The result must also validate as a manifest. A failed
 * check keeps the last good model, is reported through
 * {@linkcode FlagClient.lastRefreshError} and {@linkcode FlagClient.onError},
 * and is recovered from by fetching the closure endpoint (bearer token,
 * `version` and `subscription`), with jittered backoff and conditional
 * requests. The stream reconnects with `Last-Event-ID` and `since` after
 * any disconnect. Web APIs only: runs in Deno and in Node 20+.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { CfgtoolError, UsageError } from "../errors.ts";
import {
  type Context,
  evaluateAll,
  evaluateFlag,
  type EvaluationResult,
  flagType,
} from "../flags/evaluate.ts";
import type { CompiledModel } from "../flags/evaluate.ts";
import type { FlagType } from "../flags/model.ts";
import type { Logger } from "../log.ts";
import { closureTarget, closureUrl } from "../protocol/closure_url.ts";
import { parseVersionEtag } from "../protocol/etag.ts";
import {
  isClosureHash,
  parseEventData,
  type ResyncEvent,
  type VersionEvent,
} from "../protocol/events.ts";
import { IntegrityError } from "../protocol/integrity.ts";
import {
  canonicalFlagList,
  encodeSubscription,
  type FlagSelection,
  parseNamespaceParam,
} from "../protocol/subscription.ts";
import { Backoff, type BackoffOptions, sleep } from "./backoff.ts";
import { ClosureState } from "./closure_state.ts";
import { httpError, openSse, readSse, type SseMessage } from "./sse.ts";

export { ClosureState } from "./closure_state.ts";
export { type IntegrityCheck, IntegrityError } from "../protocol/integrity.ts";

/** A subscribed namespace: the slug (or `<tenant>/<slug>`) and its flags. */
export interface NamespaceSubscriptionSpec {
  /** `<slug>`, or `<tenant>/<slug>` for credentials bound to no tenant (superadmin). */
  namespace: string;
  /** `*` (default) or flag keys. */
  flags?: "*" | readonly string[];
}

/** Options of {@linkcode FlagClient}. */
export interface FlagClientOptions {
  /** Base URL of the service (`https://flags.example.com`). */
  server: string;
  /** Bearer token with `manifest.read` on every namespace. */
  token: string;
  /**
   * The subscription: `"<slug>:<flag-list>"` strings (as the `ns` query
   * parameter: `web:*`, `web:checkout,dark-mode`, `acme/web:*`) or objects.
   */
  namespaces: readonly (string | NamespaceSubscriptionSpec)[];
  /**
   * Tenant of the namespaces, for the closure endpoint. Optional: it is
   * taken from `<tenant>/<slug>` or learned from the first snapshot URL.
   */
  tenant?: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Backoff of reconnects and closure re-fetches (default 250 ms doubling to 30 s, half jitter). */
  backoff?: BackoffOptions;
  /** Default timeout of {@linkcode FlagClient.ready}, ms (default 30,000). */
  readyTimeoutMs?: number;
  /**
   * Reconnect when the stream sends nothing (not even a keepalive) for this
   * long, ms (default 90,000: three keepalive intervals).
   */
  idleTimeoutMs?: number;
  /** Timeout of one closure download, ms (default 30,000). */
  requestTimeoutMs?: number;
  /** Where to log (default: nowhere). */
  logger?: Logger;
}

/** How a change arrived. */
export type ChangeDelivery = "inline" | "snapshot" | "fallback" | "resync";

/** What {@linkcode FlagClient.onChange} listeners receive after a verified apply. */
export interface ChangeEvent {
  /** Namespace slug. */
  namespace: string;
  /** The new version. */
  version: number;
  /** The version before, or null for the first closure. */
  previousVersion: number | null;
  /** The new closure hash. */
  closureHash: string;
  /** The hash before, or null. */
  previousClosureHash: string | null;
  /** How the change arrived: an inline delta, a snapshot, a closure-endpoint fallback or a resync. */
  delivery: ChangeDelivery;
  /** Paths added, changed or removed. */
  changedPaths: string[];
  /** Flags whose evaluation may differ (every flag when a segment or namespace.toml changed). */
  changedFlags: string[];
}

/** A refresh failure, as {@linkcode FlagClient.lastRefreshError} reports it. */
export interface RefreshError {
  /** Namespace slug, or null for a failure of the stream itself. */
  namespace: string | null;
  /** Stable code: `integrity_check_failed`, `unreachable`, `http_503`, `closure_token_invalid`, … */
  code: string;
  /** For `integrity_check_failed`: which check. */
  check: string | null;
  /** The version concerned, when known. */
  version: number | null;
  /** What happened. */
  message: string;
  /** When. */
  at: Date;
  /** The error itself. */
  error: Error;
}

/** Per-namespace status, for agents and health checks. */
export interface NamespaceStatus {
  /** Namespace slug. */
  namespace: string;
  /** Canonical flag list of the subscription. */
  flags: string;
  /** Version of the last verified closure, or null before the first. */
  version: number | null;
  /** Its closure hash. */
  closureHash: string | null;
  /** When it was applied. */
  updatedAt: Date | null;
  /** The last failure for this namespace (kept after recovery; compare `at` with `updatedAt`). */
  lastError: RefreshError | null;
  /** Whether the last attempt to refresh failed after the last apply. */
  stale: boolean;
}

/** The subscription of one namespace and what the client holds for it. */
interface Track {
  slug: string;
  tenant: string | null;
  flags: FlagSelection;
  /** `ns` query value. */
  param: string;
  /** Closure endpoint `subscription` parameter. */
  subscription: string;
  state: ClosureState | null;
  updatedAt: Date | null;
  lastError: RefreshError | null;
  /** Tasks of this namespace run one at a time, in stream order. */
  queue: Promise<void>;
  /** Events queued and not yet started (a newer event supersedes a re-fetch). */
  pending: number;
  /** Connection epoch of the last event, and its version (per-connection ordering). */
  epoch: number;
  seen: number | null;
}

/** A closure to fetch and verify. */
interface Target {
  version: number;
  /** The announced hash; null for a resync (then the ETag's hash is used). */
  hash: string | null;
  /** A signed snapshot URL from the stream, if any. */
  url: string | null;
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

const FATAL_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 414]);

/**
 * A client of the event stream that evaluates flags locally.
 *
 * @example
 * ```ts ignore
 * import { FlagClient } from "@cfgtool/cfgtool";
 *
 * const client = new FlagClient({
 *   server: "https://flags.example.com",
 *   token: Deno.env.get("CFGTOOL_TOKEN")!,
 *   namespaces: ["checkout:*"],
 * });
 * await client.ready();
 * const r = client.evaluate("checkout", "production", "new-checkout", { targeting_key: "u1" });
 * console.log(r.value, r.reason, r.version);
 * client.onChange((c) => console.log(`checkout is now at v${c.version}`));
 * await client.close();
 * ```
 */
export class FlagClient {
  readonly #server: string;
  readonly #origin: string;
  readonly #token: string;
  readonly #tenant: string | null;
  readonly #fetch: typeof fetch;
  readonly #backoff: BackoffOptions;
  readonly #readyTimeoutMs: number;
  readonly #idleTimeoutMs: number;
  readonly #requestTimeoutMs: number;
  readonly #log: Logger;
  readonly #tracks = new Map<string, Track>();
  readonly #learnedTenant = new Map<string, string>();
  readonly #changeListeners = new Set<(e: ChangeEvent) => void>();
  readonly #errorListeners = new Set<(e: RefreshError) => void>();
  readonly #waiters = new Set<Waiter>();
  readonly #closing = new AbortController();
  #stream: AbortController | null = null;
  #restarting = false;
  #epoch = 0;
  #lastEventId: string | null = null;
  #lastError: RefreshError | null = null;
  #fatal: CfgtoolError | null = null;
  #closed = false;
  #connected = false;
  readonly #run: Promise<void>;
  readonly #done: { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void };

  /**
   * Starts the client: the stream connects at once.
   *
   * @param options server, token, subscription and tuning
   * @throws {UsageError} on a malformed subscription or server URL
   */
  constructor(options: FlagClientOptions) {
    let url: URL;
    try {
      url = new URL(options.server);
    } catch {
      throw new UsageError(`Cannot use server "${options.server}": not a URL`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new UsageError(`Cannot use server "${options.server}": not an http(s) URL`);
    }
    if (options.token === "") throw new UsageError("Cannot connect: the token is empty");
    if (options.namespaces.length === 0) {
      throw new UsageError("Cannot subscribe: name at least one namespace");
    }
    this.#server = trimTrailing(options.server, "/");
    this.#origin = url.origin;
    this.#token = options.token;
    this.#tenant = options.tenant ?? null;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#backoff = options.backoff ?? {};
    this.#readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 90_000;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#log = options.logger ?? (() => {});
    for (const spec of options.namespaces) {
      const text = typeof spec === "string"
        ? spec
        : `${spec.namespace}:${canonicalFlagList(spec.flags ?? "*")}`;
      const parsed = parseNamespaceParam(text);
      if (this.#tracks.has(parsed.slug)) {
        throw new UsageError(`Cannot subscribe to ${parsed.slug} twice`);
      }
      const list = canonicalFlagList(parsed.flags);
      this.#tracks.set(parsed.slug, {
        slug: parsed.slug,
        tenant: parsed.tenant,
        flags: parsed.flags,
        param: `${parsed.tenant === null ? "" : `${parsed.tenant}/`}${parsed.slug}:${list}`,
        subscription: encodeSubscription(parsed.flags),
        state: null,
        updatedAt: null,
        lastError: null,
        queue: Promise.resolve(),
        pending: 0,
        epoch: -1,
        seen: null,
      });
    }
    let resolve!: () => void;
    let reject!: (e: Error) => void;
    const promise = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {}); // observed through done(); never an unhandled rejection
    this.#done = { promise, resolve, reject };
    this.#run = this.#loop();
  }

  // ---------------------------------------------------------------- public API

  /**
   * Resolves once every subscribed namespace has a verified closure.
   * Rejects on a fatal error (401/403 or a rejected subscription, a
   * `protocol_downgrade` resync), when the client is closed first, or after
   * `timeoutMs` with code `ready_timeout` naming the namespaces still
   * missing and the last failure. A timeout does not stop the client.
   *
   * @param timeoutMs how long to wait (default: the `readyTimeoutMs` option)
   * @returns resolves when ready
   */
  ready(timeoutMs: number = this.#readyTimeoutMs): Promise<void> {
    if (this.#isReady()) return Promise.resolve();
    if (this.#fatal !== null) return Promise.reject(this.#fatal);
    if (this.#closed) return Promise.reject(closedError());
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          const missing = [...this.#tracks.values()].filter((t) => t.state === null)
            .map((t) => t.slug);
          const last = this.#lastError ? `; last error: ${this.#lastError.message}` : "";
          reject(
            new CfgtoolError(
              "ready_timeout",
              `FlagClient not ready after ${timeoutMs} ms: no verified closure yet for ${
                missing.join(", ")
              }${last}`,
              { status: 504 },
            ),
          );
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  /**
   * Settles when the client stops: resolves after {@linkcode FlagClient.close},
   * rejects with the fatal error when one stopped it.
   *
   * @returns the promise
   */
  done(): Promise<void> {
    return this.#done.promise;
  }

  /**
   * Evaluates one flag locally on the last verified model of a namespace.
   * Before the first closure of the namespace (or for a namespace not
   * subscribed) the result has reason `ERROR` and `error_code` `GENERAL`.
   *
   * @param namespace the slug (`<tenant>/<slug>` is accepted)
   * @param environment an environment of the namespace
   * @param flag the flag key
   * @param context the evaluation context
   * @returns the engine's result
   */
  evaluate(
    namespace: string,
    environment: string,
    flag: string,
    context: Context = {},
  ): EvaluationResult {
    const state = this.#track(namespace)?.state;
    if (!state) return notReady(namespace, flag, this.#tracks.has(slugOf(namespace)));
    return evaluateFlag(state.model, environment, flag, context);
  }

  /**
   * Evaluates every flag of a namespace locally.
   *
   * @param namespace the slug
   * @param environment an environment of the namespace
   * @param context the evaluation context
   * @returns flag key → result; empty before the first closure
   */
  evaluateAll(
    namespace: string,
    environment: string,
    context: Context = {},
  ): Record<string, EvaluationResult> {
    const state = this.#track(namespace)?.state;
    if (!state) return {};
    return evaluateAll(state.model, environment, context);
  }

  /**
   * The declared type of a flag in the current model.
   *
   * @param namespace the slug
   * @param flag the flag key
   * @returns the type, or undefined (unknown flag, no model yet)
   */
  flagType(namespace: string, flag: string): FlagType | undefined {
    const state = this.#track(namespace)?.state;
    return state ? flagType(state.model, flag) : undefined;
  }

  /**
   * The compiled model of a namespace (for the engine's functions).
   *
   * @param namespace the slug
   * @returns the model, or undefined before the first closure
   */
  model(namespace: string): CompiledModel | undefined {
    return this.#track(namespace)?.state?.model;
  }

  /**
   * The verified closure of a namespace: version, hash, files, model.
   *
   * @param namespace the slug
   * @returns the state, or undefined before the first closure
   */
  closure(namespace: string): ClosureState | undefined {
    return this.#track(namespace)?.state ?? undefined;
  }

  /** The subscribed namespace slugs, in subscription order. */
  get namespaces(): string[] {
    return [...this.#tracks.keys()];
  }

  /** Whether the event stream is connected now. */
  get connected(): boolean {
    return this.#connected;
  }

  /**
   * The most recent refresh failure (a failed integrity check, a closure or
   * stream request that failed), or null if there was none. It stays set
   * after a later success; see {@linkcode FlagClient.status} for whether a
   * namespace is currently stale.
   *
   * @returns the failure or null
   */
  lastRefreshError(): RefreshError | null {
    return this.#lastError;
  }

  /**
   * The error that stopped the client (401/403, a rejected subscription, a
   * `protocol_downgrade` resync), or null while it runs.
   *
   * @returns the fatal error or null
   */
  fatalError(): CfgtoolError | null {
    return this.#fatal;
  }

  /**
   * Per-namespace status.
   *
   * @returns one entry per subscribed namespace
   */
  status(): NamespaceStatus[] {
    return [...this.#tracks.values()].map((t) => ({
      namespace: t.slug,
      flags: canonicalFlagList(t.flags),
      version: t.state?.version ?? null,
      closureHash: t.state?.hash ?? null,
      updatedAt: t.updatedAt,
      lastError: t.lastError,
      stale: t.lastError !== null &&
        (t.updatedAt === null || t.lastError.at.getTime() >= t.updatedAt.getTime()),
    }));
  }

  /**
   * Calls `listener` after each verified apply that changed a namespace's
   * version or closure. Listener errors are logged and ignored.
   *
   * @param listener the callback
   * @returns a function that removes it
   */
  onChange(listener: (change: ChangeEvent) => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  /**
   * Calls `listener` on each refresh failure (and on the fatal error).
   *
   * @param listener the callback
   * @returns a function that removes it
   */
  onError(listener: (error: RefreshError) => void): () => void {
    this.#errorListeners.add(listener);
    return () => this.#errorListeners.delete(listener);
  }

  /**
   * Ends the stream, every request and every timer. Evaluation keeps
   * working on the last models. Idempotent.
   *
   * @returns resolves when everything stopped
   */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      this.#closing.abort();
      this.#stream?.abort();
      this.#settleWaiters(closedError());
      this.#done.resolve();
    }
    await this.#run;
    await Promise.all([...this.#tracks.values()].map((t) => t.queue));
  }

  /** `await using client = new FlagClient(…)` closes it. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  // ---------------------------------------------------------------- the stream

  #eventsUrl(): string {
    const q = new URLSearchParams();
    for (const t of this.#tracks.values()) q.append("ns", t.param);
    const since = [...this.#tracks.values()].filter((t) => t.state !== null)
      .map((t) => `${t.slug}:${t.state!.version}`);
    if (since.length > 0) q.set("since", since.join(","));
    return `${this.#server}/api/v1/events?${q}`;
  }

  async #loop(): Promise<void> {
    const backoff = new Backoff(this.#backoff);
    while (!this.#closed && this.#fatal === null) {
      const epoch = ++this.#epoch;
      const ac = new AbortController();
      this.#stream = ac;
      this.#restarting = false;
      let idle: ReturnType<typeof setTimeout> | undefined;
      const arm = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          this.#fail(
            new CfgtoolError(
              "stream_idle",
              `The event stream sent nothing for ${this.#idleTimeoutMs} ms; reconnecting`,
            ),
            null,
          );
          this.#restart();
        }, this.#idleTimeoutMs);
      };
      try {
        arm(); // a connect that hangs counts as idle too
        const headers: Record<string, string> = { authorization: `Bearer ${this.#token}` };
        if (this.#lastEventId !== null) headers["last-event-id"] = this.#lastEventId;
        const res = await openSse(this.#eventsUrl(), {
          headers,
          signal: ac.signal,
          fetch: this.#fetch,
        });
        this.#connected = true;
        this.#log("info", "event stream connected", { epoch });
        arm();
        for await (const msg of readSse(res.body!, { onBytes: arm })) {
          backoff.reset();
          this.#dispatch(msg, epoch);
          if (this.#fatal !== null) break;
        }
        if (!ac.signal.aborted) this.#log("info", "event stream ended by the server", { epoch });
      } catch (err) {
        if (this.#closed) break;
        if (ac.signal.aborted && (this.#restarting || this.#fatal !== null)) {
          // a deliberate reconnect, or a fatal event already recorded
        } else if (err instanceof CfgtoolError && FATAL_STATUSES.has(err.status)) {
          this.#setFatal(err);
        } else {
          this.#fail(asError(err), null);
        }
      } finally {
        clearTimeout(idle);
        ac.abort();
        this.#connected = false;
      }
      if (this.#closed || this.#fatal !== null) break;
      const delay = backoff.next();
      this.#log("info", "event stream reconnecting", { delay_ms: delay });
      await sleep(delay, this.#closing.signal);
    }
  }

  /** Drops the current connection; the loop reconnects (the next first events are snapshots). */
  #restart(): void {
    this.#restarting = true;
    this.#stream?.abort();
  }

  #dispatch(msg: SseMessage, epoch: number): void {
    if (msg.event !== "version" && msg.event !== "resync") return; // unknown events are skipped
    let ev: VersionEvent | ResyncEvent;
    try {
      ev = parseEventData(msg.event, msg.data);
    } catch (err) {
      this.#fail(asError(err), this.#tracks.get(msg.id?.split(":")[0] ?? "") ?? null);
      return;
    }
    const track = this.#tracks.get(ev.namespace);
    if (track === undefined) {
      this.#fail(
        new IntegrityError(
          "protocol",
          ev.namespace,
          null,
          `event for ${ev.namespace}, which is not subscribed`,
        ),
        null,
      );
      return;
    }
    if (ev.kind === "resync" && ev.reason === "protocol_downgrade") {
      this.#setFatal(
        new CfgtoolError(
          "protocol_downgrade",
          `The service asked ${ev.namespace} to resync with reason protocol_downgrade: protocol v2 cannot be honoured`,
          { status: 502, details: { namespace: ev.namespace } },
        ),
      );
      return;
    }
    track.pending++;
    track.queue = track.queue.then(async () => {
      track.pending--;
      if (this.#closed || this.#fatal !== null) return;
      if (ev.kind === "resync") await this.#onResync(track, ev, epoch);
      else await this.#onVersion(track, ev, epoch);
    }).catch((err) => this.#fail(asError(err), track));
  }

  // ---------------------------------------------------------------- applying events

  async #onVersion(track: Track, ev: VersionEvent, epoch: number): Promise<void> {
    if (track.epoch === epoch && track.seen !== null && ev.version <= track.seen) {
      this.#fail(
        new IntegrityError(
          "ordering",
          track.slug,
          ev.version,
          `version event ${track.slug}:${ev.version} does not follow ${track.slug}:${track.seen}; ignored`,
        ),
        track,
      );
      return;
    }
    track.epoch = epoch;
    track.seen = ev.version;
    this.#learnTenant(track, ev.snapshot_url);
    if (ev.delivery === "inline") {
      try {
        if (track.state === null) {
          throw new IntegrityError(
            "prev_closure_hash",
            track.slug,
            ev.version,
            `inline event ${track.slug}:${ev.version} arrived before any closure was held`,
          );
        }
        this.#commit(track, await track.state.applyDelta(ev), "inline");
      } catch (err) {
        if (!(err instanceof IntegrityError)) throw err;
        this.#fail(err, track);
        await this.#recover(
          track,
          { version: ev.version, hash: ev.closure_hash, url: null },
          "fallback",
        );
      }
      return;
    }
    if (track.state !== null && track.state.hash === ev.closure_hash) {
      // The announced closure is byte-for-byte the one held (same hash): nothing to download.
      this.#commit(track, track.state.withVersion(ev.version), "snapshot");
      return;
    }
    await this.#recover(
      track,
      { version: ev.version, hash: ev.closure_hash, url: ev.snapshot_url },
      "snapshot",
    );
  }

  async #onResync(track: Track, ev: ResyncEvent, epoch: number): Promise<void> {
    this.#log("info", "resync", { namespace: track.slug, reason: ev.reason });
    track.epoch = epoch;
    track.seen = ev.current_version; // a resync restarts the namespace's sequence
    this.#learnTenant(track, ev.snapshot_url);
    await this.#recover(
      track,
      { version: ev.current_version, hash: null, url: ev.snapshot_url },
      "resync",
    );
  }

  /**
   * Fetches and verifies a closure until it succeeds, a newer event for the
   * namespace supersedes it, or the closure is gone (404/410: the stream is
   * restarted, its first event is a fresh snapshot). The signed URL is
   * tried first; later attempts use the closure endpoint with the bearer.
   */
  async #recover(track: Track, target: Target, delivery: ChangeDelivery): Promise<void> {
    const backoff = new Backoff(this.#backoff);
    let signed = target.url;
    if (signed !== null && !this.#sameOrigin(signed)) {
      // Not an integrity failure (the archive is verified either way), but never follow it:
      // a server behind a proxy that rewrites the host announces its internal origin.
      this.#log("warn", "snapshot_url is not on the server's origin; using the closure endpoint", {
        namespace: track.slug,
        version: target.version,
        origin: this.#origin,
      });
      signed = null;
    }
    for (let attempt = 0;; attempt++) {
      if (this.#closed || this.#fatal !== null) return;
      if (attempt > 0 && track.pending > 0) {
        this.#log("info", "re-fetch superseded by a newer event", {
          namespace: track.slug,
          version: target.version,
        });
        return;
      }
      const url = signed ?? this.#closureUrl(track, target.version);
      if (url === null) {
        this.#fail(
          new CfgtoolError(
            "tenant_unknown",
            `Cannot fetch the closure of ${track.slug}: its tenant is unknown (set the tenant option)`,
          ),
          track,
        );
        return;
      }
      try {
        const state = await this.#fetchClosure(track, url, signed !== null, target);
        this.#commit(track, state, delivery);
        return;
      } catch (err) {
        if (this.#closed) return;
        const e = asError(err);
        this.#fail(e, track);
        const status = e instanceof CfgtoolError ? e.status : 0;
        if (status === 404 || status === 410) {
          this.#restart();
          return;
        }
        const wasSigned = signed !== null;
        signed = null; // the signed URL may have expired; the bearer endpoint never does
        if (wasSigned && status === 401) continue;
      }
      await sleep(backoff.next(), this.#closing.signal);
    }
  }

  async #fetchClosure(
    track: Track,
    url: string,
    signed: boolean,
    target: Target,
  ): Promise<ClosureState> {
    const headers: Record<string, string> = { accept: "application/x-tar" };
    if (!signed) headers.authorization = `Bearer ${this.#token}`;
    const held = track.state;
    if (held !== null) headers["if-none-match"] = held.etag;
    const ac = new AbortController();
    const onClose = () => ac.abort();
    this.#closing.signal.addEventListener("abort", onClose, { once: true });
    const timer = setTimeout(() => ac.abort(), this.#requestTimeoutMs);
    try {
      let res: Response;
      try {
        res = await this.#fetch(url, { headers, signal: ac.signal });
      } catch (err) {
        throw new CfgtoolError("unreachable", `Cannot fetch the closure of ${track.slug}: ${err}`, {
          status: 503,
          cause: err,
        });
      }
      if (res.status === 304) {
        await res.body?.cancel();
        if (
          held !== null && held.version === target.version &&
          (target.hash === null || target.hash === held.hash)
        ) {
          return held;
        }
        throw new IntegrityError(
          "snapshot_hash",
          track.slug,
          target.version,
          `the closure endpoint answered 304 for ${track.slug} v${target.version}, which the client does not hold`,
        );
      }
      if (!res.ok) {
        throw await httpError(res, `the closure endpoint (${track.slug} v${target.version})`);
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      let expected = target.hash;
      if (expected === null) {
        const tag = parseVersionEtag(res.headers.get("etag"));
        if (tag === null || !isClosureHash(tag.closure_hash) || tag.version !== target.version) {
          throw new IntegrityError(
            "snapshot_hash",
            track.slug,
            target.version,
            `the closure of ${track.slug} v${target.version} came without an ETag to verify it against`,
          );
        }
        expected = tag.closure_hash;
      }
      return await ClosureState.fromArchive(track.slug, target.version, bytes, expected);
    } finally {
      clearTimeout(timer);
      this.#closing.signal.removeEventListener("abort", onClose);
    }
  }

  #closureUrl(track: Track, version: number): string | null {
    const tenant = track.tenant ?? this.#tenant ?? this.#learnedTenant.get(track.slug) ?? null;
    if (tenant === null) return null;
    return closureUrl(this.#server, tenant, track.slug, version, track.subscription);
  }

  #learnTenant(track: Track, snapshotUrl: string | null): void {
    if (snapshotUrl === null || this.#learnedTenant.has(track.slug)) return;
    // not a closure URL (or not a URL at all): the fetch will fail and be reported
    const target = closureTarget(snapshotUrl);
    if (target !== null && target.namespace === track.slug) {
      this.#learnedTenant.set(track.slug, target.tenant);
    }
  }

  #sameOrigin(url: string): boolean {
    try {
      return new URL(url).origin === this.#origin;
    } catch {
      return false;
    }
  }

  // ---------------------------------------------------------------- bookkeeping

  #track(namespace: string): Track | undefined {
    return this.#tracks.get(slugOf(namespace));
  }

  #commit(track: Track, state: ClosureState, delivery: ChangeDelivery): void {
    const prev = track.state;
    track.state = state;
    track.updatedAt = new Date();
    this.#lastEventId = `${track.slug}:${state.version}`;
    if (this.#isReady()) this.#settleWaiters(null);
    if (prev !== null && prev.version === state.version && prev.hash === state.hash) return;
    const diff = state.diff(prev);
    this.#log("info", "closure applied", {
      namespace: track.slug,
      version: state.version,
      closure_hash: state.hash,
      delivery,
      files: diff.paths.length,
    });
    const change: ChangeEvent = {
      namespace: track.slug,
      version: state.version,
      previousVersion: prev?.version ?? null,
      closureHash: state.hash,
      previousClosureHash: prev?.hash ?? null,
      delivery,
      changedPaths: diff.paths,
      changedFlags: diff.flags,
    };
    for (const l of [...this.#changeListeners]) {
      try {
        l(change);
      } catch (err) {
        this.#log("error", "onChange listener failed", { error: String(err) });
      }
    }
  }

  #fail(error: Error, track: Track | null): void {
    const integrity = error instanceof IntegrityError ? error : null;
    const record: RefreshError = {
      namespace: track?.slug ?? integrity?.namespace ?? null,
      code: error instanceof CfgtoolError ? error.code : "error",
      check: integrity?.check ?? null,
      version: integrity?.version ?? null,
      message: error.message,
      at: new Date(),
      error,
    };
    this.#lastError = record;
    if (track !== null) track.lastError = record;
    this.#log("warn", "refresh failed", {
      namespace: record.namespace,
      code: record.code,
      check: record.check,
      message: record.message,
    });
    for (const l of [...this.#errorListeners]) {
      try {
        l(record);
      } catch (err) {
        this.#log("error", "onError listener failed", { error: String(err) });
      }
    }
  }

  #setFatal(error: CfgtoolError): void {
    if (this.#fatal !== null || this.#closed) return;
    this.#fatal = error;
    this.#fail(error, null);
    this.#log("error", "event stream stopped", { code: error.code, message: error.message });
    this.#stream?.abort();
    this.#settleWaiters(error);
    this.#done.reject(error);
  }

  #isReady(): boolean {
    for (const t of this.#tracks.values()) if (t.state === null) return false;
    return true;
  }

  #settleWaiters(error: Error | null): void {
    for (const w of [...this.#waiters]) {
      clearTimeout(w.timer);
      if (error === null) w.resolve();
      else w.reject(error);
    }
    this.#waiters.clear();
  }
}

function slugOf(namespace: string): string {
  const i = namespace.indexOf("/");
  return i < 0 ? namespace : namespace.slice(i + 1);
}

function notReady(namespace: string, flag: string, subscribed: boolean): EvaluationResult {
  return {
    flag,
    value: null,
    variation: null,
    reason: "ERROR",
    error_code: "GENERAL",
    error_message: subscribed
      ? `namespace ${namespace} has no verified closure yet`
      : `namespace ${namespace} is not subscribed by this client`,
    version: 0,
  };
}

function closedError(): CfgtoolError {
  return new CfgtoolError("client_closed", "The FlagClient was closed", { status: 499 });
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
