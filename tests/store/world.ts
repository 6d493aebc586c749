/**
 * Test helper: the store-level world. A `:memory:` KV holding tenants and
 * namespaces made through lib/store, a way to commit a namespace's
 * manifest environments, and {@linkcode worldTest}, which runs each test on
 * a fresh world and closes its KV after. The auth-level world
 * (tests/auth/world.ts) builds on this one.
 *
 * @module
 */
import { createNamespace } from "../../lib/store/namespaces.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { commitVersion } from "./commit.ts";

/** The tenants and namespaces a world starts with. */
export interface Layout {
  /** Tenants, in creation order (default `["acme"]`). */
  tenants?: string[];
  /**
   * Namespaces, in creation order: `tenant/slug`, or a bare slug in the
   * first tenant (default `["web"]`).
   */
  namespaces?: string[];
  /** `created_by` of every tenant and namespace (default `"test"`). */
  createdBy?: string;
}

/** A store with the tenants and namespaces of a {@linkcode Layout}. */
export interface StoreWorld {
  /** The `:memory:` store; {@linkcode worldTest} closes it. */
  kv: Deno.Kv;
}

/** A namespace's environments, as a manifest version records them. */
export type Environments = Parameters<typeof commitVersion>[1]["environments"];

/**
 * Creates the tenants, then the namespaces, of `layout` in `kv`.
 *
 * @param kv the store
 * @param layout what to create
 */
export async function seedStore(kv: Deno.Kv, layout: Layout = {}): Promise<void> {
  const tenants = layout.tenants ?? ["acme"];
  const createdBy = layout.createdBy ?? "test";
  for (const slug of tenants) await createTenant(kv, { slug, created_by: createdBy });
  for (const name of layout.namespaces ?? ["web"]) {
    const [tenant, slug] = name.includes("/") ? name.split("/") : [tenants[0], name];
    await createNamespace(kv, { tenant: tenant!, slug: slug!, created_by: createdBy });
  }
}

/**
 * Opens a `:memory:` store and seeds it with `layout`.
 *
 * @param layout the tenants and namespaces (default: tenant acme, namespace web)
 * @returns the world
 */
export async function storeWorld(layout: Layout = {}): Promise<StoreWorld> {
  const kv = await Deno.openKv(":memory:");
  await seedStore(kv, layout);
  return { kv };
}

/**
 * Commits a manifest version of `tenant/namespace` whose only point is its
 * environments (which decide `public_evaluate` and which environments a
 * namespace-client token may name). The one file's bytes are the
 * environments as JSON, so different environments make a new version and
 * the same ones leave the head unchanged.
 *
 * @param kv the store
 * @param environments environment slug → settings
 * @param namespace the namespace (default `web`)
 * @param tenant the tenant (default `acme`)
 * @returns the commit result
 */
export function commitEnvironments(
  kv: Deno.Kv,
  environments: Environments,
  namespace = "web",
  tenant = "acme",
): ReturnType<typeof commitVersion> {
  return commitVersion(kv, {
    tenant,
    namespace,
    files: new Map([["namespace.toml", new TextEncoder().encode(JSON.stringify(environments))]]),
    environments,
    created_by: "test",
  });
}

/**
 * A `Deno.test` factory: each test built by the returned function gets a
 * fresh world from `build` and the world's KV is closed after it, passed or
 * failed.
 *
 * @param build makes one world (any layer's, extended as a test file needs)
 * @returns `wtest(name, fn)`
 */
export function worldTest<W extends { kv: Deno.Kv }>(
  build: () => Promise<W>,
): (name: string, fn: (w: W) => Promise<void>) => void {
  return (name, fn) => {
    Deno.test(name, async () => {
      const w = await build();
      try {
        await fn(w);
      } finally {
        w.kv.close();
      }
    });
  };
}

/**
 * Runs `fn` on a fresh `:memory:` KV and closes it afterwards.
 *
 * @example
 * ```ts ignore
 * await withKv(async (kv) => { await kv.set(["a"], 1); });
 * ```
 */
export async function withKv(fn: (kv: Deno.Kv) => Promise<void>): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(kv);
  } finally {
    kv.close();
  }
}
