/**
 * The OFREP event streams of a process (lib/http/ofrep_events.ts), grouped
 * by namespace: one head listener per namespace however many streams it
 * has, one encoded frame per new head shared by all of them, and writes in
 * slices with a turn of the event loop between them (lib/events/next_turn.ts),
 * as the event hub's fan-out does. A stream whose environment is no longer
 * public, or whose namespace was deleted, is closed instead (its client
 * reconnects and gets the refusal). With a {@linkcode StreamAccess}, each
 * new head is announced only to streams whose token may still evaluate
 * there: the verdicts, one per token and shared by its streams, are
 * brought up to date first (lib/events/access.ts), and the streams of a
 * token that lost the right are closed without the event.
 *
 * @module
 */
import type { HeadWatcher } from "../store/head_watcher.ts";
import type { Head } from "../store/versions.ts";
import { admitted, type ReadGrant, type StreamAccess } from "./access.ts";
import { nextTurn } from "./next_turn.ts";
import type { SseStream } from "./sse.ts";

/** Streams a fan-out slice writes before the event loop gets a turn. */
const SLICE = 512;

/** What a stream follows: the environment its token evaluates in, and its right to. */
interface Member {
  environment: string;
  grant: ReadGrant | undefined;
}

/** The streams of one namespace. */
interface NamespaceStreams {
  /** Each stream with what it follows. */
  members: Map<SseStream, Member>;
  unwatch: () => void;
  /** The newest head not yet written to every member, or undefined. */
  pending: Head | null | undefined;
  /** Whether a fan-out is going on (a newer head waits in `pending`). */
  running: boolean;
}

/**
 * OFREP event streams by namespace.
 *
 * @example
 * ```ts
 * import { RefetchFeeds } from "./refetch_feed.ts";
 * import { createSseStream } from "./sse.ts";
 * import { HeadWatcher } from "../store/head_watcher.ts";
 * const kv = await Deno.openKv(":memory:");
 * const heads = new HeadWatcher(kv);
 * const feeds = new RefetchFeeds(heads, (h) => new TextEncoder().encode(`id: ${h.version}\n\n`));
 * const s = createSseStream();
 * feeds.add(s, "acme", "web", "production");
 * const listed = feeds.size;
 * s.close();
 * heads.close();
 * kv.close();
 * if (listed !== 1 || feeds.size !== 0) throw new Error();
 * ```
 */
export class RefetchFeeds {
  readonly #heads: HeadWatcher;
  readonly #frame: (head: Head) => Uint8Array;
  readonly #access: StreamAccess | undefined;
  readonly #feeds = new Map<string, NamespaceStreams>();
  /** The last frame built, by head: a connect and a fan-out of the same head share it. */
  #last: { version: number; hash: string; frame: Uint8Array } | null = null;

  /**
   * Groups the OFREP streams of a process.
   *
   * @param heads the process's head watcher
   * @param frame the event a stream gets for a new head
   * @param access re-authorises the streams before each event (lib/auth/stream_guard.ts)
   */
  constructor(heads: HeadWatcher, frame: (head: Head) => Uint8Array, access?: StreamAccess) {
    this.#heads = heads;
    this.#frame = frame;
    this.#access = access;
  }

  /** Streams followed now. */
  get size(): number {
    let n = 0;
    for (const f of this.#feeds.values()) n += f.members.size;
    return n;
  }

  /**
   * The event for `head`, encoded once per head.
   *
   * @param head a namespace head
   * @returns the encoded event
   */
  frameOf(head: Head): Uint8Array {
    const last = this.#last;
    if (last !== null && last.version === head.version && last.hash === head.closure_hash) {
      return last.frame;
    }
    const frame = this.#frame(head);
    this.#last = { version: head.version, hash: head.closure_hash, frame };
    return frame;
  }

  /**
   * Follows (tenant, namespace) for a stream whose token evaluates in
   * `environment`, until the stream closes. `grant` is the token's right
   * to evaluate there, checked before each event.
   */
  add(
    stream: SseStream,
    tenant: string,
    namespace: string,
    environment: string,
    grant?: ReadGrant,
  ): void {
    if (stream.closed) return;
    const id = `${tenant}\u0000${namespace}`;
    let feed = this.#feeds.get(id);
    if (feed === undefined) {
      const created: NamespaceStreams = {
        members: new Map(),
        unwatch: () => {},
        pending: undefined,
        running: false,
      };
      created.unwatch = this.#heads.watch(tenant, namespace, (h) => this.#changed(created, h));
      this.#feeds.set(id, created);
      feed = created;
    }
    feed.members.set(stream, { environment, grant });
    const joined = feed;
    stream.onClose(() => {
      joined.members.delete(stream);
      if (joined.members.size === 0 && this.#feeds.get(id) === joined) {
        this.#feeds.delete(id);
        joined.unwatch();
      }
    });
  }

  #changed(feed: NamespaceStreams, head: Head | null): void {
    feed.pending = head;
    if (!feed.running) void this.#fanOut(feed);
  }

  /** Writes the newest head to every member, again while newer ones arrive. */
  async #fanOut(feed: NamespaceStreams): Promise<void> {
    feed.running = true;
    try {
      while (feed.pending !== undefined) {
        const head = feed.pending;
        feed.pending = undefined;
        const frame = head === null ? null : this.frameOf(head);
        const members = frame === null || this.#access === undefined
          ? [...feed.members]
          : await this.#admitted(feed, this.#access);
        let n = 0;
        for (const [stream, { environment }] of members) {
          if (++n % SLICE === 0) await nextTurn();
          if (frame === null || head!.environments[environment]?.public_evaluate !== true) {
            stream.close(); // the token no longer evaluates here; a reconnect gets the refusal
          } else stream.write(frame);
        }
      }
    } finally {
      feed.running = false;
    }
  }

  /** The members whose token may still evaluate here, re-authorised first; the others are closed. */
  async #admitted(feed: NamespaceStreams, access: StreamAccess): Promise<[SseStream, Member][]> {
    const members = [...feed.members];
    await access.sync();
    await access.check(members.map(([, m]) => m.grant));
    return admitted(members, ([, m]) => m.grant, ([s]) => s.closed, ([s]) => s.close());
  }
}
