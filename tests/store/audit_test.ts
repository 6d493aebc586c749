import { assert, assertEquals } from "../assert.ts";
import {
  actorFromId,
  addAudit,
  AUDIT_EVENT_TYPES,
  eventAuditEntry,
  listAudit,
  tokenAuditEntry,
  writeAudit,
} from "../../lib/store/audit.ts";
import { createTenant, deleteTenant } from "../../lib/store/tenants.ts";

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

Deno.test("listAudit() with since lists only newer entries, newest first, paged back with after", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const made = [];
    for (const ns of ["a", "b", "c", "d", "e"]) {
      const e = eventAuditEntry("namespace.created", actor, new Date(), {
        tenant_slug: ns === "e" ? "other" : "acme",
        namespace_slug: ns,
      });
      await writeAudit(kv, e);
      made.push(e);
    }
    const [a, b, c, d, e] = made.map((x) => x.id) as [string, string, string, string, string];
    assertEquals((await listAudit(kv, { since: b })).items.map((x) => x.id), [e, d, c]);
    assertEquals((await listAudit(kv, { tenant: "acme", since: b })).items.map((x) => x.id), [
      d,
      c,
    ]);
    const p1 = await listAudit(kv, { since: a, limit: 2 });
    assertEquals(p1.items.map((x) => x.id), [e, d]);
    const p2 = await listAudit(kv, { since: a, limit: 2, after: p1.next! });
    assertEquals(p2, { items: [made[2]!, made[1]!], next: null });
    // an empty range, and since the newest
    assertEquals(await listAudit(kv, { since: d, after: c }), { items: [], next: null });
    assertEquals((await listAudit(kv, { since: e })).items, []);
  } finally {
    kv.close();
  }
});

Deno.test("outside a request, the actor of a change is its creator's id, its kind read from the id", () => {
  assertEquals(actorFromId("usr_01"), { id: "usr_01", principal_type: "user", request_id: null });
  assertEquals(actorFromId("tok_01").principal_type, "service");
  assertEquals(actorFromId("bootstrap").principal_type, "system");
});

Deno.test("the event types name every control-plane change", () => {
  for (
    const t of [
      "tenant.created",
      "tenant.deleted",
      "namespace.created",
      "namespace.deleted",
      "manifest.pushed",
      "manifest.rolled_back",
      "admin.added",
      "admin.removed",
    ]
  ) {
    assertEquals(AUDIT_EVENT_TYPES.includes(t), true, t);
  }
  assertEquals(new Set(AUDIT_EVENT_TYPES).size, AUDIT_EVENT_TYPES.length);
});

Deno.test("listAudit() for a tenant lists only what its current tenant of that slug made", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    let now = Date.now();
    const clock = () => new Date(now);
    await createTenant(kv, { slug: "acme", created_by: "ops", now: clock });
    const old = eventAuditEntry("login.failed", actor, clock(), { tenant_slug: "acme" });
    await writeAudit(kv, old);
    await deleteTenant(kv, "acme", actor, clock());
    // before a new tenant exists, the slug's whole log is readable (to a superadmin)
    assert((await listAudit(kv, { tenant: "acme" })).items.some((e) => e.id === old.id));
    now += 1000;
    await createTenant(kv, { slug: "acme", created_by: "ops", now: clock });
    const fresh = eventAuditEntry("login.failed", actor, clock(), { tenant_slug: "acme" });
    await writeAudit(kv, fresh);
    const scoped = await listAudit(kv, { tenant: "acme" });
    assertEquals(scoped.items.map((e) => e.type), ["login.failed", "tenant.created"]);
    assertEquals(scoped.items[0]!.id, fresh.id);
    // since and after still page within the new tenant's entries
    assertEquals((await listAudit(kv, { tenant: "acme", since: old.id })).items.length, 2);
    assertEquals(
      (await listAudit(kv, { tenant: "acme", after: fresh.id })).items.map((e) => e.type),
      [
        "tenant.created",
      ],
    );
    assertEquals((await listAudit(kv, { tenant: "acme", after: old.id })).items, []);
    // installation-wide, everything is kept
    const all = await listAudit(kv);
    assert(all.items.some((e) => e.id === old.id));
    assertEquals(all.items.filter((e) => e.type === "tenant.created").length, 2);
  } finally {
    kv.close();
  }
});
