/**
 * A small typed HTTP client for the control plane of a cfgtool service
 * (`/api/v1`, docs/api.md): tenants, their login policies, namespaces and
 * their admins, manifests, versions, rollback, service tokens, audit and
 * webhooks.
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
import { trimTrailing } from "../ascii.ts";
import { UsageError } from "../errors.ts";
import { ifMatchHeader, parseVersionEtag } from "../protocol/etag.ts";
import type {
  ApplyResult,
  ChangeCommentInfo,
  ChangeRequestDetails,
  ChangeRequestInfo,
  ChangeStatus,
  ProtectionInfo,
  RolloutInput,
} from "../protocol/changes.ts";
import type { LoginPolicy, LoginPolicyRecord } from "../protocol/login_policy.ts";
import type {
  CreateWebhookInput,
  IssuedWebhook,
  WebhookDeliveryInfo,
  WebhookInfo,
} from "../protocol/webhooks.ts";
import type {
  AuditQuery,
  CreateNamespaceInput,
  CreateTenantInput,
  CreateTokenInput,
  RollbackInput,
  RotateTokenInput,
  TokenQuery,
} from "../protocol/requests.ts";
import type {
  AuditEntryInfo,
  IssuedToken,
  LintResult,
  ManifestJson,
  NamespaceInfo,
  Page,
  PutResult,
  TenantInfo,
  TokenInfo,
  TokenWarning,
  VersionInfo,
} from "../protocol/responses.ts";
import {
  asObject,
  isObject,
  itemOf,
  pageOf,
  readJson,
  toProblem,
  unexpected,
} from "./_response.ts";
import { p, recordedRequestId, type RequestOptions, Transport } from "./_transport.ts";

// The bodies the client sends and reads are the wire types of lib/protocol/.
export type * from "../protocol/requests.ts";
export type * from "../protocol/responses.ts";
export type * from "../protocol/login_policy.ts";
export type * from "../protocol/webhooks.ts";
export type * from "../protocol/changes.ts";

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

/** Files to upload: path → bytes, or path → text. */
export type UploadFiles = ReadonlyMap<string, Uint8Array> | Readonly<Record<string, string>>;

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
  return recordedRequestId(err);
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
  readonly #http: Transport;

  /**
   * A client of one service with one credential; no request is sent yet.
   *
   * @param options the server URL (a trailing `/api/v1` is dropped), the token, the timeout
   */
  constructor(options: ServiceClientOptions) {
    this.server = trimTrailing(options.server, "/").replace(/\/api\/v1$/, "");
    this.#http = new Transport({
      server: this.server,
      token: options.token,
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    });
  }

  // --- tenants -------------------------------------------------------------

  /** `POST /tenants`: creates a tenant (superadmin). */
  async createTenant(input: CreateTenantInput): Promise<TenantInfo> {
    return itemOf<TenantInfo>(await this.#http.json("POST", "/tenants", { json: input }), "tenant");
  }

  /** `GET /tenants`: the tenants the caller can see. */
  async listTenants(): Promise<TenantInfo[]> {
    return pageOf<TenantInfo>(await this.#http.json("GET", "/tenants"), "tenants").items;
  }

  /** `GET /tenants/{t}`. */
  async getTenant(tenant: string): Promise<TenantInfo> {
    return itemOf<TenantInfo>(await this.#http.json("GET", p`/tenants/${tenant}`), "tenant");
  }

  /** `DELETE /tenants/{t}`: deletes its namespaces, revokes its tokens. */
  async deleteTenant(tenant: string): Promise<Record<string, unknown>> {
    return asObject(await this.#http.json("DELETE", p`/tenants/${tenant}`));
  }

  /** `GET /tenants/{t}/admins`: the tenant's admin memberships. */
  async listTenantAdmins(tenant: string): Promise<Record<string, unknown>[]> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/admins`);
    return pageOf<Record<string, unknown>>(body, "admins").items;
  }

  /** `POST /tenants/{t}/admins`: makes a user a tenant admin. */
  async addTenantAdmin(tenant: string, userId: string): Promise<Record<string, unknown>> {
    return asObject(
      await this.#http.json("POST", p`/tenants/${tenant}/admins`, { json: { user_id: userId } }),
    );
  }

  /** `DELETE /tenants/{t}/admins/{user_id}`. */
  async removeTenantAdmin(tenant: string, userId: string): Promise<Record<string, unknown>> {
    return asObject(await this.#http.json("DELETE", p`/tenants/${tenant}/admins/${userId}`));
  }

  /**
   * `GET /tenants/{t}/login`: how the tenant's people sign in, with who set
   * it when; 404 `not_found` when the tenant has no login policy.
   */
  async getLoginPolicy(tenant: string): Promise<LoginPolicyRecord> {
    return loginPolicyRecord(await this.#http.json("GET", p`/tenants/${tenant}/login`));
  }

  /**
   * `PUT /tenants/{t}/login`: replaces the tenant's login policy (validated
   * by the server, 400 `invalid_request` naming the field); returns the
   * stored record. A policy names where the OIDC client secret is read
   * (`client_secret_ref`), never the secret.
   */
  async setLoginPolicy(tenant: string, policy: LoginPolicy): Promise<LoginPolicyRecord> {
    const body = await this.#http.json("PUT", p`/tenants/${tenant}/login`, { json: policy });
    return loginPolicyRecord(body);
  }

  // --- namespaces ----------------------------------------------------------

  /** `POST /tenants/{t}/namespaces`: creates a namespace (version 0, empty). */
  async createNamespace(
    tenant: string,
    input: CreateNamespaceInput,
  ): Promise<NamespaceInfo> {
    const body = await this.#http.json("POST", p`/tenants/${tenant}/namespaces`, { json: input });
    return itemOf<NamespaceInfo>(body, "namespace");
  }

  /** `GET /tenants/{t}/namespaces`. */
  async listNamespaces(tenant: string): Promise<NamespaceInfo[]> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/namespaces`);
    return pageOf<NamespaceInfo>(body, "namespaces").items;
  }

  /** `GET /tenants/{t}/namespaces/{ns}`. */
  async getNamespace(tenant: string, namespace: string): Promise<NamespaceInfo> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/namespaces/${namespace}`);
    return itemOf<NamespaceInfo>(body, "namespace");
  }

  /** `DELETE /tenants/{t}/namespaces/{ns}`: revokes every token bound to it. */
  async deleteNamespace(tenant: string, namespace: string): Promise<Record<string, unknown>> {
    return asObject(await this.#http.json("DELETE", p`/tenants/${tenant}/namespaces/${namespace}`));
  }

  /** `GET /tenants/{t}/namespaces/{ns}/admins`: the namespace's admin memberships. */
  async listNamespaceAdmins(tenant: string, namespace: string): Promise<Record<string, unknown>[]> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/namespaces/${namespace}/admins`);
    return pageOf<Record<string, unknown>>(body, "admins").items;
  }

  /** `POST /tenants/{t}/namespaces/{ns}/admins`. */
  async addNamespaceAdmin(
    tenant: string,
    namespace: string,
    userId: string,
  ): Promise<Record<string, unknown>> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/admins`;
    return asObject(await this.#http.json("POST", path, { json: { user_id: userId } }));
  }

  /** `DELETE /tenants/{t}/namespaces/{ns}/admins/{user_id}`. */
  async removeNamespaceAdmin(
    tenant: string,
    namespace: string,
    userId: string,
  ): Promise<Record<string, unknown>> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/admins/${userId}`;
    return asObject(await this.#http.json("DELETE", path));
  }

  // --- manifests -----------------------------------------------------------

  /** `GET …/manifest` with `Accept: application/json`: files as text. */
  async getManifest(
    tenant: string,
    namespace: string,
    options: { version?: number } = {},
  ): Promise<ManifestJson> {
    const body = asObject(
      await this.#http.json("GET", p`/tenants/${tenant}/namespaces/${namespace}/manifest`, {
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
    const res = await this.#http.send(
      "GET",
      p`/tenants/${tenant}/namespaces/${namespace}/manifest`,
      {
        query: { version: options.version },
        accept: "application/gzip, application/x-tar, */*",
        ...(options.ifNoneMatch === undefined
          ? {}
          : { headers: { "if-none-match": options.ifNoneMatch } }),
      },
    );
    const etag = res.headers.get("etag");
    const tag = parseVersionEtag(etag);
    const bytes = res.status === 304
      ? (await res.body?.cancel(), new Uint8Array())
      : new Uint8Array(await res.arrayBuffer());
    return {
      bytes,
      etag,
      version: tag?.version ?? null,
      closure_hash: tag?.closure_hash ?? null,
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
    files: UploadFiles,
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
  async lintManifest(tenant: string, namespace: string, files: UploadFiles): Promise<LintResult> {
    const body = asObject(
      await this.#http.json("POST", p`/tenants/${tenant}/namespaces/${namespace}/lint`, {
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
    const body = await this.#http.json(
      "GET",
      p`/tenants/${tenant}/namespaces/${namespace}/versions`,
      {
        query: { limit: options.limit, after: options.after },
      },
    );
    return pageOf<VersionInfo>(body, "versions");
  }

  /** `GET …/versions/{v}`. */
  async getVersion(tenant: string, namespace: string, version: number): Promise<VersionInfo> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/versions/${String(version)}`;
    return itemOf<VersionInfo>(await this.#http.json("GET", path), "version");
  }

  /** `POST …/rollback`: a new version whose files equal `version`. */
  async rollback(
    tenant: string,
    namespace: string,
    input: RollbackInput,
  ): Promise<PutResult> {
    const res = await this.#http.send(
      "POST",
      p`/tenants/${tenant}/namespaces/${namespace}/rollback`,
      { json: input },
    );
    return putResult(res.status, await readJson(res));
  }

  // --- tokens --------------------------------------------------------------

  /** `POST /tokens`: the metadata and the one-time secret. */
  async createToken(input: CreateTokenInput): Promise<IssuedToken> {
    return issued(await this.#http.json("POST", "/tokens", { json: input }));
  }

  /** `GET /tokens`: token metadata, no secrets. */
  async listTokens(query: TokenQuery = {}): Promise<Page<TokenInfo>> {
    return pageOf<TokenInfo>(
      await this.#http.json("GET", "/tokens", { query: { ...query } }),
      "tokens",
    );
  }

  /** `GET /tokens/{id}`. */
  async getToken(id: string): Promise<TokenInfo> {
    return itemOf<TokenInfo>(await this.#http.json("GET", p`/tokens/${id}`), "token");
  }

  /** `POST /tokens/{id}/rotate`: a replacement with a new one-time secret. */
  async rotateToken(
    id: string,
    input: RotateTokenInput = {},
  ): Promise<IssuedToken> {
    return issued(await this.#http.json("POST", p`/tokens/${id}/rotate`, { json: input }));
  }

  /** `DELETE /tokens/{id}`: revokes at once; returns `{id, status, revoked_at}`. */
  async revokeToken(id: string): Promise<Partial<TokenInfo> & { id: string }> {
    return itemOf(await this.#http.json("DELETE", p`/tokens/${id}`), "token");
  }

  // --- audit ---------------------------------------------------------------

  /** `GET /audit`: audit entries, newest first. */
  async listAudit(query: AuditQuery = {}): Promise<Page<AuditEntryInfo>> {
    return pageOf<AuditEntryInfo>(
      await this.#http.json("GET", "/audit", { query: { ...query } }),
      "entries",
    );
  }

  // --- webhooks ------------------------------------------------------------

  /**
   * `POST /tenants/{t}/webhooks`: a webhook and its signing secret
   * (`whsec_…`), shown this once (tenant admins and superadmins).
   */
  async createWebhook(tenant: string, input: CreateWebhookInput): Promise<IssuedWebhook> {
    const body = asObject(
      await this.#http.json("POST", p`/tenants/${tenant}/webhooks`, { json: input }),
    );
    if (typeof body.secret !== "string" || !isObject(body.webhook)) {
      throw unexpected("expected {webhook, secret}");
    }
    return { webhook: body.webhook as unknown as WebhookInfo, secret: body.secret };
  }

  /** `GET /tenants/{t}/webhooks`: the tenant's webhooks, never their secrets. */
  async listWebhooks(tenant: string): Promise<WebhookInfo[]> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/webhooks`);
    return pageOf<WebhookInfo>(body, "webhooks").items;
  }

  /** `GET /tenants/{t}/webhooks/{id}`. */
  async getWebhook(tenant: string, id: string): Promise<WebhookInfo> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/webhooks/${id}`);
    return itemOf<WebhookInfo>(body, "webhook");
  }

  /** `DELETE /tenants/{t}/webhooks/{id}`: the webhook and its deliveries; returns the webhook. */
  async deleteWebhook(tenant: string, id: string): Promise<WebhookInfo> {
    const body = await this.#http.json("DELETE", p`/tenants/${tenant}/webhooks/${id}`);
    return itemOf<WebhookInfo>(body, "webhook");
  }

  /** `POST /tenants/{t}/webhooks/{id}/test`: sends a `webhook.test` event now; the delivery. */
  async testWebhook(tenant: string, id: string): Promise<WebhookDeliveryInfo> {
    const body = await this.#http.json("POST", p`/tenants/${tenant}/webhooks/${id}/test`);
    return itemOf<WebhookDeliveryInfo>(body, "delivery");
  }

  /** `GET /tenants/{t}/webhooks/{id}/deliveries`: the newest 100, newest first. */
  async listWebhookDeliveries(tenant: string, id: string): Promise<WebhookDeliveryInfo[]> {
    const body = await this.#http.json("GET", p`/tenants/${tenant}/webhooks/${id}/deliveries`);
    return pageOf<WebhookDeliveryInfo>(body, "deliveries").items;
  }

  // --- protection and change requests -------------------------------------

  /** `GET …/protection`: the namespace's protected environments. */
  async getProtection(tenant: string, namespace: string): Promise<ProtectionInfo> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/protection`;
    return asObject(await this.#http.json("GET", path)) as unknown as ProtectionInfo;
  }

  /** `PUT …/protection`: the whole set (an environment left out is unprotected). */
  async setProtection(
    tenant: string,
    namespace: string,
    environments: ProtectionInfo["environments"],
  ): Promise<ProtectionInfo> {
    const path = p`/tenants/${tenant}/namespaces/${namespace}/protection`;
    const body = await this.#http.json("PUT", path, { json: { environments } });
    return asObject(body) as unknown as ProtectionInfo;
  }

  /** `POST …/change-requests`: proposes a whole file set for review. */
  async openChangeRequest(
    tenant: string,
    namespace: string,
    files: UploadFiles,
    options: { message: string; baseVersion?: number },
  ): Promise<ChangeRequestInfo> {
    const json: Record<string, unknown> = { files: filesAsText(files), message: options.message };
    if (options.baseVersion !== undefined) json.base_version = options.baseVersion;
    return itemOf<ChangeRequestInfo>(
      await this.#http.json("POST", this.#changes(tenant, namespace), { json }),
      "change_request",
    );
  }

  /** `POST …/rollouts`: opens a progressive rollout (a change request). */
  async openRollout(
    tenant: string,
    namespace: string,
    input: RolloutInput,
  ): Promise<ChangeRequestInfo> {
    return itemOf<ChangeRequestInfo>(
      await this.#http.json("POST", p`/tenants/${tenant}/namespaces/${namespace}/rollouts`, {
        json: input,
      }),
      "change_request",
    );
  }

  /** `GET …/change-requests`: newest first, optionally of some statuses. */
  async listChangeRequests(
    tenant: string,
    namespace: string,
    query: { status?: readonly ChangeStatus[]; limit?: number; after?: string } = {},
  ): Promise<Page<ChangeRequestInfo>> {
    const body = await this.#http.json("GET", this.#changes(tenant, namespace), {
      query: {
        status: query.status?.join(","),
        limit: query.limit,
        after: query.after,
      },
    });
    return pageOf<ChangeRequestInfo>(body, "change_requests");
  }

  /** `GET …/change-requests/{id}`: the request, its comments, its diff and what the caller may do. */
  async getChangeRequest(
    tenant: string,
    namespace: string,
    id: string,
  ): Promise<ChangeRequestDetails> {
    const path = `${this.#changes(tenant, namespace)}${p`/${id}`}`;
    return asObject(await this.#http.json("GET", path)) as unknown as ChangeRequestDetails;
  }

  /**
   * `POST …/change-requests/{id}/<step>` (approve, reject, withdraw, apply),
   * or `DELETE …/schedule` (`cancel-schedule`): the request after the step
   * (and, for apply, the version committed: null when scheduled).
   */
  async changeRequestStep(
    tenant: string,
    namespace: string,
    id: string,
    step: "approve" | "reject" | "withdraw" | "apply" | "cancel-schedule",
    body: { comment?: string; at?: string; revision?: number } = {},
  ): Promise<ApplyResult> {
    const base = `${this.#changes(tenant, namespace)}${p`/${id}`}`;
    const res = step === "cancel-schedule"
      ? await this.#http.json("DELETE", `${base}/schedule`)
      : await this.#http.json("POST", `${base}/${step}`, { json: body });
    const obj = asObject(res);
    const change_request = itemOf<ChangeRequestInfo>(obj, "change_request");
    const version = typeof obj.version === "number" ? obj.version : null;
    return { version, change_request };
  }

  /** `POST …/change-requests/{id}/comments`. */
  async commentOnChangeRequest(
    tenant: string,
    namespace: string,
    id: string,
    text: string,
  ): Promise<ChangeCommentInfo> {
    const path = `${this.#changes(tenant, namespace)}${p`/${id}`}/comments`;
    return itemOf<ChangeCommentInfo>(
      await this.#http.json("POST", path, { json: { text } }),
      "comment",
    );
  }

  #changes(tenant: string, namespace: string): string {
    return p`/tenants/${tenant}/namespaces/${namespace}/change-requests`;
  }

  // --- plumbing ------------------------------------------------------------

  async #put(
    tenant: string,
    namespace: string,
    body: RequestOptions,
    ifMatch: number | undefined,
  ): Promise<PutResult> {
    const res = await this.#http.send(
      "PUT",
      p`/tenants/${tenant}/namespaces/${namespace}/manifest`,
      {
        ...body,
        ...(ifMatch === undefined ? {} : { headers: { "if-match": ifMatchHeader(ifMatch) } }),
      },
    );
    return putResult(res.status, await readJson(res));
  }
}

function issued(body: unknown): IssuedToken {
  const obj = asObject(body);
  if (typeof obj.secret !== "string" || !isObject(obj.token)) {
    throw unexpected("expected {token, secret}");
  }
  const token = obj.token as unknown as TokenInfo;
  if (!Array.isArray(obj.warnings)) return { token, secret: obj.secret };
  return { token, secret: obj.secret, warnings: obj.warnings as TokenWarning[] };
}

function loginPolicyRecord(body: unknown): LoginPolicyRecord {
  const obj = asObject(body);
  if (typeof obj.tenant_slug !== "string" || !isObject(obj.policy)) {
    throw unexpected("expected {tenant_slug, policy, updated_at, updated_by}");
  }
  return {
    tenant_slug: obj.tenant_slug,
    policy: obj.policy as unknown as LoginPolicy,
    updated_at: String(obj.updated_at ?? ""),
    updated_by: String(obj.updated_by ?? ""),
  };
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

function filesAsText(files: UploadFiles): Record<string, string> {
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
