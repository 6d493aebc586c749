/**
 * Test helper: the auth-level world, on the store-level one
 * (tests/store/world.ts). A `:memory:` store with a random token key, a
 * bootstrapped superadmin already logged in, and the tenants and
 * namespaces of a layout; `login` authenticates a bearer secret as a
 * request would. Run tests on it with `worldTest` of tests/store/world.ts.
 *
 * @module
 */
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import type { AuthDeps, RequestContext } from "../../lib/auth/deps.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { authenticate, type Principal } from "../../lib/auth/principal.ts";
import { type Layout, seedStore, type StoreWorld } from "../store/world.ts";

/** What an auth world starts with. */
export interface AuthWorldOptions extends Layout {
  /** The clock of `deps` and of the bootstrap (default: the system time). */
  now?: () => Date;
  /** The request id of {@linkcode AuthWorld.ctx} (default `"req-test"`). */
  requestId?: string;
}

/** A store with credentials. */
export interface AuthWorld extends StoreWorld {
  /** The token HMAC key. */
  key: CryptoKey;
  /** `{kv, key}`, and `now` when the options gave a clock. */
  deps: AuthDeps;
  /** The request context of `login` (and of the test's own calls). */
  ctx: RequestContext;
  /** The bootstrapped superadmin token, with its secret. */
  boot: Awaited<ReturnType<typeof bootstrapSuperadmin>>;
  /** The bootstrap token, authenticated. */
  superadmin: Principal;
  /** Authenticates `Bearer <secret>`, from `ip` when given. */
  login(secret: string, ip?: string): Promise<Principal>;
}

/**
 * Opens a `:memory:` store, makes a token key, bootstraps a superadmin,
 * logs it in, then creates the tenants and namespaces of the layout (by
 * default tenant acme with namespace web).
 *
 * @param options layout, clock and request id
 * @returns the world
 */
export async function authWorld(options: AuthWorldOptions = {}): Promise<AuthWorld> {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const { now } = options;
  const deps: AuthDeps = now === undefined ? { kv, key } : { kv, key, now };
  const ctx: RequestContext = { requestId: options.requestId ?? "req-test" };
  const boot = await bootstrapSuperadmin(kv, key, now === undefined ? {} : { now });
  const login = (secret: string, ip?: string) =>
    authenticate(deps, `Bearer ${secret}`, ip === undefined ? ctx : { ...ctx, ip });
  const superadmin = await login(boot.secret);
  await seedStore(kv, options);
  return { kv, key, deps, ctx, boot, superadmin, login };
}
