/**
 * One event-stream connection: who it belongs to, its byte stream, and per
 * subscribed namespace the closure the client holds (version and hash, as
 * the last event delivered it). Events are written through here so the
 * per-namespace rules hold in one place: versions strictly increase and
 * each inline event's `prev_closure_hash` is the hash the client holds.
 *
 * @module
 */
import type { FlagSelection } from "../protocol/subscription.ts";
import type { ReadGrant } from "./access.ts";
import type { SseStream } from "./sse.ts";

/** What a connection tracks for one namespace. */
export interface NamespaceState {
  /** Slug (the connection's tenant is fixed). */
  slug: string;
  /** The subscribed flags. */
  flags: FlagSelection;
  /** Version of the last event sent, or null before the first event. */
  version: number | null;
  /** Closure hash the client holds after that event (null before the first). */
  hash: string | null;
  /** Whether an inline event was sent since the last snapshot or resync. */
  inlineSent: boolean;
  /**
   * Resume hint of the request, resolved at subscribe time: the prior
   * closure the client claims (dropped once the first event is sent).
   */
  hint: { version: number; hash: string } | null;
  /**
   * The connection's right to read this namespace, shared with the other
   * streams of its credential (lib/events/access.ts); absent when nobody
   * watches the connection.
   */
  grant?: ReadGrant;
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
  /** The byte stream of the response (its lifecycle: lib/events/sse.ts). */
  stream: SseStream;
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
 *   stream: createSseStream(),
 * });
 * c.states.set("web", {
 *   slug: "web", flags: "*", version: null, hash: null, inlineSent: false, hint: null,
 * });
 * const frame = new TextEncoder().encode("event: version\nid: web:1\ndata: {}\n\n");
 * if (!c.sendEvent("web", frame, 1, "sha256:a", "snapshot")) throw new Error();
 * if (c.sendEvent("web", frame, 1, "sha256:a", "inline")) throw new Error();
 * c.close();
 * if (!c.closed || c.states.get("web")?.version !== 1) throw new Error();
 * ```
 */
export class StreamConnection {
  readonly id: number;
  readonly principalId: string;
  readonly tenant: string;
  readonly origin: string;
  readonly states: Map<string, NamespaceState> = new Map();
  readonly #stream: SseStream;

  constructor(init: ConnectionInit) {
    this.id = init.id;
    this.principalId = init.principalId;
    this.tenant = init.tenant;
    this.origin = init.origin;
    this.#stream = init.stream;
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
   * holds afterwards (`version`, `hash`). A version not above the last one is
   * refused (never sent), except after a resync, which resets the sequence.
   * Called once per subscriber and event, so it takes plain arguments.
   */
  sendEvent(
    slug: string,
    frame: Uint8Array,
    version: number,
    hash: string,
    kind: "inline" | "snapshot" | "resync",
  ): boolean {
    const state = this.states.get(slug);
    if (state === undefined) return false;
    if (kind !== "resync" && state.version !== null && version <= state.version) return false;
    if (!this.#stream.write(frame)) return false;
    state.version = version;
    state.hash = hash;
    state.inlineSent = kind === "inline";
    state.hint = null;
    return true;
  }

  /** Ends the stream. */
  close(): void {
    this.#stream.close();
  }
}
