/**
 * The request types of lib/protocol/requests.ts are what the server
 * accepts: each body or query the SDK sends must be assignable to the type
 * the server reads it as (checked when this file type-checks).
 */
import { assertEquals } from "../assert.ts";
import type {
  AuditQuery,
  CreateTokenInput,
  RotateTokenInput,
  TokenQuery,
} from "../../lib/protocol/requests.ts";
import type { CreateTokenInput as ServerCreateTokenInput } from "../../lib/auth/issuance.ts";
import type { ListTokensQuery } from "../../lib/services/tokens.ts";
import type { AuditQuery as StoreAuditQuery } from "../../lib/store/audit.ts";

Deno.test("token bodies and list queries the SDK sends are what the server reads", () => {
  const create = (i: CreateTokenInput): ServerCreateTokenInput => i;
  const tokens = (q: TokenQuery): ListTokensQuery => q;
  const audit = (q: AuditQuery): StoreAuditQuery => q;
  const rotate = (i: RotateTokenInput): { name?: string; expires_at?: string | null } => i;
  const body: CreateTokenInput = { type: "namespace-read", name: "ci", tenant_slug: "acme" };
  assertEquals(create(body), body);
  assertEquals(tokens({ status: "revoked", limit: 10 }), { status: "revoked", limit: 10 });
  assertEquals(audit({ token_id: "tok_1" }), { token_id: "tok_1" });
  assertEquals(rotate({}), {});
});

Deno.test("the server's list queries carry no filter the SDK cannot send", () => {
  const tokens = (q: ListTokensQuery): TokenQuery => q;
  const audit = (q: StoreAuditQuery): AuditQuery => q;
  assertEquals(tokens({ tenant: "acme" }), { tenant: "acme" });
  assertEquals(audit({ type: "token.created" }), { type: "token.created" });
});
