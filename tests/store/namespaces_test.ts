import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  ConflictError,
  InvalidRequestError,
  NotFoundError,
  UnauthorizedError,
} from "../../lib/errors.ts";
import { authenticate } from "../../lib/auth/principal.ts";
import { createToken } from "../../lib/services/tokens.ts";
import { listAudit } from "../../lib/store/audit.ts";
import {
  createNamespace,
  deleteNamespace,
  getNamespace,
  getNamespaceEntry,
  listNamespaces,
} from "../../lib/store/namespaces.ts";
import { createTenant, deleteTenant, findTenant } from "../../lib/store/tenants.ts";
import { getTokenRecord } from "../../lib/store/tokens.ts";
import { getHead } from "../../lib/store/versions.ts";
import { authWorld } from "../auth/world.ts";

const ctx = { requestId: "req-del" };
const actor = { id: "tok_admin", principal_type: "service" as const, request_id: "req-del" };

/** Tenant acme with namespaces web and api, and a superadmin to issue tokens bound to them. */
async function world() {
  const { kv, deps, superadmin } = await authWorld({
    namespaces: ["web", "api"],
    requestId: ctx.requestId,
  });
  const issue = async (type: string, ns?: string) => (await createToken(deps, superadmin, {
    type,
    name: crypto.randomUUID(),
    tenant_slug: "acme",
    ...(ns === undefined ? {} : { namespace_slug: ns }),
  }, ctx));
  return { kv, deps, issue };
}

Deno.test("namespace creation makes version 0, issues no tokens, and rejects duplicates and bad slugs", async () => {
  const { kv } = await world();
  try {
    assertEquals((await getHead(kv, "acme", "web"))?.version, 0);
    let tokens = 0;
    for await (const _ of kv.list({ prefix: ["token_by_tenant", "acme"] })) tokens++;
    assertEquals(tokens, 0);
    await assertRejects(
      () => createNamespace(kv, { tenant: "acme", slug: "web", created_by: "x" }),
      ConflictError,
    );
    await assertRejects(
      () => createNamespace(kv, { tenant: "acme", slug: "Web!", created_by: "x" }),
      InvalidRequestError,
    );
    const err = await assertRejects(
      () => createNamespace(kv, { tenant: "nope", slug: "web", created_by: "x" }),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
    assertEquals((await listNamespaces(kv, "acme")).map((n) => n.slug), ["api", "web"]);
  } finally {
    kv.close();
  }
});

Deno.test("deleting a namespace revokes every token bound to it, with token.revoked audits", async () => {
  const { kv, deps, issue } = await world();
  try {
    const a = await issue("namespace-read", "web");
    const b = await issue("namespace-write", "web");
    const other = await issue("namespace-read", "api");
    const tenantToken = await issue("tenant-admin");
    const r = await deleteNamespace(kv, "acme", "web", actor);
    assertEquals(r.revoked.sort(), [a.token.id, b.token.id].sort());
    for (const t of [a, b]) {
      const rec = await getTokenRecord(kv, t.token.id);
      assertEquals([rec.status, rec.revoked_by], ["revoked", "tok_admin"]);
      assert(rec.revoked_at !== null);
      await assertRejects(() => authenticate(deps, `Bearer ${t.secret}`, ctx), UnauthorizedError);
    }
    for (const t of [other, tenantToken]) {
      assertEquals((await getTokenRecord(kv, t.token.id)).status, "active");
    }
    const audits = await listAudit(kv, { tenant: "acme", type: "token.revoked" });
    assertEquals(audits.items.length, 2);
    assert(
      audits.items.every((e) =>
        e.request_id === "req-del" && e.details.reason === "namespace deleted"
      ),
    );
    await assertRejects(() => getNamespace(kv, "acme", "web"), NotFoundError);
    assertEquals(await getHead(kv, "acme", "web"), null);
  } finally {
    kv.close();
  }
});

Deno.test("deleting a tenant revokes every token bound to it and deletes its namespaces", async () => {
  const { kv, issue } = await world();
  try {
    const ids = [
      (await issue("namespace-read", "web")).token.id,
      (await issue("namespace-write", "api")).token.id,
      (await issue("tenant-admin")).token.id,
    ];
    const r = await deleteTenant(kv, "acme", actor);
    assertEquals(r.revoked.sort(), ids.sort());
    for (const id of ids) assertEquals((await getTokenRecord(kv, id)).status, "revoked");
    assertEquals(await findTenant(kv, "acme"), null);
    assertEquals(await listNamespaces(kv, "acme"), []);
    await assertRejects(
      () => createNamespace(kv, { tenant: "acme", slug: "web", created_by: "x" }),
      NotFoundError,
    );
  } finally {
    kv.close();
  }
});

Deno.test("getNamespaceEntry() gives the record with a versionstamp a commit can check, or an empty entry", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await createTenant(kv, { slug: "acme", created_by: "tok_1" });
    const none = await getNamespaceEntry(kv, "acme", "web");
    assertEquals([none.value, none.versionstamp], [null, null]);
    const created = await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "tok_1" });
    const entry = await getNamespaceEntry(kv, "acme", "web");
    assertEquals(entry.value, created);
    assertEquals((await kv.atomic().check(entry).commit()).ok, true);
    assertEquals((await kv.atomic().check(none).commit()).ok, false);
  } finally {
    kv.close();
  }
});
