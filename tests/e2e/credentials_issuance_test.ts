/**
 * End-to-end: issuance of service tokens through the real server process
 * (docs/api.md "Tokens", "Who may do what": token format, issuance rules,
 * `namespace-client` binding rules, `POST /api/v1/tokens` body rules).
 */
import { base58 } from "base";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { startInstallation } from "./installation.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  assertError,
  assertStatus,
  authStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
  requestToken,
  superGet,
} from "./credentials_fixture.ts";

const WORDS: Record<string, string> = {
  "namespace-read": "read",
  "namespace-write": "write",
  "namespace-client": "client",
  "tenant-admin": "tenant",
  "superadmin": "admin",
};

Deno.test("e2e credentials: issuance of service tokens", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "other");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    await createNamespace(inst, "other", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    await pushManifest(inst, inst.admin, "other", "web", { production: false, staging: true });
    const h = await createHumans(inst, {
      tadmin: "tadmin@acme.test",
      nsadmin: "nsadmin@acme.test",
      apiadmin: "apiadmin@acme.test",
      otheradmin: "admin@other.test",
      nobody: "nobody@acme.test",
    });
    await addTenantAdmin(inst, "acme", h.tadmin.id);
    await addTenantAdmin(inst, "other", h.otheradmin.id);
    await addNamespaceAdmin(inst, "acme", "web", h.nsadmin.id);
    await addNamespaceAdmin(inst, "acme", "api", h.apiadmin.id);

    const acme = bodies("acme", "web", "staging");
    const other = bodies("other", "web", "staging");
    const acmeTenant = await mint(inst, inst.admin, acme.tenant);
    const otherTenant = await mint(inst, inst.admin, other.tenant);
    const webRead = await mint(inst, inst.admin, acme.read);
    const webWrite = await mint(inst, inst.admin, acme.write);
    const webClient = await mint(inst, inst.admin, acme.client);

    await t.step("token format: svc_<type>_ + base58 of 32 bytes, 14-char prefix", async () => {
      for (const body of Object.values(acme)) {
        const res = await requestToken(inst, inst.admin, body);
        assertStatus(res, 201, body.type);
        const { token, secret, request_id } = res.body;
        const word = WORDS[body.type]!;
        assertMatch(secret, new RegExp(`^svc_${word}_[1-9A-HJ-NP-Za-km-z]+$`));
        const payload = secret.slice(`svc_${word}_`.length);
        assertEquals(base58.decode(payload).length, 32, "payload is 32 bytes in base58");
        assertEquals(token.prefix, secret.slice(0, 14));
        assertEquals(token.prefix.length, 14);
        assertMatch(token.id, /^tok_/);
        assertEquals(token.type, body.type);
        assertEquals(token.status, "active");
        assertEquals(token.scopes, []);
        assertEquals(token.last_used_at, null);
        assertEquals(token.expires_at, null);
        assertEquals(token.created_by, acmeTenant.token.created_by, "created by the superadmin");
        assertMatch(token.created_at, /^\d{4}-\d{2}-\d{2}T/);
        for (
          const field of ["id", "type", "name", "tenant_slug", "namespace_slug", "scopes", "prefix"]
        ) {
          assert(field in token, `response token has ${field}`);
        }
        assertEquals(typeof request_id, "string");
        assertEquals(request_id, res.headers.get("x-request-id"));
        assertEquals("digest" in token, false, "the digest is not shown");
        assertEquals("secret" in token, false);
        // bindings per type
        if (body.type === "superadmin") {
          assertEquals([token.tenant_slug, token.namespace_slug], [null, null]);
        } else if (body.type === "tenant-admin") {
          assertEquals([token.tenant_slug, token.namespace_slug], ["acme", null]);
        } else {
          assertEquals([token.tenant_slug, token.namespace_slug], ["acme", "web"]);
        }
        assertEquals(token.environment_slug, body.type === "namespace-client" ? "staging" : null);
        // the secret is in the create response only
        const got = await inst.api("GET", `/api/v1/tokens/${token.id}`, inst.admin);
        assertStatus(got, 200);
        assertEquals(JSON.stringify(got.body).includes(secret), false);
        assertEquals("secret" in got.body, false);
        assertEquals("secret" in got.body.token, false);
        assertEquals("digest" in got.body.token, false);
        assertEquals(got.body.token.prefix, token.prefix);
        // and it authenticates
        assertEquals(await authStatus(inst, secret, token.id), 200, "it authenticates");
      }
      const list = await inst.api("GET", "/api/v1/tokens?limit=500", inst.admin);
      assertStatus(list, 200);
      for (const tok of list.body.tokens) {
        assertEquals("secret" in tok, false);
        assertEquals("digest" in tok, false);
      }
      assertEquals("secret" in list.body, false);
    });

    // Namespace tokens: namespace admin of that namespace, tenant admin (human),
    // tenant-admin token of the tenant, superadmin.
    for (const kind of ["read", "write", "client"] as const) {
      await t.step(`namespace-${kind}: every allowed issuer succeeds`, async () => {
        const issuers = {
          "namespace admin (human)": h.nsadmin.session,
          "tenant admin (human)": h.tadmin.session,
          "tenant-admin token": acmeTenant.secret,
          "superadmin token": inst.admin,
        };
        for (const [who, cred] of Object.entries(issuers)) {
          const res = await requestToken(inst, cred, acme[kind]);
          assertStatus(res, 201, `${who} issues namespace-${kind}`);
          assertEquals(res.body.token.type, `namespace-${kind}`);
          assertEquals(res.body.token.namespace_slug, "web");
        }
      });

      await t.step(`namespace-${kind}: wrong issuers are refused with 403 forbidden`, async () => {
        const refused = {
          "namespace-read token": webRead.secret,
          "namespace-write token": webWrite.secret,
          "namespace-client token": webClient.secret,
          "tenant-admin token of another tenant": otherTenant.secret,
          "tenant admin (human) of another tenant": h.otheradmin.session,
          "namespace admin of another namespace": h.apiadmin.session,
          "user without roles": h.nobody.session,
        };
        for (const [who, cred] of Object.entries(refused)) {
          assertError(await requestToken(inst, cred, acme[kind]), 403, "forbidden", who);
        }
        // a token of tenant other cannot issue into acme, nor can one of acme into other
        assertError(await requestToken(inst, acmeTenant.secret, other[kind]), 403, "forbidden");
      });
    }

    await t.step("tenant-admin: human tenant admin or superadmin only", async () => {
      const ok1 = await requestToken(inst, h.tadmin.session, acme.tenant);
      assertStatus(ok1, 201, "human tenant admin");
      assertEquals(ok1.body.token.tenant_slug, "acme");
      assertEquals(ok1.body.token.created_by, h.tadmin.id);
      assertStatus(await requestToken(inst, inst.admin, acme.tenant), 201, "superadmin");
      const refused = {
        "tenant-admin token of the same tenant": acmeTenant.secret,
        "tenant-admin token of another tenant": otherTenant.secret,
        "namespace admin (human)": h.nsadmin.session,
        "tenant admin (human) of another tenant": h.otheradmin.session,
        "namespace-read token": webRead.secret,
        "namespace-write token": webWrite.secret,
        "namespace-client token": webClient.secret,
        "user without roles": h.nobody.session,
      };
      for (const [who, cred] of Object.entries(refused)) {
        assertError(await requestToken(inst, cred, acme.tenant), 403, "forbidden", who);
      }
    });

    await t.step("superadmin: only an active superadmin token", async () => {
      const second = await mint(inst, inst.admin, acme.superadmin);
      assertEquals(second.token.type, "superadmin");
      // the new superadmin can mint a superadmin in turn
      const third = await mint(inst, second.secret, acme.superadmin);
      const refused = {
        "tenant-admin token": acmeTenant.secret,
        "tenant admin (human)": h.tadmin.session,
        "namespace admin (human)": h.nsadmin.session,
        "namespace-read token": webRead.secret,
        "namespace-write token": webWrite.secret,
        "namespace-client token": webClient.secret,
        "user without roles": h.nobody.session,
      };
      for (const [who, cred] of Object.entries(refused)) {
        assertError(await requestToken(inst, cred, acme.superadmin), 403, "forbidden", who);
      }
      // a superadmin token that is no longer active cannot issue anything
      assertStatus(await inst.api("DELETE", `/api/v1/tokens/${third.token.id}`, inst.admin), 200);
      assertError(await requestToken(inst, third.secret, acme.superadmin), 401, "unauthorized");
    });

    await t.step("superadmin: tenant_slug is ignored, namespace_slug refused", async () => {
      const res = await requestToken(inst, inst.admin, { type: "superadmin", tenant_slug: "acme" });
      assertStatus(res, 201);
      assertEquals(res.body.token.tenant_slug, null);
      assertError(
        await requestToken(inst, inst.admin, { type: "superadmin", namespace_slug: "web" }),
        400,
        "invalid_request",
      );
    });

    await t.step("rule 4: no broader visibility than the issuer", async () => {
      // a tenant-admin token reaches at most its tenant: no superadmin, no other tenant
      assertError(await requestToken(inst, acmeTenant.secret, acme.superadmin), 403, "forbidden");
      assertError(await requestToken(inst, acmeTenant.secret, other.tenant), 403, "forbidden");
      assertError(await requestToken(inst, acmeTenant.secret, other.read), 403, "forbidden");
      // a namespace admin reaches at most its namespace
      assertError(await requestToken(inst, h.nsadmin.session, acme.tenant), 403, "forbidden");
      assertError(
        await requestToken(inst, h.nsadmin.session, { ...acme.read, namespace_slug: "api" }),
        403,
        "forbidden",
      );
      // scopes do not exist in schema 1.0: nobody can grant one
      for (const body of Object.values(acme)) {
        assertError(
          await requestToken(inst, inst.admin, { ...body, scopes: ["manifest.read"] }),
          400,
          "invalid_request",
          `${body.type} with scopes`,
        );
        assertStatus(await requestToken(inst, inst.admin, { ...body, scopes: [] }), 201);
      }
    });

    await t.step("namespace-client: issuance rules 5 to 7", async () => {
      // rule 6: scopes → 400, for every issuer
      for (const cred of [inst.admin, acmeTenant.secret, h.tadmin.session, h.nsadmin.session]) {
        assertError(
          await requestToken(inst, cred, { ...acme.client, scopes: ["evaluate.public"] }),
          400,
          "invalid_request",
          "client with scopes",
        );
      }
      // rule 5: `*` is rejected, alone or among origins; non-origins too
      for (
        const origins of [
          ["*"],
          ["https://app.example.com", "*"],
          ["https://app.example.com/"],
          ["app.example.com"],
          ["null"],
        ]
      ) {
        const res = await requestToken(inst, inst.admin, {
          ...acme.client,
          allowed_origins: origins,
        });
        assertError(res, 400, "invalid_request", JSON.stringify(origins));
      }
      const ok = await mint(inst, inst.admin, {
        ...acme.client,
        allowed_origins: ["https://app.example.com", "http://localhost:5173"],
      });
      const got = await superGet(inst, ok.token.id);
      assertEquals(got.allowed_origins, ["https://app.example.com", "http://localhost:5173"]);
      // allowed_origins is for namespace-client only
      assertError(
        await requestToken(inst, inst.admin, {
          ...acme.read,
          allowed_origins: ["https://app.example.com"],
        }),
        400,
        "invalid_request",
      );
      // rule 7: the environment must exist in the current manifest
      assertError(
        await requestToken(inst, inst.admin, { ...acme.client, environment_slug: "qa" }),
        400,
        "invalid_request",
        "unknown environment",
      );
      // acme/api has only the empty version 0: no environment at all
      assertError(
        await requestToken(inst, inst.admin, { ...acme.client, namespace_slug: "api" }),
        400,
        "invalid_request",
        "namespace without manifest",
      );
      // the environment is required for namespace-client and refused for other types
      assertError(
        await requestToken(inst, inst.admin, { ...acme.client, environment_slug: undefined }),
        400,
        "invalid_request",
      );
      assertError(
        await requestToken(inst, inst.admin, { ...acme.read, environment_slug: "staging" }),
        400,
        "invalid_request",
      );
      // public_evaluate = true is not required at issuance
      const prod = await mint(inst, h.nsadmin.session, {
        ...acme.client,
        environment_slug: "production",
      });
      assertEquals(prod.token.environment_slug, "production");
      assertEquals(prod.token.status, "active");
      // ...and after the environment is removed from the manifest it can no longer be issued
      await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
      assertError(
        await requestToken(inst, inst.admin, { ...acme.client, environment_slug: "production" }),
        400,
        "invalid_request",
        "environment removed by a newer version",
      );
      await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    });

    await t.step("binding fields: required, omitted, and existing", async () => {
      const cases: [string, Record<string, unknown>][] = [
        ["namespace-read without namespace", { ...acme.read, namespace_slug: undefined }],
        ["namespace-write without tenant", { ...acme.write, tenant_slug: undefined }],
        ["tenant-admin without tenant", { type: "tenant-admin" }],
        ["tenant-admin with namespace", { ...acme.tenant, namespace_slug: "web" }],
        ["unknown type", { type: "namespace-admin", tenant_slug: "acme" }],
        ["bad expires_at", { ...acme.read, expires_at: "tomorrow" }],
        ["past expires_at", { ...acme.read, expires_at: "2001-01-01T00:00:00Z" }],
        ["missing name", { ...acme.read, name: undefined }],
      ];
      for (const [what, body] of cases) {
        const res = await inst.api("POST", "/api/v1/tokens", inst.admin, { name: "n", ...body });
        assertError(res, 400, "invalid_request", what);
      }
      assertError(
        await requestToken(inst, inst.admin, { ...acme.read, namespace_slug: "nope" }),
        404,
        "namespace_not_found",
      );
      assertError(
        await requestToken(inst, inst.admin, { ...acme.read, tenant_slug: "nope" }),
        404,
        "tenant_not_found",
      );
      // a namespace of another tenant does not exist in this one
      assertError(
        await requestToken(inst, inst.admin, {
          ...acme.read,
          namespace_slug: "api",
          tenant_slug: "other",
        }),
        404,
        "namespace_not_found",
      );
      const withExpiry = await mint(inst, inst.admin, {
        ...acme.read,
        expires_at: "2100-01-01T00:00:00Z",
        description: "ci",
      });
      assertEquals(withExpiry.token.expires_at, "2100-01-01T00:00:00.000Z");
    });

    await t.step("names are unique within the bound scope (409 conflict)", async () => {
      assertStatus(
        await inst.api("POST", "/api/v1/tokens", inst.admin, { ...acme.read, name: "ci" }),
        201,
      );
      assertError(
        await inst.api("POST", "/api/v1/tokens", inst.admin, { ...acme.write, name: "ci" }),
        409,
        "conflict",
      );
      // the same name in another namespace or tenant is another scope
      assertStatus(
        await inst.api("POST", "/api/v1/tokens", inst.admin, {
          ...acme.read,
          namespace_slug: "api",
          name: "ci",
        }),
        201,
      );
      assertStatus(
        await inst.api("POST", "/api/v1/tokens", inst.admin, { ...other.read, name: "ci" }),
        201,
      );
    });

    await t.step("namespace creation issues no token (rule 5)", async () => {
      const before = await inst.api("GET", "/api/v1/tokens?tenant=acme&limit=500", inst.admin);
      await createNamespace(inst, "acme", "fresh", acmeTenant.secret);
      const after = await inst.api("GET", "/api/v1/tokens?tenant=acme&limit=500", inst.admin);
      assertEquals(after.body.tokens.length, before.body.tokens.length);
      const ns = await inst.api("GET", "/api/v1/tokens?tenant=acme&namespace=fresh", inst.admin);
      assertEquals(ns.body.tokens, []);
    });
  } finally {
    await inst.close();
  }
});
