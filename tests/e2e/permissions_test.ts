/**
 * End-to-end: who may call which namespace-scoped endpoint, through the real
 * server process: `{tenant}` (and namespace) in the path against the token
 * binding (docs/api.md "Who may do what"), the
 * permission summaries of the token types, and human roles read on every
 * request (docs/operations.md "Users and sessions").
 */
import { assertEquals } from "../assert.ts";
import { startInstallation } from "./installation.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  assertError,
  assertStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  manifest,
  mint,
  pushManifest,
  requestToken,
} from "./credentials_fixture.ts";

Deno.test("e2e permissions: bindings, token types and human roles", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "other");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    await createNamespace(inst, "other", "web");
    for (const [tenant, ns] of [["acme", "web"], ["acme", "api"], ["other", "web"]]) {
      await pushManifest(inst, inst.admin, tenant!, ns!, { production: false, staging: true });
    }
    const h = await createHumans(inst, { ana: "ana@acme.test", bo: "bo@acme.test" });
    const acme = bodies("acme", "web", "staging");
    const acmeTenant = await mint(inst, inst.admin, acme.tenant);
    const otherTenant = await mint(inst, inst.admin, bodies("other", "web", "staging").tenant);
    const webRead = await mint(inst, inst.admin, acme.read);
    const webWrite = await mint(inst, inst.admin, acme.write);
    const ns = (tenant: string, namespace: string) =>
      `/api/v1/tenants/${tenant}/namespaces/${namespace}`;
    const json = { accept: "application/json" };

    await t.step("{tenant} differing from a tenant-admin token's binding → 403", async () => {
      const refused: [string, string, unknown?][] = [
        ["GET", "/api/v1/tenants/other"],
        ["GET", "/api/v1/tenants/other/namespaces"],
        ["POST", "/api/v1/tenants/other/namespaces", { slug: "intruder" }],
        ["GET", ns("other", "web")],
        ["GET", `${ns("other", "web")}/manifest`],
        ["PUT", `${ns("other", "web")}/manifest`, manifest({ staging: true })],
        ["GET", `${ns("other", "web")}/versions`],
        ["POST", `${ns("other", "web")}/lint`, manifest({ staging: true })],
        ["DELETE", ns("other", "web")],
        ["POST", `${ns("other", "web")}/admins`, { user_id: h.ana.id }],
        // an unknown tenant is still another tenant: 403 before any 404
        ["GET", "/api/v1/tenants/nope/namespaces"],
      ];
      for (const [method, path, body] of refused) {
        assertError(
          await inst.api(method, path, acmeTenant.secret, body, json),
          403,
          "forbidden",
          `acme tenant-admin ${method} ${path}`,
        );
      }
      // the same requests on its own tenant work
      assertStatus(
        await inst.api("GET", "/api/v1/tenants/acme/namespaces", acmeTenant.secret),
        200,
      );
      assertStatus(
        await inst.api("GET", `${ns("acme", "api")}/manifest`, acmeTenant.secret, undefined, json),
        200,
      );
      // and other's namespaces are intact
      const list = await inst.api("GET", "/api/v1/tenants/other/namespaces", otherTenant.secret);
      assertEquals(list.body.namespaces.map((n: { slug: string }) => n.slug), ["web"]);
    });

    await t.step("namespace tokens: another namespace or tenant → 403", async () => {
      for (const m of [webRead, webWrite]) {
        for (const path of [ns("acme", "api"), ns("other", "web")]) {
          assertError(
            await inst.api("GET", `${path}/manifest`, m.secret, undefined, json),
            403,
            "forbidden",
            `${m.token.type} on ${path}`,
          );
          assertError(await inst.api("GET", path, m.secret), 403, "forbidden");
        }
        // its own namespace works
        const own = await inst.api(
          "GET",
          `${ns("acme", "web")}/manifest`,
          m.secret,
          undefined,
          json,
        );
        assertStatus(own, 200);
        assertEquals(own.body.version, 1);
      }
    });

    await t.step(
      "namespace-read: download only; namespace-write: + upload, lint, versions",
      async () => {
        const web = ns("acme", "web");
        const push = manifest({ production: true, staging: true });
        // read
        assertStatus(
          await inst.api("GET", `${web}/manifest`, webRead.secret),
          200,
          "tar.gz download",
        );
        assertError(
          await inst.api("PUT", `${web}/manifest`, webRead.secret, push),
          403,
          "forbidden",
        );
        assertError(await inst.api("POST", `${web}/lint`, webRead.secret, push), 403, "forbidden");
        assertError(await inst.api("GET", `${web}/versions`, webRead.secret), 403, "forbidden");
        assertError(
          await inst.api("POST", `${web}/rollback`, webRead.secret, { version: 1 }),
          403,
          "forbidden",
        );
        // write
        assertStatus(await inst.api("POST", `${web}/lint`, webWrite.secret, push), 200);
        assertStatus(await inst.api("PUT", `${web}/manifest`, webWrite.secret, push), 201);
        assertStatus(await inst.api("GET", `${web}/versions`, webWrite.secret), 200);
        assertStatus(
          await inst.api("POST", `${web}/rollback`, webWrite.secret, { version: 1 }),
          201,
        );
        // neither creates or deletes namespaces, nor manages admins
        for (const m of [webRead, webWrite]) {
          assertError(
            await inst.api("POST", "/api/v1/tenants/acme/namespaces", m.secret, { slug: "x" }),
            403,
            "forbidden",
          );
          assertError(await inst.api("DELETE", web, m.secret), 403, "forbidden");
          assertError(
            await inst.api("POST", `${web}/admins`, m.secret, { user_id: h.ana.id }),
            403,
            "forbidden",
          );
          assertError(
            await inst.api("POST", "/api/v1/tenants/acme/admins", m.secret, { user_id: h.ana.id }),
            403,
            "forbidden",
          );
        }
        assertStatus(await inst.api("GET", web, inst.admin), 200, "web still exists");
      },
    );

    await t.step(
      "tenant-admin token: namespace lifecycle and namespace admins, not tenant admins",
      async () => {
        await createNamespace(inst, "acme", "scratch", acmeTenant.secret);
        await createNamespace(inst, "acme", "scratch-2", acmeTenant.secret);
        // A user made on the server host is none of acme's people until a
        // superadmin gives them a role there: to the token, the same as no user.
        for (const user_id of [h.bo.id, "usr_00000000000000000000000000"]) {
          assertError(
            await inst.api("POST", `${ns("acme", "scratch")}/admins`, acmeTenant.secret, {
              user_id,
            }),
            404,
            "user_not_found",
          );
        }
        await addNamespaceAdmin(inst, "acme", "scratch-2", h.bo.id);
        await addNamespaceAdmin(inst, "acme", "scratch", h.bo.id, acmeTenant.secret);
        assertStatus(
          await inst.api("DELETE", `${ns("acme", "scratch")}/admins/${h.bo.id}`, acmeTenant.secret),
          200,
        );
        assertStatus(await inst.api("DELETE", ns("acme", "scratch-2"), acmeTenant.secret), 200);
        // tenant-admin membership is for humans (docs/api.md), and tokens never join it
        assertError(
          await inst.api("POST", "/api/v1/tenants/acme/admins", acmeTenant.secret, {
            user_id: h.bo.id,
          }),
          403,
          "forbidden",
        );
        assertStatus(await inst.api("DELETE", ns("acme", "scratch"), acmeTenant.secret), 200);
        // only superadmins create or delete tenants
        assertError(
          await inst.api("POST", "/api/v1/tenants", acmeTenant.secret, { slug: "mine" }),
          403,
          "forbidden",
        );
        assertError(
          await inst.api("DELETE", "/api/v1/tenants/acme", acmeTenant.secret),
          403,
          "forbidden",
        );
      },
    );

    await t.step("human tenant admin: roles are read on every request", async () => {
      const session = h.ana.session;
      const create = (slug: string) =>
        inst.api("POST", "/api/v1/tenants/acme/namespaces", session, { slug });
      assertError(await create("ana-1"), 403, "forbidden", "before the role");
      assertError(await requestToken(inst, session, acme.read), 403, "forbidden");
      await addTenantAdmin(inst, "acme", h.ana.id);
      assertStatus(await create("ana-1"), 201, "same session, now tenant admin");
      assertStatus(await requestToken(inst, session, acme.tenant), 201, "mints tenant-admin");
      // a tenant admin cannot act on another tenant
      assertError(
        await inst.api("POST", "/api/v1/tenants/other/namespaces", session, { slug: "ana-x" }),
        403,
        "forbidden",
      );
      // removed: the very same session is refused at once
      assertStatus(
        await inst.api("DELETE", `/api/v1/tenants/acme/admins/${h.ana.id}`, inst.admin),
        200,
      );
      assertError(await create("ana-2"), 403, "forbidden", "after removal");
      assertError(await requestToken(inst, session, acme.read), 403, "forbidden");
      // token metadata is filtered per token: she sees none any more
      const listed = await inst.api("GET", "/api/v1/tokens?tenant=acme", session);
      assertStatus(listed, 200);
      assertEquals(listed.body.tokens, []);
    });

    await t.step("human namespace admin: roles are read on every request", async () => {
      const session = h.bo.session;
      const manifestGet = () =>
        inst.api("GET", `${ns("acme", "web")}/manifest`, session, undefined, json);
      assertError(await manifestGet(), 403, "forbidden", "before the role");
      await addNamespaceAdmin(inst, "acme", "web", h.bo.id);
      assertStatus(await manifestGet(), 200, "namespace admin reads the manifest");
      assertStatus(
        await requestToken(inst, session, acme.write),
        201,
        "and issues namespace tokens",
      );
      // not the other namespace of the tenant, not tenant-level actions
      assertError(
        await inst.api("GET", `${ns("acme", "api")}/manifest`, session, undefined, json),
        403,
        "forbidden",
      );
      assertError(
        await inst.api("POST", "/api/v1/tenants/acme/namespaces", session, { slug: "bo" }),
        403,
        "forbidden",
      );
      assertStatus(
        await inst.api("DELETE", `${ns("acme", "web")}/admins/${h.bo.id}`, inst.admin),
        200,
      );
      assertError(await manifestGet(), 403, "forbidden", "after removal");
      assertError(await requestToken(inst, session, acme.write), 403, "forbidden");
    });

    await t.step(
      "a session of a user with no role is authenticated but refused (403, not 401)",
      async () => {
        const { cy } = await createHumans(inst, { cy: "cy@acme.test" });
        assertError(await inst.api("GET", "/api/v1/tenants/acme", cy.session), 403, "forbidden");
        assertError(await inst.api("GET", "/api/v1/audit", cy.session), 403, "forbidden");
        const tenants = await inst.api("GET", "/api/v1/tenants", cy.session);
        assertStatus(tenants, 200);
        assertEquals(tenants.body.tenants, []);
      },
    );
  } finally {
    await inst.close();
  }
});
