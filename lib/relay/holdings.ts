/**
 * What a relay serves from: per (tenant, namespace), the latest verified
 * closure of the whole manifest (a {@linkcode ClosureState}: files, hash,
 * version, compiled model) and a few versions before it, so that the
 * relay's own event stream can send inline deltas from a version a client
 * holds, and its closure endpoint can serve the versions its snapshot URLs
 * name. Everything is in memory; the follower (lib/relay/follower.ts) and
 * the start-up read of the data directory (lib/relay/disk.ts) put states
 * in, and listeners hear of each change. A namespace the upstream has but
 * that has no version yet (created, never pushed) is known without a state
 * ({@linkcode Holdings.expect}) until its first version arrives.
 *
 * Subscription closures and archives of a held version are computed once
 * and shared by every connection that asks for them.
 *
 * @module
 */
import { packArchive } from "../closure/archive.ts";
import { closureHash } from "../closure/hash.ts";
import type { ClosureState } from "../client/closure_state.ts";
import { selectClosure } from "../flags/select.ts";
import { canonicalFlagList, type FlagSelection } from "../protocol/subscription.ts";

/** Versions kept per namespace (the current one included). */
export const KEPT_VERSIONS = 16;

/** One held namespace. */
export interface Held {
  tenant: string;
  namespace: string;
  /** The current verified closure of the whole manifest. */
  state: ClosureState;
  /** Where it came from: the live upstream stream, or the data directory at start. */
  source: "upstream" | "disk";
  /** When it was verified (or saved, for one read from disk). */
  updatedAt: Date;
}

/** A subscription's closure at a version. */
export interface SubscriptionClosure {
  files: ReadonlyMap<string, Uint8Array>;
  hash: string;
}

/** A change of a held namespace. */
export interface HeldChange {
  held: Held;
  /** The state before, or null for a namespace seen for the first time. */
  previous: ClosureState | null;
}

interface Slot {
  held: Held;
  /** Oldest first; the last one is `held.state`. */
  history: ClosureState[];
}

const closures = new WeakMap<ClosureState, Map<string, Promise<SubscriptionClosure>>>();
const archives = new WeakMap<ClosureState, Map<string, Promise<Uint8Array>>>();

/**
 * The closure of a subscription at a held state (memoized per state).
 *
 * @param state a full-manifest state
 * @param flags the subscription
 * @returns the files and their closure hash
 *
 * @example
 * ```ts
 * import { subscriptionClosure } from "./holdings.ts";
 * import { ClosureState } from "../client/closure_state.ts";
 * import { closureHash } from "../closure/hash.ts";
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const state = await ClosureState.fromFiles("web", 1, files, await closureHash(files));
 * const c = await subscriptionClosure(state, "*");
 * if (c.hash !== state.hash) throw new Error();
 * ```
 */
export function subscriptionClosure(
  state: ClosureState,
  flags: FlagSelection,
): Promise<SubscriptionClosure> {
  const key = canonicalFlagList(flags);
  let byFlags = closures.get(state);
  if (byFlags === undefined) closures.set(state, byFlags = new Map());
  let c = byFlags.get(key);
  if (c === undefined) {
    c = flags === "*" ? Promise.resolve({ files: state.files, hash: state.hash }) : (async () => {
      const files = selectClosure(state.files, flags, state.manifest);
      return { files, hash: await closureHash(files) };
    })();
    byFlags.set(key, c);
  }
  return c;
}

/**
 * The tar.gz archive of a subscription's closure at a held state (memoized
 * per state), as the closure endpoint serves it.
 *
 * @param state a full-manifest state
 * @param flags the subscription
 * @returns the archive bytes
 *
 * @example
 * ```ts ignore
 * const bytes = await subscriptionArchive(state, "*");
 * ```
 */
export function subscriptionArchive(
  state: ClosureState,
  flags: FlagSelection,
): Promise<Uint8Array> {
  const key = canonicalFlagList(flags);
  let byFlags = archives.get(state);
  if (byFlags === undefined) archives.set(state, byFlags = new Map());
  let a = byFlags.get(key);
  if (a === undefined) {
    a = subscriptionClosure(state, flags).then((c) => packArchive(c.files));
    byFlags.set(key, a);
  }
  return a;
}

/**
 * The relay's namespaces, in memory.
 *
 * @example
 * ```ts
 * import { Holdings } from "./holdings.ts";
 * import { ClosureState } from "../client/closure_state.ts";
 * import { closureHash } from "../closure/hash.ts";
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const state = await ClosureState.fromFiles("web", 1, files, await closureHash(files));
 * const holdings = new Holdings();
 * let heard = 0;
 * holdings.onChange(() => heard++);
 * holdings.put("acme", state, "upstream");
 * if (holdings.get("acme", "web")?.state.version !== 1 || heard !== 1) throw new Error();
 * ```
 */
export class Holdings {
  readonly #slots = new Map<string, Slot>();
  /** Namespaces the upstream has that have no version here yet (none pushed, or none arrived). */
  readonly #awaiting = new Set<string>();
  readonly #listeners = new Set<(change: HeldChange) => void>();

  /** Number of namespaces held. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * The current state of a namespace.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns the held namespace, or undefined
   */
  get(tenant: string, namespace: string): Held | undefined {
    return this.#slots.get(key(tenant, namespace))?.held;
  }

  /**
   * A held version of a namespace (the current one or one of the last
   * {@linkcode KEPT_VERSIONS}).
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @param version the version
   * @returns the state, or undefined
   */
  at(tenant: string, namespace: string, version: number): ClosureState | undefined {
    const slot = this.#slots.get(key(tenant, namespace));
    return slot?.history.findLast((s) => s.version === version);
  }

  /** Every held namespace, sorted by tenant and slug. */
  list(): Held[] {
    return [...this.#slots.values()].map((s) => s.held).sort((a, b) =>
      a.tenant === b.tenant ? a.namespace < b.namespace ? -1 : 1 : a.tenant < b.tenant ? -1 : 1
    );
  }

  /**
   * Records that the upstream has a namespace (it accepted a stream on it)
   * that has no version here yet: a namespace created upstream and never
   * pushed. Subscribing to it is accepted, as the upstream accepts it; its
   * first event goes out when its first version arrives.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   */
  expect(tenant: string, namespace: string): void {
    const id = key(tenant, namespace);
    if (!this.#slots.has(id)) this.#awaiting.add(id);
  }

  /**
   * Whether a namespace is held, or known upstream without a version yet.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns true or false
   */
  knows(tenant: string, namespace: string): boolean {
    const id = key(tenant, namespace);
    return this.#slots.has(id) || this.#awaiting.has(id);
  }

  /** The namespaces known upstream without a version yet, sorted. */
  awaiting(): { tenant: string; namespace: string }[] {
    return [...this.#awaiting].sort().map((id) => {
      const i = id.indexOf("/");
      return { tenant: id.slice(0, i), namespace: id.slice(i + 1) };
    });
  }

  /** Whether any namespace of a tenant is held. */
  hasTenant(tenant: string): boolean {
    for (const s of this.#slots.values()) if (s.held.tenant === tenant) return true;
    return false;
  }

  /**
   * Puts a verified state in: it becomes the current one unless it is the
   * one held already (same version and hash). Listeners hear of a change.
   *
   * @param tenant tenant slug
   * @param state the verified state (its `namespace` is the slug)
   * @param source where it came from
   * @param updatedAt when it was verified (default now)
   * @returns whether it changed what is served
   */
  put(
    tenant: string,
    state: ClosureState,
    source: Held["source"],
    updatedAt: Date = new Date(),
  ): boolean {
    const id = key(tenant, state.namespace);
    const slot = this.#slots.get(id);
    const previous = slot?.held.state ?? null;
    if (previous !== null && previous.version === state.version && previous.hash === state.hash) {
      slot!.held = { ...slot!.held, source, updatedAt };
      return false;
    }
    const held: Held = { tenant, namespace: state.namespace, state, source, updatedAt };
    this.#awaiting.delete(id);
    if (slot === undefined) this.#slots.set(id, { held, history: [state] });
    else {
      slot.held = held;
      // a lower version (the upstream's store was restored) starts the history again
      slot.history = previous !== null && state.version < previous.version
        ? [state]
        : [...slot.history.filter((s) => s.version !== state.version), state].slice(
          -KEPT_VERSIONS,
        );
    }
    const change: HeldChange = { held, previous };
    for (const l of [...this.#listeners]) l(change);
    return true;
  }

  /**
   * Forgets a namespace (deleted upstream).
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns whether it was held
   */
  remove(tenant: string, namespace: string): boolean {
    const awaited = this.#awaiting.delete(key(tenant, namespace));
    return this.#slots.delete(key(tenant, namespace)) || awaited;
  }

  /**
   * Calls `listener` after each change of a held namespace.
   *
   * @param listener the callback
   * @returns a function that removes it
   */
  onChange(listener: (change: HeldChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Whether an environment of a held namespace allows public evaluation
   * (`public_evaluate` in the relay's copy of its `namespace.toml`).
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @param environment environment key
   * @returns true or false (false for what is not held)
   */
  isPublic(tenant: string, namespace: string, environment: string): boolean {
    const envs = this.get(tenant, namespace)?.state.manifest.namespace.environments;
    return envs !== undefined && Object.hasOwn(envs, environment) &&
      envs[environment]!.public_evaluate === true;
  }
}

function key(tenant: string, namespace: string): string {
  return `${tenant}/${namespace}`;
}
