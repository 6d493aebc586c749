/**
 * Test helper: a store handle that counts its `get` calls by the first
 * part of the key (`ns_head`, `ns_admin`, …), so a test can say how many
 * times a service read the head or authorised a person (each
 * authorisation of a namespace admin reads their `ns_admin` entry once).
 *
 * @module
 */

/** A counting view of a store. */
export interface CountingKv {
  /** The handle to give the service: every call goes to the store. */
  kv: Deno.Kv;
  /** How many `get` calls read a key starting with `prefix` since the last reset. */
  reads(prefix: string): number;
  /** Forgets the counts. */
  reset(): void;
}

/**
 * Wraps a store so its `get` calls are counted.
 *
 * @param kv the store
 * @returns the counting handle
 */
export function countingKv(kv: Deno.Kv): CountingKv {
  const counts = new Map<string, number>();
  const handle = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get") {
        return (key: Deno.KvKey, ...rest: unknown[]) => {
          const first = String(key[0]);
          counts.set(first, (counts.get(first) ?? 0) + 1);
          return (value as (...args: unknown[]) => unknown).call(target, key, ...rest);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    kv: handle,
    reads: (prefix) => counts.get(prefix) ?? 0,
    reset: () => counts.clear(),
  };
}
