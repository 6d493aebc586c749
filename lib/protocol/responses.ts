/**
 * Bodies of the control-plane answers (`/api/v1`, docs/api.md) as the SDK
 * and the CLI read them: tenants, namespaces and their heads, manifest
 * versions, tokens, audit entries, manifests, upload and lint results, and
 * one page of a list. Readers are tolerant: a field a reader cannot always
 * rely on is optional, and the service may add fields (`[field: string]:
 * unknown`) without breaking them. tests/protocol/responses_test.ts checks
 * that the server's records fit these types.
 *
 * @module
 */
import type { Problem } from "../errors.ts";

/** One page of a list (`next`: the cursor to pass as `after`, or null at the end). */
export interface Page<T> {
  /** The items, newest first. */
  items: T[];
  /** Cursor for the next page (pass as `after`), or null at the end. */
  next: string | null;
}

/** The service-token types of schema 1.0. */
export type TokenType =
  | "namespace-read"
  | "namespace-write"
  | "namespace-client"
  | "tenant-admin"
  | "superadmin";

/** Lifecycle state of a token. */
export type TokenStatus = "active" | "revoked" | "expired";

/** A tenant as the service shows it; every field but `slug` may be absent. */
export interface TenantInfo {
  /** The tenant's slug. */
  slug: string;
  /** Free text, or null. */
  description?: string | null;
  /** RFC 3339 time of creation. */
  created_at?: string;
  /** User id or token id of the creator. */
  created_by?: string;
  /** Fields a newer service may add. */
  [field: string]: unknown;
}

/** Settings of one environment of a namespace's current manifest. */
export interface EnvironmentSettings {
  /** Whether `namespace-client` tokens may evaluate in it. */
  public_evaluate: boolean;
}

/** The current version of a namespace, as the namespace endpoints show it. */
export interface NamespaceHead {
  /** The current manifest version (0 before the first upload). */
  version: number;
  /** Its closure hash. */
  closure_hash?: string;
  /** The environments the current manifest declares. */
  environments?: Record<string, EnvironmentSettings>;
  /** Fields a newer service may add. */
  [field: string]: unknown;
}

/** A namespace as the service shows it; every field but `slug` may be absent. */
export interface NamespaceInfo {
  /** The namespace's slug. */
  slug: string;
  /** The slug of its tenant. */
  tenant_slug?: string;
  /** Free text, or null. */
  description?: string | null;
  /** RFC 3339 time of creation. */
  created_at?: string;
  /** User id or token id of the creator. */
  created_by?: string;
  /** Its current version (listed and shown namespaces carry it; null if it has none). */
  head?: NamespaceHead | null;
  /** Fields a newer service may add. */
  [field: string]: unknown;
}

/** Metadata of one manifest version. */
export interface VersionInfo {
  /** The version number. */
  version: number;
  /** The closure hash of its files. */
  closure_hash: string;
  /** RFC 3339 time of the upload. */
  created_at?: string;
  /** User id or token id of the author. */
  created_by?: string;
  /** The upload's message, or null. */
  message?: string | null;
  /** Number of files in the manifest. */
  file_count?: number;
  /** Fields a newer service may add. */
  [field: string]: unknown;
}

/** Token metadata (never the secret). */
export interface TokenInfo {
  /** `tok_<ulid>`. */
  id: string;
  /** What the token may do. */
  type: TokenType;
  /** Unique within the bound scope. */
  name: string;
  /** First 14 characters of the token. */
  prefix: string;
  /** Effective status. */
  status: TokenStatus;
  /** Free text, or null. */
  description?: string | null;
  /** Bound tenant; null only for superadmin. */
  tenant_slug?: string | null;
  /** Bound namespace (namespace tokens). */
  namespace_slug?: string | null;
  /** Bound environment (namespace-client only). */
  environment_slug?: string | null;
  /** Origin allowlist; `[]` except for namespace-client. */
  allowed_origins?: string[];
  /** Reserved; always `[]` in schema 1.0. */
  scopes?: string[];
  /** User id or token id of the creator. */
  created_by?: string;
  /** RFC 3339 time of creation. */
  created_at?: string;
  /** RFC 3339 expiry, or null for none. */
  expires_at?: string | null;
  /** RFC 3339 time of the last authentication, or null. */
  last_used_at?: string | null;
  /** Hash of the address it was last used from, or null. */
  last_used_ip_hash?: string | null;
  /** RFC 3339 time of revocation, or null. */
  revoked_at?: string | null;
  /** Who revoked it, or null. */
  revoked_by?: string | null;
  /** The token this one replaced by rotation, or null. */
  rotated_from_token_id?: string | null;
  /** The token that replaced this one, or null. */
  rotated_to_token_id?: string | null;
}

/**
 * Something to know about a token just issued, which was issued all the
 * same: `environment_not_public` for a `namespace-client` token whose
 * environment has `public_evaluate = false` (it gets 403 until that changes).
 */
export interface TokenWarning {
  /** Stable code. */
  code: "environment_not_public";
  /** What it means for the token, in plain words. */
  message: string;
}

/** A token just created or rotated, with its one-time secret. */
export interface IssuedToken {
  /** Its metadata. */
  token: TokenInfo;
  /** The plaintext token; the service shows it only in this response. */
  secret: string;
  /** Present, and not empty, when there is something to know about the token. */
  warnings?: TokenWarning[];
}

/** Who acted, in an audit entry. */
export type PrincipalType = "user" | "service" | "client" | "system";

/** One audit entry as the service shows it; fields may be absent or added. */
export interface AuditEntryInfo {
  /** ULID; entries sort by it. */
  id?: string;
  /** Event type: `token.created`, `token.rotated`, `token.revoked`, … */
  type?: string;
  /** RFC 3339 time of the event. */
  timestamp?: string;
  /** Request id, or null outside a request. */
  request_id?: string | null;
  /** Outcome of the request the event belongs to. */
  result?: "success" | "failure";
  /** Kind of actor. */
  principal_type?: PrincipalType;
  /** User id, token id or `system`. */
  actor_id?: string;
  /** Token the event is about, or null. */
  token_id?: string | null;
  /** Its 14-character public prefix. */
  token_prefix?: string | null;
  /** Its type. */
  token_type?: string | null;
  /** Tenant binding (null for installation-level). */
  tenant_slug?: string | null;
  /** Namespace binding. */
  namespace_slug?: string | null;
  /** Environment binding (`namespace-client`). */
  environment_slug?: string | null;
  /** Extra facts (never secrets). */
  details?: Record<string, unknown>;
  /** Fields a newer service may add. */
  [field: string]: unknown;
}

/** A manifest downloaded as JSON. */
export interface ManifestJson {
  /** The version downloaded. */
  version: number;
  /** Its closure hash. */
  closure_hash: string;
  /** path → UTF-8 text. */
  files: Record<string, string>;
}

/** Result of an upload or rollback. */
export interface PutResult {
  /** False when the content equalled the current version (200, nothing created). */
  changed: boolean;
  /** The head version after the request. */
  version: number;
  /** Its closure hash. */
  closure_hash: string;
  /** RFC 3339 time the version was created. */
  created_at?: string;
}

/** Result of a lint request. */
export interface LintResult {
  /** True when the files would be accepted. */
  ok: boolean;
  /** Every problem found. */
  problems: Problem[];
}
