/**
 * Shared setup of the evaluation end-to-end tests (tests/e2e/evaluate_test.ts,
 * ofrep_test.ts, ofrep_web_test.ts): a real installation with tenants `acme`
 * and `other`, namespaces `acme/web`, `acme/api` and `other/web`, a manifest
 * with typed flags, segments and a rollout, and tokens of every kind.
 *
 * @module
 */
import { assert, assertEquals } from "../assert.ts";
import { type ApiResponse, type Installation, startInstallation } from "./installation.ts";

/** Origin the browser tokens allow. */
export const ALLOWED_ORIGIN = "https://app.example.com";
/** An Origin no token allows. */
export const OTHER_ORIGIN = "https://evil.example.net";

/** `namespace.toml` with `staging` public and `production` private, or both as given. */
export function namespaceToml(stagingPublic = true): string {
  return `schema_version = 1
[namespace]
description = "e2e evaluation"
[namespace.environments.production]
public_evaluate = false
[namespace.environments.staging]
public_evaluate = ${stagingPublic}
`;
}

/** The flags of the test manifest (path → TOML). */
export const FLAGS: Record<string, string> = {
  "flags/new-checkout.toml": `schema_version = 1
description = "New checkout"
type = "boolean"
default = "off"
[variations]
on = true
off = false
[[rule]]
segment = "beta"
variation = "on"
[environments.production]
enabled = false
`,
  "flags/theme.toml": `schema_version = 1
description = "Theme"
type = "string"
default = "light"
[variations]
light = "light"
dark = "dark"
[[rule]]
segment = "staff"
variation = "dark"
`,
  "flags/cart-limit.toml": `schema_version = 1
description = "Cart limit"
type = "number"
default = "small"
[variations]
small = 10
large = 50
[[rule]]
rollout = [ { variation = "small", weight = 50 }, { variation = "large", weight = 50 } ]
`,
  "flags/banner.toml": `schema_version = 1
description = "Banner"
type = "object"
default = "none"
[variations]
none = { show = false }
sale = { show = true, text = "Sale" }
`,
  "segments/beta.toml": `schema_version = 1
description = "Beta testers and staff"
match = "any"
[[predicate]]
attribute = "user.beta"
op = "eq"
value = true
[[predicate]]
attribute = "segment.staff"
op = "eq"
value = true
`,
  "segments/staff.toml": `schema_version = 1
description = "Staff"
[[predicate]]
attribute = "user.email"
op = "ends_with"
value = "@example.com"
`,
};

/** The JSON upload body of the test manifest, with overrides. */
export function manifestFiles(
  overrides: Record<string, string | null> = {},
  stagingPublic = true,
): { files: Record<string, string> } {
  const files: Record<string, string> = {
    "namespace.toml": namespaceToml(stagingPublic),
    ...FLAGS,
  };
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) delete files[k];
    else files[k] = v;
  }
  return { files };
}

/** Tokens of the fixture (secrets). */
export interface Tokens {
  /** namespace-client of acme/web/staging, allowing {@linkcode ALLOWED_ORIGIN}. */
  client: string;
  /** namespace-client of acme/web/staging without allowed origins. */
  clientNoOrigins: string;
  /** namespace-client of acme/web/production (not public). */
  clientProduction: string;
  /** namespace-client of acme/api/staging. */
  clientOtherNamespace: string;
  /** namespace-client of other/web/staging. */
  clientOtherTenant: string;
  /** namespace-read of acme/web. */
  read: string;
  /** namespace-read of acme/api. */
  readOtherNamespace: string;
  /** namespace-write of acme/web. */
  write: string;
}

/** A fixture installation. */
export interface Fixture {
  inst: Installation;
  tokens: Tokens;
  /** Token ids by the same names. */
  ids: Record<keyof Tokens, string>;
  /** PUT the manifest of acme/web (asserting 200/201); returns the body. */
  push(body: { files: Record<string, string> }, ns?: string): Promise<ApiResponse>;
}

async function mint(inst: Installation, body: Record<string, unknown>) {
  const res = await inst.api("POST", "/api/v1/tokens", inst.admin, body);
  assertEquals(res.status, 201, `mint ${JSON.stringify(body)} → ${JSON.stringify(res.body)}`);
  return { secret: res.body.secret as string, id: res.body.token.id as string };
}

/**
 * Starts an installation and sets up the fixture.
 *
 * @param args extra `cfgtool serve` arguments
 */
export async function startFixture(args: string[] = []): Promise<Fixture> {
  const inst = await startInstallation({ args });
  try {
    const ok = (res: ApiResponse, what: string) =>
      assert(
        res.status === 201 || res.status === 200,
        `${what} → ${res.status} ${JSON.stringify(res.body)}`,
      );
    for (const t of ["acme", "other"]) {
      ok(await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: t }), `tenant ${t}`);
    }
    for (const [t, ns] of [["acme", "web"], ["acme", "api"], ["other", "web"]] as const) {
      ok(
        await inst.api("POST", `/api/v1/tenants/${t}/namespaces`, inst.admin, { slug: ns }),
        `namespace ${t}/${ns}`,
      );
      ok(
        await inst.api(
          "PUT",
          `/api/v1/tenants/${t}/namespaces/${ns}/manifest`,
          inst.admin,
          manifestFiles(),
        ),
        `manifest ${t}/${ns}`,
      );
    }
    const client = (t: string, ns: string, env: string, origins: string[], name: string) =>
      mint(inst, {
        type: "namespace-client",
        name,
        tenant_slug: t,
        namespace_slug: ns,
        environment_slug: env,
        allowed_origins: origins,
      });
    const made = {
      client: await client("acme", "web", "staging", [ALLOWED_ORIGIN], "browser"),
      clientNoOrigins: await client("acme", "web", "staging", [], "no-origins"),
      clientProduction: await client("acme", "web", "production", [ALLOWED_ORIGIN], "prod"),
      clientOtherNamespace: await client("acme", "api", "staging", [ALLOWED_ORIGIN], "api"),
      clientOtherTenant: await client("other", "web", "staging", [ALLOWED_ORIGIN], "other"),
      read: await mint(inst, {
        type: "namespace-read",
        name: "reader",
        tenant_slug: "acme",
        namespace_slug: "web",
      }),
      readOtherNamespace: await mint(inst, {
        type: "namespace-read",
        name: "reader-api",
        tenant_slug: "acme",
        namespace_slug: "api",
      }),
      write: await mint(inst, {
        type: "namespace-write",
        name: "writer",
        tenant_slug: "acme",
        namespace_slug: "web",
      }),
    };
    const tokens = Object.fromEntries(
      Object.entries(made).map(([k, v]) => [k, v.secret]),
    ) as unknown as Tokens;
    const ids = Object.fromEntries(Object.entries(made).map(([k, v]) => [k, v.id])) as Record<
      keyof Tokens,
      string
    >;
    return {
      inst,
      tokens,
      ids,
      async push(body, ns = "web") {
        const res = await inst.api(
          "PUT",
          `/api/v1/tenants/acme/namespaces/${ns}/manifest`,
          inst.admin,
          body,
        );
        ok(res, `push acme/${ns}`);
        return res;
      },
    };
  } catch (err) {
    await inst.close();
    throw err;
  }
}

/** Path of the native evaluation endpoints of a triple. */
export function evalPath(t: string, ns: string, env: string, all = false): string {
  return `/api/v1/tenants/${t}/namespaces/${ns}/environments/${env}/evaluate${all ? "/all" : ""}`;
}
