/**
 * Shared helpers of the end-to-end credential tests (tests/e2e/credentials_*_test.ts
 * and tests/e2e/permissions_test.ts): users and sessions through the real
 * admin CLI, tenants, namespaces and manifests through the real API, token
 * minting, and assertions on the JSON error envelope of docs/api.md.
 *
 * @module
 */
import { assert, assertEquals } from "../assert.ts";
import { type ApiResponse, type Installation, runCli } from "./installation.ts";

/** The last non-empty line of a CLI's stdout (where ids and secrets are printed). */
function lastLine(stdout: string): string {
  return stdout.trim().split("\n").at(-1)!.trim();
}

/** A human user with a session token. */
export interface Human {
  id: string;
  email: string;
  /** The session token (`ses_…`). */
  session: string;
}

/**
 * Creates a user with `cfgtool admin user create` and a session for it with
 * `cfgtool admin session create`, both on the installation's KV file.
 */
export async function createHuman(inst: Installation, email: string): Promise<Human> {
  const u = await runCli(["admin", "user", "create", "--kv", inst.kvPath, "--email", email]);
  assertEquals(u.code, 0, `user create failed: ${u.stderr}`);
  const id = lastLine(u.stdout);
  assert(/^usr_/.test(id), `unexpected user id ${id}`);
  const s = await runCli(["admin", "session", "create", "--kv", inst.kvPath, "--user", id]);
  assertEquals(s.code, 0, `session create failed: ${s.stderr}`);
  const session = lastLine(s.stdout);
  assert(/^ses_/.test(session), `unexpected session token ${session}`);
  return { id, email, session };
}

/** Creates several humans in parallel, keyed like the input. */
export async function createHumans<K extends string>(
  inst: Installation,
  emails: Record<K, string>,
): Promise<Record<K, Human>> {
  const entries = Object.entries(emails) as [K, string][];
  const made = await Promise.all(entries.map(([, email]) => createHuman(inst, email)));
  return Object.fromEntries(entries.map(([k], i) => [k, made[i]!])) as Record<K, Human>;
}

/**
 * Asserts a JSON error envelope: status, `code`, a message, and a
 * `request_id` equal to the `X-Request-Id` header.
 */
export function assertError(res: ApiResponse, status: number, code: string, what = ""): void {
  const seen = `${what} → ${res.status} ${JSON.stringify(res.body)}`;
  assertEquals(res.status, status, seen);
  assert(res.body !== null && typeof res.body === "object", seen);
  assertEquals(res.body.code, code, seen);
  assertEquals(typeof res.body.message, "string", seen);
  assert(res.headers.get("x-request-id"), `${seen}: no X-Request-Id`);
  assertEquals(res.body.request_id, res.headers.get("x-request-id"), seen);
  if (status === 401) assertEquals(res.headers.get("www-authenticate"), "Bearer", seen);
}

/** Asserts a success status, showing the body when it is not. */
export function assertStatus(res: ApiResponse, status: number, what = ""): void {
  assertEquals(res.status, status, `${what} → ${res.status} ${JSON.stringify(res.body)}`);
}

/** Token metadata as the API returns it. */
// deno-lint-ignore no-explicit-any
export type TokenJson = Record<string, any>;

/** A created token: its metadata and its one-time secret. */
export interface Minted {
  token: TokenJson;
  secret: string;
}

let names = 0;

/** A fresh token name (names are unique within a scope). */
export function freshName(hint = "tok"): string {
  names++;
  return `${hint}-${names}`;
}

/** `POST /api/v1/tokens` by `by`, without asserting the outcome. */
export function requestToken(
  inst: Installation,
  by: string,
  body: Record<string, unknown>,
): Promise<ApiResponse> {
  return inst.api("POST", "/api/v1/tokens", by, { name: freshName(String(body.type)), ...body });
}

/** `POST /api/v1/tokens` by `by`, asserting 201. */
export async function mint(
  inst: Installation,
  by: string,
  body: Record<string, unknown>,
): Promise<Minted> {
  const res = await requestToken(inst, by, body);
  assertStatus(res, 201, `mint ${JSON.stringify(body)}`);
  return { token: res.body.token, secret: res.body.secret };
}

/** The bodies of the five token types for a binding. */
export function bodies(tenant: string, namespace: string, environment: string) {
  return {
    read: { type: "namespace-read", tenant_slug: tenant, namespace_slug: namespace },
    write: { type: "namespace-write", tenant_slug: tenant, namespace_slug: namespace },
    client: {
      type: "namespace-client",
      tenant_slug: tenant,
      namespace_slug: namespace,
      environment_slug: environment,
    },
    tenant: { type: "tenant-admin", tenant_slug: tenant },
    superadmin: { type: "superadmin" },
  } as const;
}

const FLAG = `schema_version = 1
description = "New checkout flow"
type = "boolean"
default = "off"

[variations]
on = true
off = false
`;

/** A manifest (JSON upload body) declaring the environments with their `public_evaluate`. */
export function manifest(environments: Record<string, boolean>): { files: Record<string, string> } {
  let ns = `schema_version = 1\n\n[namespace]\ndescription = "e2e"\n`;
  for (const [env, pub] of Object.entries(environments)) {
    ns += `\n[namespace.environments.${env}]\npublic_evaluate = ${pub}\n`;
  }
  return { files: { "namespace.toml": ns, "flags/new-checkout.toml": FLAG } };
}

/** Pushes a manifest version declaring the environments (asserting 200/201). */
export async function pushManifest(
  inst: Installation,
  by: string,
  tenant: string,
  namespace: string,
  environments: Record<string, boolean>,
): Promise<void> {
  const res = await inst.api(
    "PUT",
    `/api/v1/tenants/${tenant}/namespaces/${namespace}/manifest`,
    by,
    manifest(environments),
  );
  assert(
    res.status === 201 || res.status === 200,
    `push → ${res.status} ${JSON.stringify(res.body)}`,
  );
}

/** Creates a tenant (superadmin). */
export async function createTenant(inst: Installation, slug: string): Promise<void> {
  assertStatus(
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug }),
    201,
    `tenant ${slug}`,
  );
}

/** Creates a namespace (by default as the superadmin). */
export async function createNamespace(
  inst: Installation,
  tenant: string,
  slug: string,
  by: string = inst.admin,
): Promise<void> {
  assertStatus(
    await inst.api("POST", `/api/v1/tenants/${tenant}/namespaces`, by, { slug }),
    201,
    `namespace ${tenant}/${slug}`,
  );
}

/** Adds a tenant admin (by default as the superadmin). */
export async function addTenantAdmin(
  inst: Installation,
  tenant: string,
  userId: string,
  by: string = inst.admin,
): Promise<void> {
  assertStatus(
    await inst.api("POST", `/api/v1/tenants/${tenant}/admins`, by, { user_id: userId }),
    201,
    `tenant admin ${tenant} ${userId}`,
  );
}

/** Adds a namespace admin (by default as the superadmin). */
export async function addNamespaceAdmin(
  inst: Installation,
  tenant: string,
  namespace: string,
  userId: string,
  by: string = inst.admin,
): Promise<void> {
  assertStatus(
    await inst.api("POST", `/api/v1/tenants/${tenant}/namespaces/${namespace}/admins`, by, {
      user_id: userId,
    }),
    201,
    `namespace admin ${tenant}/${namespace} ${userId}`,
  );
}

/** GET one token's metadata as the superadmin (asserting 200). */
export async function superGet(inst: Installation, id: string): Promise<TokenJson> {
  const res = await inst.api("GET", `/api/v1/tokens/${id}`, inst.admin);
  assertStatus(res, 200, `GET token ${id}`);
  return res.body.token;
}

/** An endpoint any non-client principal of the tenant may call: whether `secret` still works. */
export async function authStatus(inst: Installation, secret: string, id: string): Promise<number> {
  if (secret.startsWith("svc_client_")) {
    // A client may only evaluate its bound triple: probe with that.
    const rec = await inst.api("GET", `/api/v1/tokens/${id}`, inst.admin);
    const t = rec.body.token;
    const res = await inst.api(
      "POST",
      `/api/v1/tenants/${t.tenant_slug}/namespaces/${t.namespace_slug}` +
        `/environments/${t.environment_slug}/evaluate/all`,
      secret,
      { context: {} },
    );
    return res.status;
  }
  // Every other token may read its own metadata (self), so this probes authentication alone.
  const res = await inst.api("GET", `/api/v1/tokens/${id}`, secret);
  return res.status;
}

/** Reads every audit entry visible to `by` (following `next`), newest first. */
// deno-lint-ignore no-explicit-any
export async function allAudit(inst: Installation, by: string, query = ""): Promise<any[]> {
  // deno-lint-ignore no-explicit-any
  const out: any[] = [];
  let after: string | null = null;
  do {
    const q = new URLSearchParams(query);
    q.set("limit", "500");
    if (after !== null) q.set("after", after);
    const res = await inst.api("GET", `/api/v1/audit?${q}`, by);
    assertStatus(res, 200, `GET /audit?${q}`);
    out.push(...res.body.entries);
    after = res.body.next;
  } while (after !== null);
  return out;
}

/** Milliseconds to wait. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
