/**
 * What every tool shares: the service client (the credential of the person
 * or token that started `cfgtool mcp`), the tenant and namespace a call
 * names or the defaults the server was started with, the input schemas of
 * those names, and a namespace's manifest read over the API and validated
 * into the flag model.
 *
 * @module
 */
import { z } from "zod";
import type { ServiceClient } from "../client/api.ts";
import { InvalidRequestError, NotFoundError } from "../errors.ts";
import { manifestOfFiles } from "../flags/impact.ts";
import { type Flag, KEY_RE, type Manifest } from "../flags/model.ts";

/** What the tools run with. */
export interface ToolContext {
  /** The service, with the caller's credential. */
  client: ServiceClient;
  /** The tenant and namespace a call may leave out (`cfgtool mcp --tenant --namespace`). */
  defaults: { tenant?: string | undefined; namespace?: string | undefined };
}

/** A slug (tenant, namespace, environment, flag or segment key). */
export const slug: z.ZodString = z.string().regex(
  KEY_RE,
  "must be a slug: lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters",
);

/** The `tenant` and `namespace` fields of a tool that works on one namespace. */
export const namespaceShape = {
  tenant: slug.optional().describe("tenant slug (may be left out when the server has a default)"),
  namespace: slug.optional().describe(
    "namespace slug (may be left out when the server has a default)",
  ),
};

/** A namespace named by a call. */
export interface Scope {
  tenant: string;
  namespace: string;
}

/**
 * The tenant a call names, else the default; a clear refusal when neither.
 *
 * @param ctx the tool context
 * @param tenant the call's `tenant`
 * @returns the tenant slug
 *
 * @example
 * ```ts
 * import { tenantOf } from "./scope.ts";
 * import { ServiceClient } from "../client/api.ts";
 * const client = new ServiceClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * if (tenantOf({ client, defaults: { tenant: "acme" } }, undefined) !== "acme") throw new Error();
 * ```
 */
export function tenantOf(ctx: ToolContext, tenant: string | undefined): string {
  const t = tenant ?? ctx.defaults.tenant;
  if (t === undefined) {
    throw new InvalidRequestError(
      "tenant is required: name it (list_tenants shows those you may read), or start " +
        "`cfgtool mcp` with --tenant",
    );
  }
  return t;
}

/**
 * The namespace a call names, else the defaults; a clear refusal when neither.
 *
 * @param ctx the tool context
 * @param args the call's `tenant` and `namespace`
 * @returns the tenant and namespace
 *
 * @example
 * ```ts
 * import { scopeOf } from "./scope.ts";
 * import { ServiceClient } from "../client/api.ts";
 * const client = new ServiceClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * const s = scopeOf({ client, defaults: { tenant: "acme" } }, { namespace: "web" });
 * if (s.tenant !== "acme" || s.namespace !== "web") throw new Error();
 * ```
 */
export function scopeOf(
  ctx: ToolContext,
  args: { tenant?: string | undefined; namespace?: string | undefined },
): Scope {
  const tenant = tenantOf(ctx, args.tenant);
  const namespace = args.namespace ?? ctx.defaults.namespace;
  if (namespace === undefined) {
    throw new InvalidRequestError(
      "namespace is required: name it (list_namespaces shows them), or start `cfgtool mcp` " +
        "with --namespace",
    );
  }
  return { tenant, namespace };
}

/** A manifest version as read from the service. */
export interface LoadedManifest {
  /** The version number. */
  version: number;
  /** Path → text. */
  files: Record<string, string>;
  /** The validated model. */
  manifest: Manifest;
}

/**
 * Reads a version of a namespace's manifest (the head when `version` is
 * absent) and validates it as stored versions are loaded.
 *
 * @param client the service client
 * @param scope the namespace
 * @param version the version, or undefined for the head
 * @returns the version, its files and its model
 *
 * @example
 * ```ts ignore
 * const { version, manifest } = await loadManifest(client, { tenant: "acme", namespace: "web" });
 * ```
 */
export async function loadManifest(
  client: ServiceClient,
  scope: Scope,
  version?: number,
): Promise<LoadedManifest> {
  const got = await client.getManifest(
    scope.tenant,
    scope.namespace,
    version === undefined ? {} : { version },
  );
  return {
    version: got.version,
    files: got.files,
    manifest: manifestOfFiles(got.files, { stored: true }),
  };
}

/**
 * A flag of a manifest, or a not-found error that lists the flags there are.
 *
 * @param loaded the manifest
 * @param scope its namespace (for the message)
 * @param key the flag key
 * @returns the flag
 *
 * @example
 * ```ts
 * import { flagOf } from "./scope.ts";
 * import { emptyManifest } from "../flags/model.ts";
 * let code = "";
 * try {
 *   flagOf({ version: 0, files: {}, manifest: emptyManifest() }, { tenant: "a", namespace: "b" }, "x");
 * } catch (e) {
 *   code = (e as { code: string }).code;
 * }
 * if (code !== "flag_not_found") throw new Error(code);
 * ```
 */
export function flagOf(loaded: LoadedManifest, scope: Scope, key: string): Flag {
  if (Object.hasOwn(loaded.manifest.flags, key)) return loaded.manifest.flags[key]!;
  const known = Object.keys(loaded.manifest.flags);
  throw new NotFoundError(
    "flag_not_found",
    `No flag ${key} in ${scope.tenant}/${scope.namespace} version ${loaded.version} (${
      known.length === 0 ? "it has no flags" : `its flags: ${known.slice(0, 50).join(", ")}`
    })`,
  );
}

/**
 * Checks that an environment is declared by the manifest.
 *
 * @param loaded the manifest
 * @param scope its namespace (for the message)
 * @param environment the environment key
 *
 * @example
 * ```ts
 * import { checkEnvironment } from "./scope.ts";
 * import { emptyManifest } from "../flags/model.ts";
 * let code = "";
 * try {
 *   checkEnvironment({ version: 0, files: {}, manifest: emptyManifest() }, { tenant: "a", namespace: "b" }, "qa");
 * } catch (e) {
 *   code = (e as { code: string }).code;
 * }
 * if (code !== "environment_not_found") throw new Error(code);
 * ```
 */
export function checkEnvironment(loaded: LoadedManifest, scope: Scope, environment: string): void {
  const envs = Object.keys(loaded.manifest.namespace.environments);
  if (envs.includes(environment)) return;
  throw new NotFoundError(
    "environment_not_found",
    `Namespace ${scope.tenant}/${scope.namespace} has no environment ${environment} in version ${loaded.version} (${
      envs.length === 0 ? "it declares none" : `its environments: ${envs.join(", ")}`
    })`,
  );
}
