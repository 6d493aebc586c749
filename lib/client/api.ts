/**
 * A small typed HTTP client for the control plane of a cfgtool service
 * (`/api/v1`, DESIGN.md §6 and spec/credentials.md): tenants, namespaces and
 * their admins, manifests, versions, rollback, service tokens and audit.
 * Every request carries `Authorization: Bearer <token>`. A non-2xx answer
 * becomes a {@linkcode CfgtoolError} with the envelope's `code`, status and
 * `details` (the typed subclasses of lib/errors.ts where one fits; an
 * `invalid_manifest` answer becomes a {@linkcode ProblemsError}); a server
 * that cannot be reached becomes code `unreachable`.
 *
 * Response bodies are read tolerantly: a single resource may come bare or
 * wrapped (`{tenant: {...}}`), a list as an array, `{items, next}` or
 * `{<plural>: [...], next}`.
 *
 * @module
 */
import {
  CfgtoolError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  PreconditionFailedError,
  type Problem,
  ProblemsError,
  RateLimitError,
  UnauthorizedError,
  UsageError,
} from "../errors.ts";
import type { PublicToken, TokenStatus, TokenType } from "../store/tokens.ts";

/** Options of {@linkcode ServiceClient}. */
export interface ServiceClientOptions {
  /** Base URL of the service (`https://flags.example.com`); `/api/v1` is added. */
  server: string;
  /** Bearer credential: a service token or a session token. */
  token: string;
  /** Per-request timeout in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** One page of a list. */
export interface Page<T> {
  items: T[];
  /** Cursor for the next page (pass as `after`), or null at the end. */
  next: string | null;
}

/** A tenant as the service shows it. */
export interface TenantInfo {
  slug: string;
  description?: string | null;
  created_at?: string;
  [field: string]: unknown;
}

/** A namespace as the service shows it. */
export interface NamespaceInfo {
  slug: string;
  tenant_slug?: string;
  description?: string | null;
  created_at?: string;
  [field: string]: unknown;
}

/** Metadata of one manifest version. */
export interface VersionInfo {
  version: number;
  closure_hash: string;
  created_at?: string;
  created_by?: string;
  message?: string | null;
  file_count?: number;
  [field: string]: unknown;
}

/** Token metadata (never the secret). */
export type TokenInfo =
  & Pick<PublicToken, "id" | "type" | "name" | "prefix" | "status">
  & Partial<
    PublicToken
  >;

/** A token just created or rotated, with its one-time secret. */
export interface IssuedToken {
  token: TokenInfo;
  /** The plaintext token; the service shows it only in this response. */
  secret: string;
}

/** Body of `POST /api/v1/tokens`. */
export interface CreateTokenInput {
  type: TokenType;
  name: string;
  description?: string;
  tenant_slug?: string;
  namespace_slug?: string;
  environment_slug?: string;
  allowed_origins?: string[];
  /** RFC 3339; omitted means no automatic expiry. */
  expires_at?: string;
}

/** Query of `GET /api/v1/tokens`. */
export interface TokenQuery {
  tenant?: string;
  namespace?: string;
  type?: TokenType;
  status?: TokenStatus;
  limit?: number;
  after?: string;
}

/** Query of `GET /api/v1/audit`. */
export interface AuditQuery {
  tenant?: string;
  namespace?: string;
  token_id?: string;
  type?: string;
  limit?: number;
  after?: string;
}

/** One audit entry (shape defined by the service). */
export type AuditEntryInfo = Record<string, unknown>;

/** A manifest downloaded as JSON. */
export interface ManifestJson {
  version: number;
  closure_hash: string;
  /** path → UTF-8 text. */
  files: Record<string, string>;
}

/** A manifest downloaded as tar.gz. */
export interface ManifestArchive {
  /** The archive bytes (empty when `notModified`). */
  bytes: Uint8Array;
  /** The `ETag` header, `"v<N>-<closure hash>"`, or null. */
  etag: string | null;
  /** Version parsed from the ETag, or null. */
  version: number | null;
  /** Closure hash parsed from the ETag, or null. */
  closure_hash: string | null;
  /** True when the server answered 304 to `ifNoneMatch`. */
  notModified: boolean;
}

/** Result of an upload or rollback. */
export interface PutResult {
  /** False when the content equalled the current version (200, nothing created). */
  changed: boolean;
  version: number;
  closure_hash: string;
  created_at?: string;
}

/** Result of a lint request. */
export interface LintResult {
  ok: boolean;
  problems: Problem[];
}

/** Files to upload: path → bytes, or path → text. */
export type ManifestFiles = ReadonlyMap<string, Uint8Array> | Readonly<Record<string, string>>;

interface RequestOptions {
  query?: Record<string, string | number | undefined>;
  json?: unknown;
  body?: Uint8Array;
  contentType?: string;
  accept?: string;
  headers?: Record<string, string>;
}

const requestIds = new WeakMap<Error, string>();

/**
 * The `request_id` of the service response an error came from, if any
 * (useful in bug reports; the message itself stays the server's).
 *
 * @param err an error thrown by {@linkcode ServiceClient}
 * @returns the request id, or undefined
 *
 * @example
 * ```ts
 * import { requestIdOf } from "./api.ts";
 * if (requestIdOf(new Error("x")) !== undefined) throw new Error();
 * ```
 */
export function requestIdOf(err: unknown): string | undefined {
  return err instanceof Error ? requestIds.get(err) : undefined;
}

/**
 * Typed client of the `/api/v1` control-plane endpoints. Methods return
 * parsed bodies and throw {@linkcode CfgtoolError}s; the token is only ever
 * put in the `Authorization` header. Redirects are not followed (so the
 * credential never travels to another URL): a 3xx is an error naming the
 * target.
 *
 * @example
 * ```ts
 * import { ServiceClient } from "./api.ts";
 * const client = new ServiceClient({ server: "http://127.0.0.1:1/", token: "svc_x" });
 * let code = "";
 * try { await client.listTenants(); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "unreachable") throw new Error(code);
 * ```
 */
export class ServiceClient {
  /** Base URL, without a trailing slash or `/api/v1`. */
  readonly server: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ServiceClientOptions) {
    this.server = options.server.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  // --- tenants -------------------------------------------------------------

  /** `POST /tenants`: creates a tenant (superadmin). */
  async createTenant(input: { slug: string; description?: string }): Promise<TenantInfo> {
    return itemOf<TenantInfo>(await this.#json("POST", "/tenants", { json: input }), "tenant");
  }

  /** `GET /tenants`: the tenants the caller can see. */
  async listTenants(): Promise<TenantInfo[]> {
    return pageOf<TenantInfo>(await this.#json("GET", "/tenants"), "tenants").items;
  }

  /** `GET /tenants/{t}`. */
  async getTenant(tenant: string): Promise<TenantInfo> {
    return itemOf<TenantInfo>(await this.#json("GET", p`/tenants/${tenant}`), "tenant");
  }

  /** `DELETE /tenants/{t}`: deletes its namespaces, revokes its tokens. */
  async deleteTenant(tenant: string): Promise<Record<string, unknown>> {
    return asObject(await this.#json("DELETE", p`/tenants/${tenant}`));
  }

  /** `GET /tenants/{t}/admins`: the tenant's admin memberships. */
  async listTenantAdmins(tenant: string): Promise<Record<string, unknown>[]> {
    const body = await this.#json("GET", p`/tenants/${tenant}/admins`);
    return pageOf<Record<string, unknown>>(body, "admins").items;
  }

  /** `POST /tenants/{t}/admins`: makes a user a tenant admin. */
  async addTenantAdmin(tenant: string, userId: string): Promise<Record<string, unknown>> {
    return asObject(
      await this.#json("POST", p`/tenants/${tenant}/admins`, { json: { user_id: userId } }),
    );
  }

  /** `DELETE /tenants/{t}/admins/{user_id}`. */
  async removeTenantAdmin(tenant: string, userId: string): Promise<Record<string, unknown>> {
    return asObject(await this.#json("DELETE", p`/tenants/${tenant}/admins/${userId}`));
  }

  // --- namespaces ----------------------------------------------------------

  /** `POST /tenants/{t}/namespaces`: creates a namespace (version 0, empty). */
  async createNamespace(
    tenant: string,
    input: { slug: string; description?: string },
  ): Promise<NamespaceInfo> {
    const body = await this.#json("POST", p`/tenants/${tenant}/namespaces`, { json: input });
    return itemOf<NamespaceInfo>(body, "namespace");
  }

  /** `GET /tenants/{t}/namespaces`. */
  async listNamespaces(tenant: string): Promise<NamespaceInfo[]> {
    const body = await this.#json("GET", p`/tenants/${tenant}/namespaces`);
    return pageOf<NamespaceInfo>(body, "namespaces").items;
  }

  /** `GET /tenants/{t}/namespaces/{ns}`. */
  async getNamespace(tenant: string, namespace: string): Promise<NamespaceInfo> {
    const body = await this.#json("GET", p`/tenants/${tenant}/namespaces/${namespace}`);
    return itemOf<NamespaceInfo>(body, "namespace");
  }

  /** `DELETE /tenants/{t}/namespaces/{ns}`: revokes every token bound to it. */
  async deleteNamespace(tenant: string, namespace: string): Promise<Record<string, unknown>> {
    return asObject(await this.#json("DELETE", p`/tenants/${tenant}/namespaces/${namespace}`));
  }

  /** `POST /tenants/{t}/namespaces/{ns}/admins`. */
  async addNamespaceAdmin(
    tenant: string,
    namespace: string,
    userId: string,
  ): Promise<Record<string, unknown>> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/admins`;
    return asObject(await this.#json("POST", path, { json: { user_id: userId } }));
  }

  /** `DELETE /tenants/{t}/namespaces/{ns}/admins/{user_id}`. */
  async removeNamespaceAdmin(
    tenant: string,
    namespace: string,
    userId: string,
  ): Promise<Record<string, unknown>> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/admins/${userId}`;
    return asObject(await this.#json("DELETE", path));
  }

  // --- manifests -----------------------------------------------------------

  /** `GET …/manifest` with `Accept: application/json`: files as text. */
  async getManifest(
    tenant: string,
    namespace: string,
    options: { version?: number } = {},
  ): Promise<ManifestJson> {
    const body = asObject(
      await this.#json("GET", p`/tenants/${tenant}/namespaces/${namespace}/manifest`, {
        query: { version: options.version },
      }),
    );
    const files = asObject(body.files);
    return {
      version: Number(body.version),
      closure_hash: String(body.closure_hash),
      files: Object.fromEntries(Object.entries(files).map(([k, v]) => [k, String(v)])),
    };
  }

  /** `GET …/manifest` as tar.gz; `ifNoneMatch` (an ETag) may give `notModified`. */
  async downloadManifest(
    tenant: string,
    namespace: string,
    options: { version?: number; ifNoneMatch?: string } = {},
  ): Promise<ManifestArchive> {
    const res = await this.#send("GET", p`/tenants/${tenant}/namespaces/${namespace}/manifest`, {
      query: { version: options.version },
      accept: "application/gzip, application/x-tar, */*",
      ...(options.ifNoneMatch === undefined
        ? {}
        : { headers: { "if-none-match": options.ifNoneMatch } }),
    });
    const etag = res.headers.get("etag");
    const m = etag === null ? null : /^(?:W\/)?"v(\d+)-([^"]+)"$/.exec(etag);
    const bytes = res.status === 304
      ? (await res.body?.cancel(), new Uint8Array())
      : new Uint8Array(await res.arrayBuffer());
    return {
      bytes,
      etag,
      version: m ? Number(m[1]) : null,
      closure_hash: m ? m[2]! : null,
      notModified: res.status === 304,
    };
  }

  /**
   * `PUT …/manifest` with a JSON body `{files, message?}`; `ifMatch` sends
   * `If-Match: "v<N>"`. Files must be UTF-8 text.
   */
  async putManifest(
    tenant: string,
    namespace: string,
    files: ManifestFiles,
    options: { message?: string; ifMatch?: number } = {},
  ): Promise<PutResult> {
    const json: Record<string, unknown> = { files: filesAsText(files) };
    if (options.message !== undefined) json.message = options.message;
    return await this.#put(tenant, namespace, { json }, options.ifMatch);
  }

  /** `PUT …/manifest` with a tar.gz body (see `packArchive`). */
  async putManifestArchive(
    tenant: string,
    namespace: string,
    archive: Uint8Array,
    options: { ifMatch?: number } = {},
  ): Promise<PutResult> {
    return await this.#put(
      tenant,
      namespace,
      { body: archive, contentType: "application/gzip" },
      options.ifMatch,
    );
  }

  /** `POST …/lint`: validates files on the server without storing them. */
  async lintManifest(tenant: string, namespace: string, files: ManifestFiles): Promise<LintResult> {
    const body = asObject(
      await this.#json("POST", p`/tenants/${tenant}/namespaces/${namespace}/lint`, {
        json: { files: filesAsText(files) },
      }),
    );
    const problems = Array.isArray(body.problems) ? body.problems.map(toProblem) : [];
    return { ok: body.ok === true, problems };
  }

  /** `GET …/versions`: version metadata, newest first. */
  async listVersions(
    tenant: string,
    namespace: string,
    options: { limit?: number; after?: string } = {},
  ): Promise<Page<VersionInfo>> {
    const body = await this.#json("GET", p`/tenants/${tenant}/namespaces/${namespace}/versions`, {
      query: { limit: options.limit, after: options.after },
    });
    return pageOf<VersionInfo>(body, "versions");
  }

  /** `GET …/versions/{v}`. */
  async getVersion(tenant: string, namespace: string, version: number): Promise<VersionInfo> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/versions/${String(version)}`;
    return itemOf<VersionInfo>(await this.#json("GET", path), "version");
  }

  /** `POST …/rollback`: a new version whose files equal `version`. */
  async rollback(
    tenant: string,
    namespace: string,
    input: { version: number; message?: string },
  ): Promise<PutResult> {
    const res = await this.#send(
      "POST",
      p`/tenants/${tenant}/namespaces/${namespace}/rollback`,
      { json: input },
    );
    return putResult(res.status, await readJson(res));
  }

  // --- tokens --------------------------------------------------------------

  /** `POST /tokens`: the metadata and the one-time secret. */
  async createToken(input: CreateTokenInput): Promise<IssuedToken> {
    return issued(await this.#json("POST", "/tokens", { json: input }));
  }

  /** `GET /tokens`: token metadata, no secrets. */
  async listTokens(query: TokenQuery = {}): Promise<Page<TokenInfo>> {
    return pageOf<TokenInfo>(await this.#json("GET", "/tokens", { query: { ...query } }), "tokens");
  }

  /** `GET /tokens/{id}`. */
  async getToken(id: string): Promise<TokenInfo> {
    return itemOf<TokenInfo>(await this.#json("GET", p`/tokens/${id}`), "token");
  }

  /** `POST /tokens/{id}/rotate`: a replacement with a new one-time secret. */
  async rotateToken(
    id: string,
    input: { name?: string; expires_at?: string } = {},
  ): Promise<IssuedToken> {
    return issued(await this.#json("POST", p`/tokens/${id}/rotate`, { json: input }));
  }

  /** `DELETE /tokens/{id}`: revokes at once; returns `{id, status, revoked_at}`. */
  async revokeToken(id: string): Promise<Partial<TokenInfo> & { id: string }> {
    return itemOf(await this.#json("DELETE", p`/tokens/${id}`), "token");
  }

  // --- audit ---------------------------------------------------------------

  /** `GET /audit`: audit entries, newest first. */
  async listAudit(query: AuditQuery = {}): Promise<Page<AuditEntryInfo>> {
    return pageOf<AuditEntryInfo>(
      await this.#json("GET", "/audit", { query: { ...query } }),
      "entries",
    );
  }

  // --- plumbing ------------------------------------------------------------

  async #put(
    tenant: string,
    namespace: string,
    body: RequestOptions,
    ifMatch: number | undefined,
  ): Promise<PutResult> {
    const res = await this.#send("PUT", p`/tenants/${tenant}/namespaces/${namespace}/manifest`, {
      ...body,
      ...(ifMatch === undefined ? {} : { headers: { "if-match": `"v${ifMatch}"` } }),
    });
    return putResult(res.status, await readJson(res));
  }

  async #json(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    return await readJson(await this.#send(method, path, options));
  }

  async #send(method: string, path: string, options: RequestOptions): Promise<Response> {
    const url = new URL(`${this.server}/api/v1${path}`);
    for (const [k, v] of Object.entries(options.query ?? {})) {
      if (v !== undefined) url.searchParams.set(k, String(v));
    }
    const headers = new Headers(options.headers);
    headers.set("authorization", `Bearer ${this.#token}`);
    headers.set("accept", options.accept ?? "application/json");
    let body: BodyInit | undefined;
    if (options.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.json);
    } else if (options.body !== undefined) {
      headers.set("content-type", options.contentType ?? "application/octet-stream");
      body = options.body as BodyInit;
    }
    let res: Response;
    try {
      res = await this.#fetch(url, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      if (err instanceof DOMException && err.name === "TimeoutError") {
        throw new CfgtoolError(
          "timeout",
          `no answer from ${this.server} within ${this.#timeoutMs / 1000}s (${method} ${path})`,
          { status: 504, cause: err },
        );
      }
      throw new CfgtoolError("unreachable", `cannot reach ${this.server}: ${reason(err)}`, {
        status: 503,
        cause: err,
      });
    }
    if (res.ok || res.status === 304) return res;
    throw await errorFrom(res, method, path);
  }
}

/** Builds a path from a template, percent-encoding every interpolated segment. */
function p(strings: TemplateStringsArray, ...values: string[]): string {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += encodeURIComponent(v) + (strings[i + 1] ?? "");
  });
  return out;
}

function reason(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  // Deno: "error sending request for url (…): client error (Connect): tcp connect error: …"
  const m = /^error sending request for url \([^)]*\): (.*)$/s.exec(msg);
  return m ? m[1]! : msg;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function asObject(v: unknown): Record<string, unknown> {
  if (!isObject(v)) throw unexpected(`expected a JSON object, got ${JSON.stringify(v)}`);
  return v;
}

function unexpected(message: string): CfgtoolError {
  return new CfgtoolError(
    "unexpected_response",
    `unexpected response from the service: ${message}`,
    {
      status: 502,
    },
  );
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  if (text === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw unexpected(`HTTP ${res.status} with a body that is not JSON`);
  }
}

function itemOf<T>(body: unknown, key: string): T {
  const obj = asObject(body);
  const inner = obj[key];
  if (isObject(inner)) return inner as T;
  const { request_id: _id, ...rest } = obj;
  return rest as T;
}

function pageOf<T>(body: unknown, key: string): Page<T> {
  if (Array.isArray(body)) return { items: body as T[], next: null };
  const obj = asObject(body);
  const list = Array.isArray(obj.items) ? obj.items : obj[key];
  if (!Array.isArray(list)) throw unexpected(`expected a list of ${key}`);
  const next = typeof obj.next === "string" || typeof obj.next === "number"
    ? String(obj.next)
    : null;
  return { items: list as T[], next };
}

function issued(body: unknown): IssuedToken {
  const obj = asObject(body);
  if (typeof obj.secret !== "string" || !isObject(obj.token)) {
    throw unexpected("expected {token, secret}");
  }
  return { token: obj.token as TokenInfo, secret: obj.secret };
}

function putResult(status: number, body: unknown): PutResult {
  const obj = itemOf<Record<string, unknown>>(body, "version");
  const version = Number(obj.version);
  if (!Number.isInteger(version)) throw unexpected("expected {version, closure_hash}");
  const out: PutResult = {
    changed: status === 201,
    version,
    closure_hash: String(obj.closure_hash ?? ""),
  };
  if (typeof obj.created_at === "string") out.created_at = obj.created_at;
  return out;
}

function filesAsText(files: ManifestFiles): Record<string, string> {
  if (!(files instanceof Map)) return { ...(files as Record<string, string>) };
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const out: Record<string, string> = {};
  for (const [path, bytes] of files as ReadonlyMap<string, Uint8Array>) {
    try {
      out[path] = decoder.decode(bytes);
    } catch {
      throw new UsageError(`${path}: not UTF-8 text; manifest files must be UTF-8 TOML`);
    }
  }
  return out;
}

function toProblem(v: unknown): Problem {
  const o = isObject(v) ? v : {};
  const problem: Problem = {
    path: typeof o.path === "string" ? o.path : "",
    message: typeof o.message === "string" ? o.message : JSON.stringify(v),
  };
  if (typeof o.line === "number") problem.line = o.line;
  if (typeof o.column === "number") problem.column = o.column;
  if (typeof o.key === "string") problem.key = o.key;
  return problem;
}

const STATUS_CODES: Readonly<Record<number, string>> = {
  400: "invalid_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  412: "precondition_failed",
  413: "payload_too_large",
  422: "invalid_manifest",
  429: "rate_limit_exceeded",
};

async function errorFrom(res: Response, method: string, path: string): Promise<CfgtoolError> {
  const text = await res.text().catch(() => "");
  let env: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (isObject(parsed)) env = parsed;
  } catch { /* not an envelope */ }
  const status = res.status;
  const hasEnvelope = typeof env.code === "string" && typeof env.message === "string";
  let code = hasEnvelope ? env.code as string : STATUS_CODES[status] ?? "http_error";
  let message = hasEnvelope ? env.message as string : `${method} /api/v1${path}: HTTP ${status}`;
  if (status >= 300 && status < 400) {
    code = "unexpected_redirect";
    message = `the service redirected ${method} /api/v1${path} to ${
      res.headers.get("location") ?? "another URL"
    }; use that URL as --server`;
  }
  const details = isObject(env.details) ? env.details : undefined;
  const opts = details === undefined ? {} : { details };
  let err: CfgtoolError;
  if (code === "invalid_manifest" && Array.isArray(details?.problems)) {
    err = new ProblemsError(details.problems.map(toProblem), code, message);
  } else if (code === "unauthorized" && status === 401) {
    err = new UnauthorizedError(message, opts);
  } else if (code === "forbidden" && status === 403) {
    err = new ForbiddenError(message, opts);
  } else if (code === "conflict" && status === 409) {
    err = new ConflictError(message, opts);
  } else if (code === "precondition_failed" && status === 412) {
    err = new PreconditionFailedError(message, opts);
  } else if (code === "invalid_request" && status === 400) {
    err = new UsageError(message, opts);
  } else if (status === 404) {
    err = new NotFoundError(code, message, opts);
  } else if (status === 429) {
    const header = res.headers.get("retry-after");
    const retry = header !== null && Number.isFinite(Number(header))
      ? Number(header)
      : Number(details?.retry_after ?? 1);
    err = new RateLimitError(message, retry, opts);
  } else {
    err = new CfgtoolError(code, message, { status, ...opts });
  }
  const requestId = typeof env.request_id === "string"
    ? env.request_id
    : res.headers.get("x-request-id");
  if (requestId) requestIds.set(err, requestId);
  return err;
}
