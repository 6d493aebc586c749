/**
 * What every service function of lib/services/ is given: the store, the
 * server's per-process runtime (told what each write changed), a clock,
 * and the request's inputs, which may be read only once the caller is
 * authorised ({@linkcode Deferred}), so an unauthorised request is refused
 * before its body is read or checked.
 *
 * @module
 */
import type { Runtime } from "../runtime/runtime.ts";

/** Dependencies of the service functions. */
export interface ServiceDeps {
  /** The store. */
  kv: Deno.Kv;
  /** The per-process state whose caches each write invalidates. */
  runtime: Runtime;
  /** Clock; defaults to the system time. */
  now?: () => Date;
}

/**
 * An input given at once, or a function reading it (a request body) that a
 * service calls only after authorising the caller and finding the target.
 */
export type Deferred<T> = T | (() => T | Promise<T>);

/**
 * The value of a {@linkcode Deferred} input, reading it when it is a function.
 *
 * @param input the value, or the function reading it
 * @returns the value
 *
 * @example
 * ```ts
 * import { resolveInput } from "./deps.ts";
 * const now = await resolveInput({ slug: "web" });
 * const later = await resolveInput(() => Promise.resolve({ slug: "web" }));
 * if (now.slug !== "web" || later.slug !== "web") throw new Error();
 * ```
 */
export async function resolveInput<T>(input: Deferred<T>): Promise<T> {
  return typeof input === "function" ? await (input as () => T | Promise<T>)() : input;
}

/**
 * The clock of `deps`: its `now`, else the system time.
 *
 * @param deps the service deps
 * @returns a function giving the current time
 *
 * @example
 * ```ts
 * import { clockOf } from "./deps.ts";
 * const fixed = new Date("2026-01-01T00:00:00Z");
 * const kv = await Deno.openKv(":memory:");
 * const deps = { kv, runtime: undefined as never, now: () => fixed };
 * if (clockOf(deps)().getTime() !== fixed.getTime()) throw new Error();
 * kv.close();
 * ```
 */
export function clockOf(deps: ServiceDeps): () => Date {
  return () => deps.now?.() ?? new Date();
}
