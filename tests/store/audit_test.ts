import { assertEquals } from "../assert.ts";
import { addAudit, listAudit, tokenAuditEntry } from "../../lib/store/audit.ts";

const token = (id: string, tenant: string | null, ns: string | null) => ({
  id,
  prefix: "svc_read_abcde",
  type: "namespace-read",
  tenant_slug: tenant,
  namespace_slug: ns,
  environment_slug: null,
});
const actor = { id: "usr_1", principal_type: "user" as const, request_id: "r1" };

Deno.test("listAudit() returns entries newest first, filtered and paginated", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const entries = [
      tokenAuditEntry("token.created", token("tok_a", "acme", "web"), actor, new Date()),
      tokenAuditEntry("token.created", token("tok_b", "acme", "api"), actor, new Date()),
      tokenAuditEntry("token.revoked", token("tok_a", "acme", "web"), actor, new Date()),
      tokenAuditEntry("token.created", token("tok_s", null, null), actor, new Date()),
    ];
    for (const e of entries) await addAudit(kv.atomic(), e).commit();
    const all = await listAudit(kv);
    assertEquals(all.items.map((e) => e.id), entries.map((e) => e.id).reverse());
    const acme = await listAudit(kv, { tenant: "acme" });
    assertEquals(acme.items.length, 3);
    assertEquals((await listAudit(kv, { tenant: "_installation" })).items.map((e) => e.token_id), [
      "tok_s",
    ]);
    assertEquals((await listAudit(kv, { tenant: "acme", namespace: "web" })).items.length, 2);
    assertEquals(
      (await listAudit(kv, { token_id: "tok_a", type: "token.revoked" })).items.length,
      1,
    );
    const p1 = await listAudit(kv, { tenant: "acme", limit: 2 });
    assertEquals(p1.items.map((e) => e.id), [entries[2]!.id, entries[1]!.id]);
    const p2 = await listAudit(kv, { tenant: "acme", limit: 2, after: p1.next! });
    assertEquals(p2, { items: [entries[0]!], next: null });
    const e = all.items[0]!;
    assertEquals(Object.keys(e).sort(), [
      "actor_id",
      "details",
      "environment_slug",
      "id",
      "namespace_slug",
      "principal_type",
      "request_id",
      "result",
      "tenant_slug",
      "timestamp",
      "token_id",
      "token_prefix",
      "token_type",
      "type",
    ]);
  } finally {
    kv.close();
  }
});
