/**
 * End-to-end: `namespace-client` tokens through the real server process
 * (docs/api.md "Tokens", docs/ofrep.md: public secret, bound triple,
 * `public_evaluate`, CORS, issuance rules, and audit `principal_type = client`).
 *
 * The evaluation endpoints do not exist yet. The environment gate is checked
 * at every authentication (Authentication rule 2), so these tests probe it
 * with the one endpoint a client token may reach today: reading its own
 * metadata, `GET /api/v1/tokens/{own id}` (self-read). 200 there means the
 * gate let the request through; 403 means it did not.
 */
import { assert, assertEquals } from "../assert.ts";
import { startInstallation } from "./installation.ts";
import {
  allAudit,
  assertError,
  assertStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  manifest,
  mint,
  type Minted,
  pushManifest,
  superGet,
} from "./credentials_fixture.ts";

Deno.test("e2e credentials: namespace-client tokens", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    await pushManifest(inst, inst.admin, "acme", "api", { staging: true });
    const { user } = await createHumans(inst, { user: "someone@acme.test" });
    const acme = bodies("acme", "web", "staging");
    const writer = await mint(inst, inst.admin, acme.write);
    const staging = await mint(inst, inst.admin, {
      ...acme.client,
      allowed_origins: ["https://shop.example.com"],
    });
    const production = await mint(inst, inst.admin, {
      ...acme.client,
      environment_slug: "production",
    });
    const other = await mint(inst, inst.admin, acme.read);
    const self = (m: Minted) => `/api/v1/tokens/${m.token.id}`;
    // The one thing a client may do: evaluate its bound triple.
    const evaluate = (m: Minted, headers: Record<string, string> = {}) =>
      inst.api(
        "POST",
        `/api/v1/tenants/${m.token.tenant_slug}/namespaces/${m.token.namespace_slug}` +
          `/environments/${m.token.environment_slug}/evaluate/all`,
        m.secret,
        { context: {} },
        headers,
      );

    await t.step("public environment: the client authenticates and evaluates", async () => {
      const res = await evaluate(staging);
      assertStatus(res, 200);
      assertEquals(JSON.stringify(res.body).includes(staging.secret), false);
    });

    await t.step("rule 1: a public secret cannot read or revoke its own token record", async () => {
      // the secret ships to browsers: holding it must not let anyone switch the site off
      const read = await inst.api("GET", self(staging), staging.secret);
      assertError(read, 403, "forbidden", "read");
      assertError(
        await inst.api("DELETE", self(staging), staging.secret),
        403,
        "forbidden",
        "revoke",
      );
      assertEquals((await superGet(inst, staging.token.id)).status, "active");
      assertStatus(await evaluate(staging), 200, "still works");
    });

    await t.step("rule 4: no manifest, versions, lint, token or admin endpoint (403)", async () => {
      const ns = "/api/v1/tenants/acme/namespaces/web";
      const refused: [string, string, unknown?][] = [
        ["GET", `${ns}/manifest`],
        ["GET", `${ns}/manifest?version=1`],
        ["GET", `${ns}/versions`],
        ["GET", `${ns}/versions/1`],
        ["POST", `${ns}/lint`, manifest({ staging: true })],
        ["PUT", `${ns}/manifest`, manifest({ staging: true, production: true })],
        ["POST", `${ns}/rollback`, { version: 1 }],
        ["GET", "/api/v1/tokens"],
        ["GET", "/api/v1/tokens?tenant=acme&namespace=web"],
        ["POST", "/api/v1/tokens", { ...acme.client, name: "mine" }],
        ["GET", self(other)],
        ["DELETE", self(other)],
        ["POST", `${self(other)}/rotate`],
        // Reading: rotating needs permission to issue the replacement; a
        // namespace-bound token has none, not even for itself.
        ["POST", `${self(staging)}/rotate`],
        ["GET", "/api/v1/audit"],
        ["GET", "/api/v1/tenants/acme"],
        ["GET", "/api/v1/tenants/acme/namespaces"],
        ["GET", ns],
        ["POST", "/api/v1/tenants/acme/namespaces", { slug: "sneaky" }],
        ["DELETE", ns],
        ["POST", `${ns}/admins`, { user_id: user.id }],
        ["POST", "/api/v1/tenants/acme/admins", { user_id: user.id }],
        ["POST", "/api/v1/tenants", { slug: "sneaky" }],
      ];
      for (const [method, path, body] of refused) {
        const res = await inst.api(method, path, staging.secret, body);
        assertError(res, 403, "forbidden", `client ${method} ${path}`);
      }
      // rule 4: not even the tenant list
      assertError(
        await inst.api("GET", "/api/v1/tenants", staging.secret),
        403,
        "forbidden",
        "list",
      );
      // nothing was changed by those attempts
      assertEquals((await superGet(inst, other.token.id)).status, "active");
      assertEquals((await superGet(inst, staging.token.id)).rotated_to_token_id, null);
      const nss = await inst.api("GET", "/api/v1/tenants/acme/namespaces", inst.admin);
      assertEquals(nss.body.namespaces.map((n: { slug: string }) => n.slug).sort(), ["api", "web"]);
    });

    await t.step("rule 3: public_evaluate = false → every request 403, record active", async () => {
      const paths = [
        ["POST", "/api/v1/tenants/acme/namespaces/web/environments/production/evaluate/all"],
        ["GET", self(production)],
        ["DELETE", self(production)],
        ["GET", "/api/v1/tenants/acme/namespaces/web/manifest"],
        ["GET", "/api/v1/tokens"],
        ["GET", "/api/v1/tenants"],
        ["GET", "/api/v1/audit"],
      ];
      for (let round = 0; round < 2; round++) {
        for (const [method, path] of paths) {
          assertError(
            await inst.api(method!, path!, production.secret),
            403,
            "forbidden",
            `non-public client ${method} ${path}`,
          );
        }
      }
      const rec = await superGet(inst, production.token.id);
      assertEquals(rec.status, "active", "the record stays unrevoked");
      assertEquals(rec.revoked_at, null);
      assertEquals(rec.last_used_at, null, "a refused request is not a use");
      // not even self-revocation got through
      const entries = await allAudit(inst, inst.admin, `token_id=${production.token.id}`);
      assertEquals(entries.map((e) => e.type), ["token.created"]);
    });

    await t.step("rule 2: the binding is enforced (other namespace, other tenant)", async () => {
      // a client of acme/web on acme/api's paths (api's staging is public)
      assertError(
        await inst.api("GET", "/api/v1/tenants/acme/namespaces/api/manifest", staging.secret),
        403,
        "forbidden",
      );
      assertError(
        await inst.api("GET", "/api/v1/tenants/other/namespaces/web/manifest", staging.secret),
        403,
        "forbidden",
      );
    });

    await t.step(
      "lifecycle rule 6: flipping public_evaluate toggles 403, status unchanged",
      async () => {
        // production becomes public: its client works, status still active
        await pushManifest(inst, writer.secret, "acme", "web", { production: true, staging: true });
        assertStatus(
          await evaluate(production),
          200,
          "after flip to true",
        );
        // staging becomes private: its client fails at once
        await pushManifest(inst, writer.secret, "acme", "web", {
          production: true,
          staging: false,
        });
        assertError(
          await evaluate(staging),
          403,
          "forbidden",
          "after flip to false",
        );
        assertStatus(await evaluate(production), 200);
        // and back
        await pushManifest(inst, writer.secret, "acme", "web", {
          production: false,
          staging: true,
        });
        assertError(await evaluate(production), 403, "forbidden");
        assertStatus(await evaluate(staging), 200, "after flip back");
        // the environment removed from the manifest altogether: 403 too, still active
        await pushManifest(inst, writer.secret, "acme", "web", { production: false });
        assertError(
          await evaluate(staging),
          403,
          "forbidden",
          "env removed",
        );
        await pushManifest(inst, writer.secret, "acme", "web", {
          production: false,
          staging: true,
        });
        assertStatus(await evaluate(staging), 200, "env back");
        // a rollback flips it too
        const versions = await inst.api(
          "GET",
          "/api/v1/tenants/acme/namespaces/web/versions",
          writer.secret,
        );
        assertStatus(versions, 200);
        const publicProd = versions.body.versions.find((v: { version: number }) => v.version === 2);
        assert(publicProd, "version 2 made production public");
        assertStatus(
          await inst.api("POST", "/api/v1/tenants/acme/namespaces/web/rollback", writer.secret, {
            version: 2,
          }),
          201,
        );
        assertStatus(
          await evaluate(production),
          200,
          "after rollback",
        );
        for (const m of [staging, production]) {
          const rec = await superGet(inst, m.token.id);
          assertEquals(rec.status, "active", "status never changes with the gate");
          assertEquals(rec.revoked_at, null);
        }
        const entries = await allAudit(inst, inst.admin, "tenant=acme");
        assert(
          !entries.some((e) =>
            [staging.token.id, production.token.id].includes(e.token_id) &&
            (e.type === "token.revoked" || e.type === "token.expired")
          ),
          "the gate never revokes or expires",
        );
      },
    );

    await t.step("rule 5: no CORS headers outside evaluation endpoints", async () => {
      // CORS is for evaluation endpoints only (docs/ofrep.md): the token endpoints
      // answer without Access-Control-Allow-Origin, even for an Origin in
      // allowed_origins, and a foreign Origin never gets one anywhere.
      for (const origin of ["https://shop.example.com", "https://evil.example.com"]) {
        const res = await inst.api("GET", self(staging), staging.secret, undefined, { origin });
        assertStatus(res, 403);
        assertEquals(res.headers.get("access-control-allow-origin"), null, origin);
      }
      const allowed = await evaluate(staging, { origin: "https://shop.example.com" });
      assertEquals(allowed.headers.get("access-control-allow-origin"), "https://shop.example.com");
      const foreign = await evaluate(staging, { origin: "https://evil.example.com" });
      assertEquals(foreign.headers.get("access-control-allow-origin"), null);
    });

    await t.step("audit: client authentications are tagged principal_type = client", async () => {
      const entries = await allAudit(inst, inst.admin, `token_id=${staging.token.id}`);
      const auth = entries.filter((e) => e.type === "token.authenticated");
      assert(auth.length >= 1, "token.authenticated recorded");
      for (const e of auth) {
        assertEquals(e.principal_type, "client");
        assertEquals(e.actor_id, staging.token.id);
        assertEquals(e.token_type, "namespace-client");
        assertEquals(e.environment_slug, "staging");
        assertEquals(e.result, "success");
      }
      // other tokens are tagged service
      const w = await allAudit(
        inst,
        inst.admin,
        `token_id=${writer.token.id}&type=token.authenticated`,
      );
      assert(w.length >= 1);
      assert(w.every((e) => e.principal_type === "service"));
      // the access log tags the client too (and never carries its secret)
      const logs = await inst.server.logsSettled();
      assert(logs.includes(`"principal_type":"client","principal_id":"${staging.token.id}"`));
    });

    await t.step("deleting the namespace revokes the clients (401, not 403)", async () => {
      assertStatus(
        await inst.api("DELETE", "/api/v1/tenants/acme/namespaces/web", inst.admin),
        200,
      );
      for (const m of [staging, production]) {
        assertError(await evaluate(m), 401, "unauthorized");
        assertEquals((await superGet(inst, m.token.id)).status, "revoked");
      }
    });
  } finally {
    await inst.close();
  }
});
