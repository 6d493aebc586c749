/**
 * `/api/v1/tokens` on a real `cfgtool serve` (lib/http/tokens.ts): a new or
 * rotated token comes back once, with its secret, as an uncacheable 201; the
 * `type` and `status` filters of the list accept only the known values.
 */
import { assert, assertEquals } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import { assertError, assertStatus, createTenant } from "../e2e/credentials_fixture.ts";

Deno.test("the token routes answer issuance with 201 and check the list filters", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    let created = "";

    await t.step("create and rotate answer 201 with the secret, never cached", async () => {
      const res = await inst.api("POST", "/api/v1/tokens", inst.admin, {
        type: "tenant-admin",
        name: "ops",
        tenant_slug: "acme",
      });
      assertStatus(res, 201);
      assertEquals(res.headers.get("cache-control"), "no-store");
      assertEquals(Object.keys(res.body).sort(), ["request_id", "secret", "token"]);
      assertEquals(res.body.request_id, res.headers.get("x-request-id"));
      assert(res.body.secret.startsWith(res.body.token.prefix));
      created = res.body.token.id;

      const rotated = await inst.api("POST", `/api/v1/tokens/${created}/rotate`, inst.admin);
      assertStatus(rotated, 201);
      assertEquals(rotated.headers.get("cache-control"), "no-store");
      assertEquals(rotated.body.token.rotated_from_token_id, created);
      assert(rotated.body.secret !== res.body.secret);
    });

    await t.step(
      "an unknown type or status is a 400 naming the field and the choices",
      async () => {
        const badType = await inst.api("GET", "/api/v1/tokens?type=admin", inst.admin);
        assertError(badType, 400, "invalid_request");
        assertEquals(badType.body.details, { field: "type" });
        assert(badType.body.message.startsWith("type must be one of namespace-read, "));
        const badStatus = await inst.api("GET", "/api/v1/tokens?status=gone", inst.admin);
        assertError(badStatus, 400, "invalid_request");
        assertEquals(badStatus.body.details, { field: "status" });
        assertEquals(badStatus.body.message, "status must be one of active, revoked, expired");
      },
    );

    await t.step("known filters select, and empty ones are ignored", async () => {
      const admins = await inst.api(
        "GET",
        "/api/v1/tokens?tenant=acme&type=tenant-admin&status=active",
        inst.admin,
      );
      assertStatus(admins, 200);
      assert(admins.body.tokens.some((x: { id: string }) => x.id === created));
      assert(admins.body.tokens.every((x: { type: string }) => x.type === "tenant-admin"));
      const unfiltered = await inst.api("GET", "/api/v1/tokens?type=&status=", inst.admin);
      assertStatus(unfiltered, 200);
      assert(unfiltered.body.tokens.some((x: { type: string }) => x.type === "superadmin"));
    });
  } finally {
    await inst.close();
  }
});
