/**
 * Test helper: a real installation for end-to-end tests. Creates a temp-dir
 * KV, bootstraps a superadmin with the real `cfgtool admin bootstrap`, starts
 * a real `cfgtool serve` on a free loopback port, and offers a small JSON
 * request helper.
 *
 * @module
 */
import { assertEquals } from "../assert.ts";
import { type ServerProcess, startServer } from "./server_process.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

/** The result of running the CLI once. */
export type { CliResult } from "../cli_process.ts";

/**
 * Runs `cli.ts` as a subprocess (see tests/cli_process.ts).
 *
 * @example
 * ```ts ignore
 * const r = await runCli(["--version"]);
 * ```
 */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  return runCfgtool(args, options);
}

/** A JSON response: status, headers and parsed body (or null). */
export interface ApiResponse {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A running installation. */
export interface Installation {
  /** The temp dir holding the KV file and token key. */
  dir: string;
  /** The KV file path. */
  kvPath: string;
  /** The server process. */
  server: ServerProcess;
  /** Base URL. */
  url: string;
  /** The bootstrap superadmin secret. */
  admin: string;
  /** Sends a request; JSON bodies are encoded, JSON responses decoded. */
  api(
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<ApiResponse>;
  /** Stops the server and removes the temp dir. */
  close(): Promise<void>;
}

/**
 * Bootstraps and starts an installation.
 *
 * @example
 * ```ts ignore
 * const inst = await startInstallation();
 * await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
 * await inst.close();
 * ```
 */
export async function startInstallation(
  options: { args?: string[] } = {},
): Promise<Installation> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-e2e-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
  if (boot.code !== 0) throw new Error(`bootstrap failed: ${boot.stderr}`);
  const admin = boot.stdout.trim().split("\n").at(-1)!;
  const server = await startServer({ kv: kvPath, ...(options.args ? { args: options.args } : {}) });
  const url = server.url;
  return {
    dir,
    kvPath,
    server,
    url,
    admin,
    async api(method, path, token, body, headers = {}) {
      const h = new Headers(headers);
      if (token !== null) h.set("authorization", `Bearer ${token}`);
      let payload: BodyInit | undefined;
      if (body instanceof Uint8Array) {
        payload = body as Uint8Array<ArrayBuffer>;
      } else if (typeof body === "string") {
        payload = body;
      } else if (body !== undefined) {
        payload = JSON.stringify(body);
        if (!h.has("content-type")) h.set("content-type", "application/json");
      }
      const res = await fetch(`${url}${path}`, { method, headers: h, body: payload ?? null });
      const text = await res.text();
      let parsed: unknown = null;
      if (text !== "" && (res.headers.get("content-type") ?? "").includes("json")) {
        parsed = JSON.parse(text);
      } else if (text !== "") {
        parsed = text;
      }
      return { status: res.status, headers: res.headers, body: parsed };
    },
    async close() {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/**
 * Runs `fn` against a fresh installation holding tenant `acme`, its
 * namespace `web` and a `namespace-read` token for it, then closes it.
 *
 * @example
 * ```ts ignore
 * await withReadableNamespace(async (inst, read) => { await inst.api("GET", "/healthz", read); });
 * ```
 */
export async function withReadableNamespace(
  fn: (inst: Installation, read: string) => Promise<void>,
) {
  const inst = await startInstallation();
  try {
    await createAcmeWeb(inst);
    const token = await inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "namespace-read",
      name: "reader",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    assertEquals(token.status, 201, JSON.stringify(token.body));
    await fn(inst, token.body.secret);
  } finally {
    await inst.close();
  }
}

/**
 * Creates tenant `acme` and its namespace `web` as the superadmin.
 *
 * @example
 * ```ts ignore
 * await createAcmeWeb(inst);
 * ```
 */
export async function createAcmeWeb(inst: Installation): Promise<void> {
  assertEquals(
    (await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status,
    201,
  );
  assertEquals(
    (await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" }))
      .status,
    201,
  );
}
