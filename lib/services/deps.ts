/**
 * What every service function of lib/services/ is given: the store, the
 * token key, the server's per-process runtime (told what each write
 * changed, and whose caches reads go through), a clock, and the request's
 * inputs, which may be read only once the caller is
 * authorised ({@linkcode Deferred}), so an unauthorised request is refused
 * before its body is read or checked.
 *
 * @module
 */
import type { AuthDeps } from "../auth/deps.ts";
import type { Runtime } from "../runtime/runtime.ts";

/**
 * Dependencies of the service functions. The server's `AppDeps` is one, so
 * a route passes its own deps through.
 */
export interface ServiceDeps {
  /** The store. */
  kv: Deno.Kv;
  /** The HMAC key that digests tokens and sessions. */
  key: CryptoKey;
  /** The per-process state whose caches each write invalidates. */
  runtime: Runtime;
  /** Clock; defaults to the system time. */
  now?: () => Date;
}

/**
 * The auth/ dependencies of a service call: the store, the key, the clock,
 * and the runtime's credential cache and model cache (the public gate
 * reads heads from it).
 *
 * @param deps the service deps
 * @returns the auth deps
 *
 * @example
 * ```ts
 * import { authDepsOf } from "./deps.ts";
 * import { Runtime } from "../runtime/runtime.ts";
 * import { randomTokenKey } from "../auth/hmac_key.ts";
 * import { DEFAULT_SETTINGS } from "../settings.ts";
 * const kv = await Deno.openKv(":memory:");
 * const key = await randomTokenKey();
 * const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
 * const auth = authDepsOf({ kv, key, runtime });
 * if (auth.credentials !== runtime.credentials || auth.headOf === undefined) throw new Error();
 * runtime.close();
 * kv.close();
 * ```
 */
export function authDepsOf(deps: ServiceDeps): AuthDeps {
  const { runtime } = deps;
  const base: AuthDeps = {
    kv: deps.kv,
    key: deps.key,
    credentials: runtime.credentials,
    headOf: (t, ns) => runtime.models.head(t, ns),
  };
  return deps.now ? { ...base, now: deps.now } : base;
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
 * const deps = { kv, key: undefined as never, runtime: undefined as never, now: () => fixed };
 * if (clockOf(deps)().getTime() !== fixed.getTime()) throw new Error();
 * kv.close();
 * ```
 */
export function clockOf(deps: ServiceDeps): () => Date {
  return () => deps.now?.() ?? new Date();
}
