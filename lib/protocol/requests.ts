/**
 * Bodies and queries of the control-plane requests (`/api/v1`, docs/api.md)
 * the SDK sends: creating tenants, namespaces and tokens, rotating a token,
 * rolling back, and the filters of the token and audit lists.
 *
 * @module
 */
import type { TokenStatus, TokenType } from "./responses.ts";

/** Body of `POST /api/v1/tenants`. */
export interface CreateTenantInput {
  /** The new tenant's slug. */
  slug: string;
  /** Free text. */
  description?: string;
}

/** Body of `POST /api/v1/tenants/{t}/namespaces`. */
export interface CreateNamespaceInput {
  /** The new namespace's slug. */
  slug: string;
  /** Free text. */
  description?: string;
}

/** Body of `POST /api/v1/tokens`. */
export interface CreateTokenInput {
  /** What the token may do. */
  type: TokenType;
  /** Unique within the bound scope. */
  name: string;
  /** Free text. */
  description?: string;
  /** Tenant to bind to (every type but superadmin). */
  tenant_slug?: string;
  /** Namespace to bind to (namespace tokens). */
  namespace_slug?: string;
  /** Environment to bind to (namespace-client only). */
  environment_slug?: string;
  /** Origins allowed to use it from a browser (namespace-client only). */
  allowed_origins?: string[];
  /** RFC 3339; omitted means no automatic expiry. */
  expires_at?: string;
}

/** Body of `POST /api/v1/tokens/{id}/rotate`: what the replacement changes. */
export interface RotateTokenInput {
  /** A new name (default: the old one). */
  name?: string;
  /** RFC 3339 expiry of the replacement (default: the old one's). */
  expires_at?: string;
}

/** Body of `POST …/rollback`. */
export interface RollbackInput {
  /** The version whose files the new version gets. */
  version: number;
  /** The new version's message. */
  message?: string;
}

/** Query of `GET /api/v1/tokens`. */
export interface TokenQuery {
  /** Only tokens bound to this tenant. */
  tenant?: string;
  /** Only tokens bound to this namespace (needs `tenant`). */
  namespace?: string;
  /** Only this type. */
  type?: TokenType;
  /** Effective status; default `active`. */
  status?: TokenStatus;
  /** Page size (default 50, max 500). */
  limit?: number;
  /** Cursor: the `next` of the previous page (a token id). */
  after?: string;
}

/** Query of `GET /api/v1/audit`. */
export interface AuditQuery {
  /** Only this tenant's entries (`_installation` entries need no tenant). */
  tenant?: string;
  /** Only entries bound to this namespace. */
  namespace?: string;
  /** Only entries about this token. */
  token_id?: string;
  /** Only this event type. */
  type?: string;
  /** Page size (default 50, max 500). */
  limit?: number;
  /** Cursor: the `next` of the previous page (older entries). */
  after?: string;
  /** Only entries newer than this entry id (what a follower has not seen yet). */
  since?: string;
}
