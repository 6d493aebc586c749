import { assertEquals, assertRejects } from "../assert.ts";
import { ConflictError } from "../../lib/errors.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { authenticate } from "../../lib/auth/principal.ts";
import { listAudit } from "../../lib/store/audit.ts";

Deno.test("bootstrapSuperadmin() works on an empty KV and makes a new bootstrap-<n> token on each run", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = await randomTokenKey();
    const a = await bootstrapSuperadmin(kv, key);
    const b = await bootstrapSuperadmin(kv, key);
    assertEquals([a.token.name, b.token.name], ["bootstrap-1", "bootstrap-2"]);
    assertEquals([a.token.type, a.token.tenant_slug, a.token.created_by], [
      "superadmin",
      null,
      "bootstrap",
    ]);
    const p = await authenticate({ kv, key }, `Bearer ${a.secret}`, { requestId: "r" });
    assertEquals(p.kind === "token" ? p.token.type : null, "superadmin");
    const named = await bootstrapSuperadmin(kv, key, { name: "break-glass" });
    assertEquals(named.token.name, "break-glass");
    await assertRejects(() => bootstrapSuperadmin(kv, key, { name: "break-glass" }), ConflictError);
    const created = await listAudit(kv, { type: "token.created" });
    assertEquals(created.items.map((e) => [e.actor_id, e.principal_type, e.tenant_slug]), [
      ["bootstrap", "system", null],
      ["bootstrap", "system", null],
      ["bootstrap", "system", null],
    ]);
  } finally {
    kv.close();
  }
});
