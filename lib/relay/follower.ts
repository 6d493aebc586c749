/**
 * The relay's upstream follower: which namespaces to follow, and following
 * them with the SDK's own stream client (`FlagClient`, lib/client/), which
 * verifies every closure as docs/events.md requires (each file's SHA-256,
 * the closure hash before and after a delta, every snapshot) before it
 * replaces anything. Each verified change goes into the relay's holdings
 * (lib/relay/holdings.ts) and its data directory (lib/relay/disk.ts).
 *
 * Which namespaces: those named by `--ns`, or else every namespace the
 * relay's token may read, found from the upstream (`GET /api/v1/me`, then
 * `GET /api/v1/tenants` and `GET /api/v1/tenants/{t}/namespaces`) and found
 * again every `discoverMs`, so a namespace created upstream is followed
 * without a restart and one deleted upstream stops being served. One
 * stream per tenant (at most 32 namespaces each, the protocol's limit);
 * when a tenant's set changes its stream is replaced.
 *
 * Connection state: the relay is connected while every stream is; a
 * namespace's lag is 0 while its stream is connected, else the time since
 * it last was (the served version may be that much behind).
 *
 * @module
 */
import { FlagClient } from "../client/flag_client.ts";
import { ServiceClient } from "../client/api.ts";
import { UsageError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { MAX_NAMESPACES, parseNamespaceParam } from "../protocol/subscription.ts";
import type { ClosureDisk } from "./disk.ts";
import type { Holdings } from "./holdings.ts";
import { type Verdict, VerdictCache } from "./verdicts.ts";

/** A namespace to follow. */
export interface Followed {
  tenant: string;
  namespace: string;
}

/** Options of {@linkcode Follower}. */
export interface FollowerOptions {
  /** The upstream's base URL. */
  upstream: string;
  /** The relay's own token there (manifest.read on what it follows). */
  token: string;
  /** `--ns` values (`[tenant/]slug[:*]`); empty: every namespace the token may read. */
  namespaces: readonly string[];
  /** How often the namespaces are found again, ms (default 5,000). */
  discoverMs?: number;
  /** Where verified changes go. */
  holdings: Holdings;
  /** Where they are kept. */
  disk?: ClosureDisk;
  /** Where logs go. */
  log: Logger;
  /** Told of each (re)connection of an upstream stream after its first. */
  onReconnect?: () => void;
}

interface Stream {
  tenant: string;
  slugs: string[];
  client: FlagClient;
  dead: boolean;
  connects: number;
}

/**
 * Follows the upstream.
 *
 * @example
 * ```ts ignore
 * const follower = new Follower({ upstream, token, namespaces: [], holdings, disk, log });
 * follower.start();
 * // …
 * await follower.close();
 * ```
 */
export class Follower {
  readonly #o: FollowerOptions;
  readonly #streams = new Map<string, Stream[]>();
  readonly #lastConnected = new Map<string, number>();
  readonly #stop = new AbortController();
  #discovered = false;
  #loop: Promise<void> | undefined;
  #sampler: ReturnType<typeof setInterval> | undefined;
  #wasConnected = false;
  #connectedSince: number | null = null;
  #lastDiscoveryError: string | null = null;

  /** @param options upstream, token, namespaces and where changes go */
  constructor(options: FollowerOptions) {
    this.#o = options;
  }

  /** Starts finding and following namespaces (returns at once). */
  start(): void {
    this.#loop ??= this.#run();
    this.#sampler = setInterval(() => this.#sample(), 250);
    Deno.unrefTimer(this.#sampler);
  }

  /** Whether every upstream stream is connected (and the namespaces were found). */
  get connected(): boolean {
    if (!this.#discovered) return false;
    for (const list of this.#streams.values()) {
      for (const s of list) if (s.dead || !s.client.connected) return false;
    }
    return true;
  }

  /** Since when the relay is connected (ms), or null. */
  get connectedSince(): number | null {
    return this.#connectedSince;
  }

  /** The last failure to find the namespaces, or null. */
  get lastDiscoveryError(): string | null {
    return this.#lastDiscoveryError;
  }

  /**
   * How far a namespace may be behind, ms: 0 while its stream is connected,
   * else the time since it was (null when it never was in this process).
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @param now the time, ms
   * @returns the lag, or null
   */
  lagMs(tenant: string, namespace: string, now: number = Date.now()): number | null {
    const s = this.#streamOf(tenant, namespace);
    if (s !== undefined && !s.dead && s.client.connected) return 0;
    const last = this.#lastConnected.get(`${tenant}/${namespace}`);
    return last === undefined ? null : Math.max(0, now - last);
  }

  /** Stops every stream. */
  async close(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#sampler);
    await this.#loop;
    await Promise.all(
      [...this.#streams.values()].flat().map((s) => s.client.close().catch(() => {})),
    );
    this.#streams.clear();
  }

  #streamOf(tenant: string, namespace: string): Stream | undefined {
    return this.#streams.get(tenant)?.find((s) => s.slugs.includes(namespace));
  }

  /** Records when each stream was last seen connected, and logs transitions. */
  #sample(): void {
    const now = Date.now();
    for (const list of this.#streams.values()) {
      for (const s of list) {
        if (!s.dead && s.client.connected) {
          for (const slug of s.slugs) this.#lastConnected.set(`${s.tenant}/${slug}`, now);
        }
      }
    }
    const connected = this.connected;
    if (connected !== this.#wasConnected) {
      this.#wasConnected = connected;
      this.#connectedSince = connected ? now : null;
      this.#o.log(
        connected ? "info" : "warn",
        connected
          ? "relay: upstream connected"
          : "relay: upstream not connected; serving the last verified versions",
        {
          upstream: this.#o.upstream,
        },
      );
    }
  }

  async #run(): Promise<void> {
    const every = this.#o.discoverMs ?? 5_000;
    while (!this.#stop.signal.aborted) {
      try {
        const wanted = await this.#discover();
        this.#discovered = true;
        if (this.#lastDiscoveryError !== null) {
          this.#o.log("info", "relay: upstream answers again", { upstream: this.#o.upstream });
        }
        this.#lastDiscoveryError = null;
        await this.#reconcile(wanted);
      } catch (err) {
        const message = (err as Error).message;
        if (message !== this.#lastDiscoveryError) {
          this.#o.log("warn", "relay: cannot find the namespaces to follow upstream", {
            upstream: this.#o.upstream,
            error: message,
          });
        }
        this.#lastDiscoveryError = message;
        if (err instanceof UsageError) {
          this.#o.log("error", "relay: the relay's token cannot follow anything", {
            error: message,
          });
        }
      }
      await sleep(every, this.#stop.signal);
    }
  }

  /** The namespaces to follow now, by tenant. */
  async #discover(): Promise<Map<string, Set<string>>> {
    const me: Verdict = await new VerdictCache({
      upstream: this.#o.upstream,
      ttlMs: 0,
      refusalTtlMs: 0,
      offlineGraceMs: 0,
    }).check(this.#o.token);
    if (me.type === "namespace-client") {
      throw new UsageError(
        "A namespace-client token cannot read manifests: give the relay a " +
          "namespace-read, tenant-admin or superadmin token",
      );
    }
    const out = new Map<string, Set<string>>();
    const add = (tenant: string, ns: string) => {
      let set = out.get(tenant);
      if (set === undefined) out.set(tenant, set = new Set());
      set.add(ns);
    };
    if (this.#o.namespaces.length > 0) {
      for (const text of this.#o.namespaces) {
        const p = parseNamespaceParam(text.includes(":") ? text : `${text}:*`);
        const tenant = p.tenant ?? me.tenant;
        if (tenant === null) {
          throw new UsageError(`--ns ${text}: this token is bound to no tenant; write tenant/slug`);
        }
        add(tenant, p.slug);
      }
      return out;
    }
    if (me.type === "namespace-read" || me.type === "namespace-write") {
      add(me.tenant!, me.namespace!);
      return out;
    }
    const api = new ServiceClient({ server: this.#o.upstream, token: this.#o.token });
    const tenants = me.type === "superadmin"
      ? (await api.listTenants()).map((t) => t.slug)
      : [me.tenant!];
    for (const t of tenants) {
      out.set(t, out.get(t) ?? new Set());
      for (const ns of await api.listNamespaces(t)) add(t, ns.slug);
    }
    return out;
  }

  /** Starts, replaces and stops streams so that exactly `wanted` is followed. */
  async #reconcile(wanted: Map<string, Set<string>>): Promise<void> {
    // namespaces gone upstream stop being served (or expected)
    for (const gone of this.#o.holdings.awaiting()) {
      if (!wanted.get(gone.tenant)?.has(gone.namespace) && this.#o.namespaces.length === 0) {
        this.#o.holdings.remove(gone.tenant, gone.namespace);
      }
    }
    for (const held of this.#o.holdings.list()) {
      if (!wanted.get(held.tenant)?.has(held.namespace) && this.#o.namespaces.length === 0) {
        this.#o.holdings.remove(held.tenant, held.namespace);
        await this.#o.disk?.remove(held.tenant, held.namespace);
        this.#o.log("info", "relay: namespace gone upstream; no longer served", {
          tenant: held.tenant,
          namespace: held.namespace,
        });
      }
    }
    for (const [tenant, list] of [...this.#streams]) {
      const want = wanted.get(tenant) ?? new Set<string>();
      const have = new Set(list.flatMap((s) => s.slugs));
      const same = want.size === have.size && [...want].every((s) => have.has(s)) &&
        list.every((s) => !s.dead);
      if (same) continue;
      this.#streams.delete(tenant);
      await Promise.all(list.map((s) => s.client.close().catch(() => {})));
    }
    for (const [tenant, slugs] of wanted) {
      if (this.#streams.has(tenant) || slugs.size === 0) continue;
      const sorted = [...slugs].sort();
      const list: Stream[] = [];
      for (let i = 0; i < sorted.length; i += MAX_NAMESPACES) {
        list.push(this.#open(tenant, sorted.slice(i, i + MAX_NAMESPACES)));
      }
      this.#streams.set(tenant, list);
      this.#o.log("info", "relay: following", { tenant, namespaces: sorted.join(",") });
    }
  }

  #open(tenant: string, slugs: string[]): Stream {
    const stream = {} as Stream;
    const client = new FlagClient({
      server: this.#o.upstream,
      token: this.#o.token,
      tenant,
      namespaces: slugs.map((s) => `${tenant}/${s}:*`),
      backoff: { initialMs: 250, maxMs: 5_000 },
      idleTimeoutMs: 90_000,
      logger: (level, msg, fields) => {
        if (msg === "event stream connected") {
          // the upstream accepted every namespace of the stream: those without a
          // version yet are known, and subscribing to them is accepted here too
          for (const slug of slugs) this.#o.holdings.expect(tenant, slug);
          if (stream.connects++ > 0) this.#o.onReconnect?.();
          this.#sample();
        }
        if (level === "error" || msg === "refresh failed") {
          this.#o.log(level === "error" ? "error" : "warn", `relay: upstream ${msg}`, {
            tenant,
            ...fields,
          });
        }
      },
    });
    Object.assign(stream, { tenant, slugs, client, dead: false, connects: 0 });
    client.onChange((change) => {
      const state = client.closure(change.namespace);
      if (state === undefined) return;
      if (this.#o.holdings.put(tenant, state, "upstream")) {
        void this.#o.disk?.save(tenant, state);
      }
    });
    client.done().catch((err) => {
      stream.dead = true; // found again (or not) at the next discovery
      this.#o.log("warn", "relay: upstream stream stopped", {
        tenant,
        error: (err as Error).message,
      });
    });
    return stream;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
