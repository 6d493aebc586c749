/**
 * `GET /api/v1/users` on a real `cfgtool serve`: a superadmin sees every
 * user, a tenant admin the members of its tenant(s), everyone else is
 * refused.
 */
import { assertEquals } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  assertError,
  assertStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
} from "../e2e/credentials_fixture.ts";

Deno.test("GET /api/v1/users shows admins the users they may see and refuses everyone else", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "other");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "other", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { production: true });
    const h = await createHumans(inst, {
      ana: "ana@acme.test",
      bo: "bo@acme.test",
      cy: "cy@other.test",
      dee: "dee@nowhere.test",
      eve: "eve@both.test",
    });
    await addTenantAdmin(inst, "acme", h.ana.id);
    await addNamespaceAdmin(inst, "acme", "web", h.bo.id);
    await addTenantAdmin(inst, "other", h.cy.id);
    await addTenantAdmin(inst, "acme", h.eve.id);
    await addTenantAdmin(inst, "other", h.eve.id);
    const acme = bodies("acme", "web", "production");
    const acmeTenant = await mint(inst, inst.admin, acme.tenant);
    const acmeRead = await mint(inst, inst.admin, acme.read);
    const acmeWrite = await mint(inst, inst.admin, acme.write);
    const acmeClient = await mint(inst, inst.admin, acme.client);
    const emails = async (by: string, query = "") => {
      const res = await inst.api("GET", `/api/v1/users${query}`, by);
      assertStatus(res, 200, `GET /users${query}`);
      return res.body.users.map((u: { email: string }) => u.email);
    };

    await t.step("a superadmin sees every user, in email order, without secrets", async () => {
      const res = await inst.api("GET", "/api/v1/users", inst.admin);
      assertStatus(res, 200);
      assertEquals(res.body.users.map((u: { email: string }) => u.email), [
        "ana@acme.test",
        "bo@acme.test",
        "cy@other.test",
        "dee@nowhere.test",
        "eve@both.test",
      ]);
      assertEquals(Object.keys(res.body.users[0]).sort(), ["created_at", "email", "id"]);
      assertEquals(await emails(inst.admin, "?tenant=other"), ["cy@other.test", "eve@both.test"]);
      assertError(
        await inst.api("GET", "/api/v1/users?tenant=nope", inst.admin),
        404,
        "tenant_not_found",
      );
    });

    await t.step("a tenant admin sees the tenant's admins and its namespaces' admins", async () => {
      const acmeMembers = ["ana@acme.test", "bo@acme.test", "eve@both.test"];
      assertEquals(await emails(acmeTenant.secret), acmeMembers);
      assertEquals(await emails(acmeTenant.secret, "?tenant=acme"), acmeMembers);
      assertEquals(await emails(h.ana.session), acmeMembers);
      // a human admin of two tenants sees both, or one when it names it
      assertEquals(await emails(h.eve.session), [...acmeMembers, "cy@other.test"].sort());
      assertEquals(await emails(h.eve.session, "?tenant=other"), [
        "cy@other.test",
        "eve@both.test",
      ]);
    });

    await t.step(
      "with ?tenant=, the tenant's people a page at a time, with sign-ins and roles",
      async () => {
        const page = async (query: string) => {
          const res = await inst.api("GET", `/api/v1/users?tenant=acme${query}`, acmeTenant.secret);
          assertStatus(res, 200, query);
          return res.body as { users: Record<string, unknown>[]; next: string | null };
        };
        const first = await page("&limit=2");
        assertEquals(first.users.map((u) => u.email), ["ana@acme.test", "bo@acme.test"]);
        assertEquals(first.next, "bo@acme.test");
        assertEquals(first.users[0], {
          id: h.ana.id,
          email: "ana@acme.test",
          created_at: first.users[0]!.created_at,
          // made on the server host: on an admin list, never signed in to acme
          first_sign_in_at: null,
          last_sign_in_at: null,
          last_sign_in_method: null,
          last_sign_in_client: null,
          roles: [{ role: "tenant_admin", via: "list" }],
        });
        assertEquals(first.users[1]!.roles, [{ role: "namespace_admin", namespace: "web" }]);
        const rest = await page(`&limit=2&after=${encodeURIComponent(first.next!)}`);
        assertEquals(rest.users.map((u) => u.email), ["eve@both.test"]);
        assertEquals(rest.next, null);
        assertEquals((await page("")).next, null, "50 by default: all three");
        for (
          const [query, field] of [["&limit=0", "limit"], ["&limit=x", "limit"], [
            "&after=a%20b",
            "after",
          ]]
        ) {
          const res = await inst.api("GET", `/api/v1/users?tenant=acme${query}`, acmeTenant.secret);
          assertError(res, 400, "invalid_request", query);
          assertEquals(res.body.details?.field ?? field, field, query);
        }
        // paging is of one tenant's people: without a tenant, 400 rather than a silent full list
        assertError(
          await inst.api("GET", "/api/v1/users?limit=2", inst.admin),
          400,
          "invalid_request",
        );
        // the listing without a tenant keeps its shape
        const all = await inst.api("GET", "/api/v1/users", acmeTenant.secret);
        assertEquals(Object.keys(all.body), ["users"]);
      },
    );

    await t.step("another tenant's admin is refused with 403", async () => {
      for (const by of [acmeTenant.secret, h.ana.session]) {
        assertError(await inst.api("GET", "/api/v1/users?tenant=other", by), 403, "forbidden");
      }
      // an unknown tenant is another tenant too: 403 before any 404
      assertError(
        await inst.api("GET", "/api/v1/users?tenant=nope", acmeTenant.secret),
        403,
        "forbidden",
      );
    });

    await t.step(
      "namespace tokens, namespace admins and users without a role get 403",
      async () => {
        for (
          const [what, by] of [
            ["namespace-read", acmeRead.secret],
            ["namespace-write", acmeWrite.secret],
            ["namespace-client", acmeClient.secret],
            ["namespace admin", h.bo.session],
            ["no role", h.dee.session],
          ] as const
        ) {
          assertError(await inst.api("GET", "/api/v1/users", by), 403, "forbidden", what);
          assertError(
            await inst.api("GET", "/api/v1/users?tenant=acme", by),
            403,
            "forbidden",
            what,
          );
        }
      },
    );

    await t.step("no credential, an unknown one or a revoked token gets 401", async () => {
      assertError(await inst.api("GET", "/api/v1/users", null), 401, "unauthorized");
      assertError(
        await inst.api("GET", "/api/v1/users", `ses_${"x".repeat(43)}`),
        401,
        "unauthorized",
      );
      assertStatus(
        await inst.api("DELETE", `/api/v1/tokens/${acmeTenant.token.id}`, inst.admin),
        200,
      );
      assertError(await inst.api("GET", "/api/v1/users", acmeTenant.secret), 401, "unauthorized");
    });
  } finally {
    await inst.close();
  }
});
