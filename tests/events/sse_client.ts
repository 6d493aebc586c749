/**
 * Test helper: a real SSE client over `fetch` (or any Response), parsed by
 * eventsource-parser. Records events and comments with arrival times, and
 * keeps a local copy of every namespace's closure by applying inline deltas
 * and downloading snapshots, with the client integrity checks of
 * docs/events.md.
 *
 * @module
 */
import { createParser, type EventSourceMessage } from "sse-parser";
import { applyDelta, type FileEntry } from "../../lib/closure/delta.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { unpackArchive } from "../../lib/closure/archive.ts";

/** One received frame. */
export interface Received {
  kind: "event" | "comment";
  event?: string;
  id?: string;
  data: string;
  /** performance.now() at arrival. */
  at: number;
}

/** An open stream. */
export interface SseClient {
  /** The HTTP response (status, headers). */
  response: Response;
  /** Everything received so far. */
  received: Received[];
  /** Resolves with the next frame matching `pred` (already received ones first, in order). */
  next(pred?: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Whether the stream ended. */
  readonly done: boolean;
  /** Aborts the request. */
  close(): void;
}

/**
 * Reads an SSE response.
 *
 * @example
 * ```ts ignore
 * const client = readSse(await fetch(url, { headers }), ac);
 * const first = await client.next((r) => r.event === "version");
 * ```
 */
export function readSse(response: Response, abort?: AbortController): SseClient {
  const received: Received[] = [];
  let cursor = 0;
  const waiters: (() => void)[] = [];
  let done = false;
  const wake = () => waiters.splice(0).forEach((w) => w());
  const parser = createParser({
    onEvent(e: EventSourceMessage) {
      received.push({
        kind: "event",
        ...(e.event === undefined ? {} : { event: e.event }),
        ...(e.id === undefined ? {} : { id: e.id }),
        data: e.data,
        at: performance.now(),
      });
      wake();
    },
    onComment(c: string) {
      received.push({ kind: "comment", data: c, at: performance.now() });
      wake();
    },
  });
  const reader = response.body?.getReader();
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      if (reader === undefined) return;
      while (true) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } catch {
      // aborted
    } finally {
      done = true;
      wake();
    }
  })();
  return {
    response,
    received,
    ended,
    get done() {
      return done;
    },
    async next(pred = (r) => r.kind === "event", timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (true) {
        while (cursor < received.length) {
          const r = received[cursor++]!;
          if (pred(r)) return r;
        }
        if (done) throw new Error("stream ended while waiting for a frame");
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms`);
        let timer: ReturnType<typeof setTimeout> | undefined;
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          timer = setTimeout(resolve, left);
        });
        clearTimeout(timer);
      }
    },
    close() {
      abort?.abort();
      reader?.cancel().catch(() => {});
    },
  };
}

/** A `version` or `resync` event's data. */
// deno-lint-ignore no-explicit-any
export type EventData = Record<string, any>;

/** A local copy of one namespace's closure, kept as a client would. */
export interface LocalNamespace {
  version: number;
  hash: string;
  files: Map<string, Uint8Array>;
}

/**
 * Applies `version` and `resync` events to local closures with every
 * integrity check; a failed check throws (tests want to know).
 */
export class LocalClosures {
  readonly namespaces = new Map<string, LocalNamespace>();
  /** Ops seen in inline events, for coverage assertions. */
  readonly ops = new Set<string>();
  readonly deliveries: string[] = [];
  readonly #fetch: (url: string) => Promise<Response>;

  constructor(fetchFn: (url: string) => Promise<Response> = (u) => fetch(u)) {
    this.#fetch = fetchFn;
  }

  /** Applies one frame; returns its data. */
  async apply(r: Received): Promise<EventData> {
    const data = JSON.parse(r.data) as EventData;
    if (data.protocol !== "v2") throw new Error(`protocol ${data.protocol}`);
    if (r.event === "resync") {
      if (r.id !== `${data.namespace}:${data.current_version}`) throw new Error(`id ${r.id}`);
      await this.#snapshot(data.namespace, data.current_version, data.snapshot_url, null);
      return data;
    }
    if (r.event !== "version") throw new Error(`unexpected event ${r.event}`);
    if (r.id !== `${data.namespace}:${data.version}`) throw new Error(`id ${r.id}`);
    const local = this.namespaces.get(data.namespace);
    if (local !== undefined && data.version <= local.version) {
      throw new Error(`version ${data.version} after ${local.version}`);
    }
    this.deliveries.push(data.delivery);
    if (data.delivery === "snapshot") {
      if (local !== undefined && data.prev_closure_hash !== local.hash) {
        throw new Error(`chain broken: prev ${data.prev_closure_hash} local ${local.hash}`);
      }
      await this.#snapshot(data.namespace, data.version, data.snapshot_url, data.closure_hash);
      return data;
    }
    if (local === undefined) throw new Error("inline event before any snapshot");
    if (data.prev_closure_hash !== local.hash) {
      throw new Error(`pre-apply: prev ${data.prev_closure_hash} local ${local.hash}`);
    }
    const files = data.files as FileEntry[];
    if (files.length === 0) throw new Error("inline event without files");
    for (const f of files) this.ops.add(f.op);
    const next = await applyDelta(local.files, files);
    const hash = await closureHash(next);
    if (hash !== data.closure_hash) throw new Error(`post-apply: ${hash} != ${data.closure_hash}`);
    this.namespaces.set(data.namespace, { version: data.version, hash, files: next });
    return data;
  }

  async #snapshot(ns: string, version: number, url: string, expected: string | null) {
    const res = await this.#fetch(url);
    if (res.status !== 200) throw new Error(`snapshot ${url}: ${res.status} ${await res.text()}`);
    const files = await unpackArchive(new Uint8Array(await res.arrayBuffer()));
    const hash = await closureHash(files);
    if (expected !== null && hash !== expected) throw new Error(`snapshot hash ${hash}`);
    const etag = res.headers.get("etag");
    if (etag !== `"v${version}-${hash}"`) throw new Error(`etag ${etag}`);
    this.namespaces.set(ns, { version, hash, files });
  }
}
