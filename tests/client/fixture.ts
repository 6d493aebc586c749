/**
 * Shared helpers of the FlagClient tests (no tests of its own; named
 * `_test.ts` to sit with them): a real installation with tenant `acme`, its
 * namespaces and a tenant-admin token, manifest builders, and polling.
 *
 * @module
 */
import { type Installation, startInstallation } from "../e2e/installation.ts";

/** `namespace.toml` with two environments. */
export const NS_TOML = `schema_version = 1
[namespace]
description = "Web"
[namespace.environments.production]
[namespace.environments.staging]
`;

/** A boolean flag, optionally served `on` to a segment. */
export function boolFlag(
  opts: { segment?: string; defaultOn?: boolean; note?: string } = {},
): string {
  let text = `schema_version = 1
description = "${opts.note ?? "a flag"}"
type = "boolean"
default = "${opts.defaultOn ? "on" : "off"}"
[variations]
on = true
off = false
`;
  if (opts.segment) text += `[[rule]]\nsegment = "${opts.segment}"\nvariation = "on"\n`;
  return text;
}

/** A string flag with a fixed default. */
export function stringFlag(value: string): string {
  return `schema_version = 1
type = "string"
default = "v"
[variations]
v = "${value}"
`;
}

/** A segment matching `plan == <plan>`. */
export function planSegment(plan: string): string {
  return `schema_version = 1
description = "plan ${plan}"
[[predicate]]
attribute = "plan"
op = "eq"
value = "${plan}"
`;
}

/** A running installation with tenant acme, namespaces and a tenant-admin token. */
export interface World {
  inst: Installation;
  /** Bearer token with manifest.read on every namespace of acme. */
  token: string;
  /** Replaces the manifest of a namespace; returns the new version. */
  push(files: Record<string, string>, ns?: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts a server (real process), creates tenant acme with `namespaces`,
 * and mints a tenant-admin token.
 */
export async function startWorld(
  namespaces: string[] = ["web"],
  args: string[] = ["--head-poll-ms", "20"],
): Promise<World> {
  const inst = await startInstallation({ args });
  const ok = async (p: Promise<{ status: number; body: unknown }>, what: string) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  await ok(inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" }), "tenant");
  for (const ns of namespaces) {
    await ok(
      inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: ns }),
      "namespace",
    );
  }
  const minted = await ok(
    inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "tenant-admin",
      name: "client-tests",
      tenant_slug: "acme",
    }),
    "token",
  );
  const token = (minted.body as { secret: string }).secret;
  return {
    inst,
    token,
    async push(files, ns = "web") {
      const r = await ok(
        inst.api("PUT", `/api/v1/tenants/acme/namespaces/${ns}/manifest`, inst.admin, { files }),
        "push",
      );
      return (r.body as { version: number }).version;
    },
    close: () => inst.close(),
  };
}

/** Polls `cond` every 10 ms until it holds, or throws after `timeoutMs`. */
export async function waitFor(
  cond: () => boolean,
  what: string,
  timeoutMs = 8000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
