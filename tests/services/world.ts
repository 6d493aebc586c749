/**
 * Test helper: the service-level world, on the auth-level one
 * (tests/auth/world.ts). A `:memory:` store with a logged-in superadmin,
 * tenants acme and other with namespaces acme/web and other/app, a real
 * {@linkcode Runtime} whose change notifications are recorded, and `as`
 * to issue a token and log in with it. Run tests with {@linkcode serviceTest},
 * which closes the runtime and the store.
 *
 * @module
 */
import type { CreateTokenInput } from "../../lib/auth/issuance.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { createToken } from "../../lib/services/tokens.ts";
import { Runtime } from "../../lib/runtime/runtime.ts";
import type { ServiceDeps } from "../../lib/services/deps.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { type AuthWorld, authWorld } from "../auth/world.ts";

/** A store with credentials and a runtime. */
export interface ServiceWorld extends AuthWorld {
  /** The runtime the services tell. */
  runtime: Runtime;
  /** `{kv, runtime}`, what every service takes. */
  services: ServiceDeps;
  /** Every change the services told the runtime, as `ns:t/n` or `tenant:t`. */
  changes: string[];
  /** How many times the stream guard was asked to re-check. */
  rechecks: () => number;
  /** Issues a token with the superadmin and logs in with it. */
  as(input: CreateTokenInput): Promise<Principal>;
  /** Logs in with a new namespace-read (`r`) or namespace-write (`ci`) token of acme/web. */
  asWeb(type: "namespace-read" | "namespace-write"): Promise<Principal>;
}

async function serviceWorld(): Promise<ServiceWorld> {
  const w = await authWorld({ tenants: ["acme", "other"], namespaces: ["web", "other/app"] });
  // The credential cache polls rarely here: its own re-checks (it sees a revocation on a poll
  // and re-checks the streams) must not count as the services' in `rechecks`.
  const settings = { ...DEFAULT_SETTINGS, credentialPollMs: 3_600_000 };
  const runtime = new Runtime({ kv: w.kv, key: w.key, log: () => {}, settings });
  const changes: string[] = [];
  const namespaceChanged = runtime.namespaceChanged.bind(runtime);
  const tenantChanged = runtime.tenantChanged.bind(runtime);
  runtime.namespaceChanged = (t, n) => {
    changes.push(`ns:${t}/${n}`);
    namespaceChanged(t, n);
  };
  runtime.tenantChanged = (t) => {
    changes.push(`tenant:${t}`);
    tenantChanged(t);
  };
  let rechecked = 0;
  const recheck = runtime.guard.recheck.bind(runtime.guard);
  runtime.guard.recheck = () => {
    rechecked++;
    return recheck();
  };
  const as = async (input: CreateTokenInput) => {
    const made = await createToken(w.deps, w.superadmin, input, w.ctx);
    return await w.login(made.secret);
  };
  return {
    ...w,
    runtime,
    services: { kv: w.kv, key: w.key, runtime },
    changes,
    rechecks: () => rechecked,
    as,
    asWeb: (type) =>
      as({
        type,
        name: type === "namespace-read" ? "r" : "ci",
        tenant_slug: "acme",
        namespace_slug: "web",
      }),
  };
}

/**
 * A `Deno.test` on a fresh {@linkcode ServiceWorld}; the runtime and the
 * store are closed after it, passed or failed.
 *
 * @param name the test's name
 * @param fn the test
 */
export function serviceTest(name: string, fn: (w: ServiceWorld) => Promise<void>): void {
  Deno.test(name, async () => {
    const w = await serviceWorld();
    try {
      await fn(w);
    } finally {
      w.runtime.close();
      w.kv.close();
    }
  });
}
