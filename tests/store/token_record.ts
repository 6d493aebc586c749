/**
 * A complete token record for tests that write one straight into the KV:
 * an active namespace-client token of acme/web/staging allowing
 * https://a.example, with `over` applied.
 *
 * @module
 */
import type { TokenRecord } from "../../lib/store/tokens.ts";

/**
 * Builds the record.
 *
 * @param over fields to change
 * @returns the record
 */
export function tokenRecord(over: Partial<TokenRecord>): TokenRecord {
  return {
    id: "tok_1",
    type: "namespace-client",
    name: "n",
    description: null,
    tenant_slug: "acme",
    namespace_slug: "web",
    environment_slug: "staging",
    allowed_origins: ["https://a.example"],
    scopes: [],
    prefix: "svc_client_xyz",
    digest: "d",
    created_by: "usr_1",
    created_at: "2026-01-01T00:00:00.000Z",
    expires_at: null,
    last_used_at: null,
    last_used_ip_hash: null,
    status: "active",
    revoked_at: null,
    revoked_by: null,
    rotated_from_token_id: null,
    rotated_to_token_id: null,
    ...over,
  };
}
