/**
 * One event-stream connection: who it belongs to, its byte stream, and per
 * subscribed namespace the closure the client holds (version and hash, as
 * the last event delivered it). Events are written through here so the
 * per-namespace rules hold in one place: versions strictly increase and
 * each inline event's `prev_closure_hash` is the hash the client holds.
 *
 * @module
 */
import type { FlagSelection } from "../closure/subscription.ts";
import { KEEPALIVE_FRAME, type SseStream } from "./sse.ts";

/** What a connection tracks for one namespace. */
export interface NamespaceState {
  /** Slug (the connection's tenant is fixed). */
  slug: string;
  /** The subscribed flags. */
  flags: FlagSelection;
  /** `subscription` parameter for snapshot URLs (base64url of the canonical flag list). */
  subscription: string;
  /** Version of the last event sent, or null before the first event. */
  version: number | null;
  /** Closure hash the client holds after that event (null before the first). */
  hash: string | null;
  /** Whether an inline event was sent since the last snapshot or resync. */
  inlineSent: boolean;
  /** Resume hint of the request, resolved at subscribe time: the prior closure the client claims. */
  hint: { version: number; hash: string } | null;
}

/** Options of {@linkcode StreamConnection}. */
export interface ConnectionInit {
  id: number;
  /** Token id or user id: signed snapshot tokens are bound to it. */
  principalId: string;
  /** The one tenant of the connection. */
  tenant: string;
  /** Scheme and host for snapshot URLs. */
  origin: string;
  /** The byte stream of the response. */
  stream: SseStream;
  /** Clock (ms). */
  now: () => number;
}

/**
 * A connection of the stream hub.
 *
 * @example
 * ```ts
 * import { StreamConnection } from "./connection.ts";
 * import { createSseStream } from "./sse.ts";
 * const c = new StreamConnection({
 *   id: 1, principalId: "tok_1", tenant: "acme", origin: "http://h",
 *   stream: createSseStream(() => {}), now: () => 0,
 * });
 * c.keepalive();
 * c.close();
 * if (!c.closed) throw new Error();
 * ```
 */
export class StreamConnection {
  readonly id: number;
  readonly principalId: string;
  readonly tenant: string;
  readonly origin: string;
  readonly states: Map<string, NamespaceState> = new Map();
  readonly #stream: SseStream;
  readonly #now: () => number;
  /** When the last byte was written (keepalives included). */
  lastWriteAt: number;
  /** When the last event (version or resync) was written. */
  lastEventAt: number;

  constructor(init: ConnectionInit) {
    this.id = init.id;
    this.principalId = init.principalId;
    this.tenant = init.tenant;
    this.origin = init.origin;
    this.#stream = init.stream;
    this.#now = init.now;
    this.lastWriteAt = this.lastEventAt = init.now();
  }

  /** Whether the stream has ended. */
  get closed(): boolean {
    return this.#stream.closed;
  }

  /** Bytes written so far. */
  get bytesWritten(): number {
    return this.#stream.bytesWritten;
  }

  /**
   * Writes an event frame for a namespace and records the closure the client
   * holds afterwards. A version not above the last one is refused (never
   * sent), except after a resync, which resets the sequence.
   */
  sendEvent(
    slug: string,
    frame: Uint8Array,
    after: { version: number; hash: string; kind: "inline" | "snapshot" | "resync" },
  ): boolean {
    const state = this.states.get(slug);
    if (state === undefined) return false;
    if (after.kind !== "resync" && state.version !== null && after.version <= state.version) {
      return false;
    }
    if (!this.#stream.write(frame)) return false;
    const t = this.#now();
    this.lastWriteAt = this.lastEventAt = t;
    state.version = after.version;
    state.hash = after.hash;
    state.inlineSent = after.kind === "inline";
    return true;
  }

  /** Writes a `:keepalive` comment. */
  keepalive(): void {
    if (this.#stream.write(KEEPALIVE_FRAME)) this.lastWriteAt = this.#now();
  }

  /** Ends the stream. */
  close(): void {
    this.#stream.close();
  }
}
