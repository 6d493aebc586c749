/**
 * The response types of lib/protocol/responses.ts are what the server
 * sends: each record the server's routes put in a body must be assignable to
 * the type the SDK reads it as (checked when this file type-checks), and the
 * shared unions must be the same sets.
 */
import { assertEquals } from "../assert.ts";
import type {
  AuditEntryInfo,
  EnvironmentSettings,
  NamespaceInfo,
  Page,
  PrincipalType,
  TenantInfo,
  TokenInfo,
  TokenStatus,
  TokenType,
  VersionInfo,
} from "../../lib/protocol/responses.ts";
import type { AuditEntry, PrincipalType as StorePrincipalType } from "../../lib/store/audit.ts";
import { createNamespace } from "../../lib/store/namespaces.ts";
import type { Page as StorePage } from "../../lib/store/page.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import {
  type PublicToken,
  TOKEN_TYPES,
  type TokenStatus as StoreTokenStatus,
  type TokenType as StoreTokenType,
} from "../../lib/store/tokens.ts";
import {
  type EnvironmentSettings as StoreEnvironmentSettings,
  getHead,
  type VersionMeta,
} from "../../lib/store/versions.ts";

/** True when A and B are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

Deno.test("a tenant and a namespace with its head, as the routes answer them, read as TenantInfo and NamespaceInfo", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // a body is JSON: what the SDK reads is an object literal with the record's fields
    const tenant: TenantInfo = { ...await createTenant(kv, { slug: "acme", created_by: "tok_1" }) };
    const record = await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
    const head = await getHead(kv, "acme", "web");
    const namespace: NamespaceInfo = { ...record, head: head === null ? null : { ...head } };
    assertEquals([tenant.slug, tenant.description], ["acme", null]);
    assertEquals([namespace.slug, namespace.tenant_slug, namespace.head?.version], [
      "web",
      "acme",
      0,
    ]);
  } finally {
    kv.close();
  }
});

Deno.test("version metadata without its tree, token metadata, audit entries and pages fit the SDK's types", () => {
  const version = (m: Omit<VersionMeta, "tree" | "environments">): VersionInfo => m;
  const token = (t: PublicToken): TokenInfo => t;
  const entry = (e: AuditEntry): AuditEntryInfo => ({ ...e });
  const page = <T>(p: StorePage<T>): Page<T> => p;
  const environments = (e: StoreEnvironmentSettings): EnvironmentSettings => e;
  assertEquals(
    [version, token, entry, page, environments].map((f) => f.length),
    [1, 1, 1, 1, 1],
  );
});

Deno.test("token types, token statuses and principal types are the server's sets", () => {
  const types: Same<TokenType, StoreTokenType> = true;
  const statuses: Same<TokenStatus, StoreTokenStatus> = true;
  const principals: Same<PrincipalType, StorePrincipalType> = true;
  assertEquals([types, statuses, principals], [true, true, true]);
  const all: readonly TokenType[] = TOKEN_TYPES;
  assertEquals(all.length, 5);
});
