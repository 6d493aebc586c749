/**
 * End-to-end: the lifecycle of service tokens through the real server
 * process (docs/api.md "Tokens": states and transitions, list, rotate,
 * revoke, expiry, deletion of the bound tenant or namespace, `last_used_at`).
 */
import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import { startInstallation } from "./installation.ts";
import { tamper } from "../tamper.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  allAudit,
  assertError,
  assertStatus,
  authStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  mint,
  pushManifest,
  sleep,
  superGet,
  type TokenJson,
} from "./credentials_fixture.ts";

Deno.test("e2e credentials: list, rotate, revoke, expire, cascade", async (t) => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "other");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "acme", "api");
    await createNamespace(inst, "other", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    const h = await createHumans(inst, {
      tadmin: "tadmin@acme.test",
      nsadmin: "nsadmin@acme.test",
      both: "both@multi.test",
    });
    await addTenantAdmin(inst, "acme", h.tadmin.id);
    await addTenantAdmin(inst, "acme", h.both.id);
    await addTenantAdmin(inst, "other", h.both.id);
    await addNamespaceAdmin(inst, "acme", "web", h.nsadmin.id);
    const acme = bodies("acme", "web", "staging");
    const other = bodies("other", "web", "staging");
    const acmeTenant = await mint(inst, inst.admin, acme.tenant);
    const otherTenant = await mint(inst, inst.admin, other.tenant);
    const webRead = await mint(inst, inst.admin, acme.read);
    const webWrite = await mint(inst, inst.admin, acme.write);
    const webClient = await mint(inst, inst.admin, acme.client);
    const apiRead = await mint(inst, inst.admin, { ...acme.read, namespace_slug: "api" });
    const otherRead = await mint(inst, inst.admin, other.read);

    const list = async (by: string, query = "") => {
      const res = await inst.api("GET", `/api/v1/tokens${query}`, by);
      assertStatus(res, 200, `GET /tokens${query}`);
      return res.body as { tokens: TokenJson[]; next: string | null };
    };
    const ids = (tokens: TokenJson[]) => tokens.map((x) => x.id).sort();

    await t.step("list: filters, default status active, visibility", async () => {
      const all = await list(inst.admin, "?limit=500");
      assert(all.tokens.every((x) => x.status === "active"), "default status is active");
      for (
        const m of [acmeTenant, otherTenant, webRead, webWrite, webClient, apiRead, otherRead]
      ) {
        assert(all.tokens.some((x) => x.id === m.token.id), `superadmin sees ${m.token.name}`);
      }
      assert(all.tokens.some((x) => x.type === "superadmin"), "superadmin sees superadmin tokens");
      // tenant filter
      const acmeOnly = await list(inst.admin, "?tenant=acme&limit=500");
      assert(acmeOnly.tokens.length >= 5);
      assert(acmeOnly.tokens.every((x) => x.tenant_slug === "acme"));
      // namespace filter
      const web = await list(inst.admin, "?tenant=acme&namespace=web");
      assertEquals(ids(web.tokens), ids([webRead.token, webWrite.token, webClient.token]));
      // type filter
      const reads = await list(inst.admin, "?tenant=acme&type=namespace-read");
      assertEquals(ids(reads.tokens), ids([webRead.token, apiRead.token]));
      const supers = await list(inst.admin, "?type=superadmin");
      assert(supers.tokens.length >= 1 && supers.tokens.every((x) => x.type === "superadmin"));
      // bad filters
      assertError(
        await inst.api("GET", "/api/v1/tokens?status=gone", inst.admin),
        400,
        "invalid_request",
      );
      assertError(
        await inst.api("GET", "/api/v1/tokens?type=admin", inst.admin),
        400,
        "invalid_request",
      );
      assertError(
        await inst.api("GET", "/api/v1/tokens?limit=abc", inst.admin),
        400,
        "invalid_request",
      );
      // a tenant-admin token sees only its tenant, and may not name another
      const mine = await list(acmeTenant.secret, "?limit=500");
      assertEquals(ids(mine.tokens), ids(acmeOnly.tokens));
      assertError(
        await inst.api("GET", "/api/v1/tokens?tenant=other", acmeTenant.secret),
        403,
        "forbidden",
      );
      // its tenant is implied: a namespace filter alone works
      const mineWeb = await list(acmeTenant.secret, "?namespace=web");
      assertEquals(ids(mineWeb.tokens), ids(web.tokens));
      // namespace-bound tokens cannot list tokens at all
      for (const m of [webRead, webWrite, webClient]) {
        assertError(await inst.api("GET", "/api/v1/tokens", m.secret), 403, "forbidden");
        assertError(
          await inst.api("GET", "/api/v1/tokens?tenant=acme&namespace=web", m.secret),
          403,
          "forbidden",
        );
      }
      // a human tenant admin of one tenant lists it without naming it
      assertEquals(ids((await list(h.tadmin.session)).tokens), ids(acmeOnly.tokens));
      // of several tenants must name one (400), and sees only those
      assertError(await inst.api("GET", "/api/v1/tokens", h.both.session), 400, "invalid_request");
      const bothOther = await list(h.both.session, "?tenant=other");
      assertEquals(ids(bothOther.tokens), ids([otherTenant.token, otherRead.token]));
      // a namespace admin sees the tokens of its namespace only
      const nsView = await list(h.nsadmin.session, "?tenant=acme");
      assertEquals(ids(nsView.tokens), ids(web.tokens));
      assertStatus(
        await inst.api("GET", `/api/v1/tokens/${webRead.token.id}`, h.nsadmin.session),
        200,
      );
      for (const m of [apiRead, acmeTenant]) {
        assertError(
          await inst.api("GET", `/api/v1/tokens/${m.token.id}`, h.nsadmin.session),
          403,
          "forbidden",
          `namespace admin reads ${m.token.name}`,
        );
      }
      // another tenant's token answers as an unknown one: its existence is not told
      assertError(
        await inst.api("GET", `/api/v1/tokens/${otherRead.token.id}`, h.nsadmin.session),
        404,
        "token_not_found",
        "namespace admin reads another tenant's token",
      );
      // namespace-bound tokens read themselves, never another token
      assertError(
        await inst.api("GET", `/api/v1/tokens/${webWrite.token.id}`, webRead.secret),
        403,
        "forbidden",
      );
      assertError(
        await inst.api("GET", "/api/v1/tokens/tok_NOPE", inst.admin),
        404,
        "token_not_found",
      );
      // Reading: "requires token.read for each returned token" filters per token, so
      // a human naming a tenant they have no role in gets an empty list, not a 403.
      assertEquals((await list(h.nsadmin.session, "?tenant=other")).tokens, []);
    });

    await t.step("list: pagination with limit and after", async () => {
      const full = await list(inst.admin, "?tenant=acme&limit=500");
      assertEquals(full.next, null);
      const seen: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page: { tokens: TokenJson[]; next: string | null } = await list(
          inst.admin,
          `?tenant=acme&limit=2${after === null ? "" : `&after=${after}`}`,
        );
        assert(page.tokens.length <= 2);
        seen.push(...page.tokens.map((x) => x.id));
        after = page.next;
        pages++;
      } while (after !== null && pages < 50);
      assertEquals(seen, full.tokens.map((x) => x.id), "pages concatenate to the full list");
      assertEquals(new Set(seen).size, seen.length, "no token twice");
      assert(pages >= 3);
    });

    await t.step("rotate: inherits, links both records, old stays active", async () => {
      const old = await mint(inst, inst.admin, {
        ...acme.write,
        name: "ci-deploy",
        description: "CI",
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      });
      const res = await inst.api("POST", `/api/v1/tokens/${old.token.id}/rotate`, h.tadmin.session);
      assertStatus(res, 201, "rotate by human tenant admin");
      const fresh = res.body.token;
      assertEquals(typeof res.body.secret, "string");
      assertEquals(res.body.request_id, res.headers.get("x-request-id"));
      assertNotEquals(res.body.secret, old.secret);
      assertEquals(res.body.secret.slice(0, 14), fresh.prefix);
      assert(res.body.secret.startsWith("svc_write_"));
      assertNotEquals(fresh.id, old.token.id);
      for (const f of ["type", "tenant_slug", "namespace_slug", "scopes", "name"]) {
        assertEquals(fresh[f], old.token[f], `inherits ${f}`);
      }
      const freshFull = await superGet(inst, fresh.id);
      assertEquals(freshFull.environment_slug, null);
      assertEquals(freshFull.description, "CI");
      assertEquals(freshFull.rotated_from_token_id, old.token.id);
      assertEquals(freshFull.created_by, h.tadmin.id);
      // expiry policy: the same lifetime, counted from the rotation
      const lifetime = (x: TokenJson) => Date.parse(x.expires_at) - Date.parse(x.created_at);
      assert(Math.abs(lifetime(freshFull) - lifetime(old.token)) < 1000, "same lifetime");
      assert(Date.parse(freshFull.expires_at) >= Date.parse(old.token.expires_at));
      const oldFull = await superGet(inst, old.token.id);
      assertEquals(oldFull.rotated_to_token_id, fresh.id);
      assertEquals(oldFull.status, "active");
      // both authenticate until the old one is revoked
      assertEquals(await authStatus(inst, old.secret, old.token.id), 200);
      assertEquals(await authStatus(inst, res.body.secret, fresh.id), 200);
      assertStatus(await inst.api("DELETE", `/api/v1/tokens/${old.token.id}`, inst.admin), 200);
      assertError(
        await inst.api("GET", `/api/v1/tokens/${old.token.id}`, old.secret),
        401,
        "unauthorized",
      );
      assertEquals(await authStatus(inst, res.body.secret, fresh.id), 200);
      // the secret is never shown again
      const again = await inst.api("GET", `/api/v1/tokens/${fresh.id}`, inst.admin);
      assertEquals(JSON.stringify(again.body).includes(res.body.secret), false);
    });

    await t.step("rotate: name and expires_at overrides; no expiry stays none", async () => {
      const old = await mint(inst, inst.admin, acme.read);
      const renamed = await inst.api(
        "POST",
        `/api/v1/tokens/${old.token.id}/rotate`,
        acmeTenant.secret,
        { name: "runtime-2", expires_at: "2100-01-01T00:00:00Z" },
      );
      assertStatus(renamed, 201, "rotate by tenant-admin token");
      assertEquals(renamed.body.token.name, "runtime-2");
      assertEquals(renamed.body.token.expires_at, "2100-01-01T00:00:00.000Z");
      assertEquals(renamed.body.token.type, "namespace-read");
      const plain = await mint(inst, inst.admin, acme.client);
      const r2 = await inst.api(
        "POST",
        `/api/v1/tokens/${plain.token.id}/rotate`,
        h.nsadmin.session,
        {},
      );
      assertStatus(r2, 201, "rotate by namespace admin");
      assertEquals(r2.body.token.expires_at, null);
      const r2full = await superGet(inst, r2.body.token.id);
      assertEquals(r2full.environment_slug, "staging");
      assertEquals(r2full.allowed_origins, plain.token.allowed_origins ?? []);
      assertError(
        await inst.api("POST", `/api/v1/tokens/${old.token.id}/rotate`, inst.admin, {
          expires_at: "soon",
        }),
        400,
        "invalid_request",
      );
    });

    await t.step("rotate: refused for namespace-bound tokens, other tenants, revoked", async () => {
      const target = await mint(inst, inst.admin, acme.read);
      for (const m of [webRead, webWrite, webClient]) {
        assertError(
          await inst.api("POST", `/api/v1/tokens/${target.token.id}/rotate`, m.secret),
          403,
          "forbidden",
          `${m.token.type} rotates another token`,
        );
      }
      // Reading: rotation needs permission to create the replacement type, and a
      // namespace-bound token cannot issue any token, so it cannot rotate itself.
      assertError(
        await inst.api("POST", `/api/v1/tokens/${webRead.token.id}/rotate`, webRead.secret),
        403,
        "forbidden",
      );
      // a tenant-admin token cannot mint tenant-admin, so it cannot rotate one (itself included)
      assertError(
        await inst.api("POST", `/api/v1/tokens/${acmeTenant.token.id}/rotate`, acmeTenant.secret),
        403,
        "forbidden",
      );
      assertError(
        await inst.api("POST", `/api/v1/tokens/${target.token.id}/rotate`, otherTenant.secret),
        404,
        "token_not_found",
      );
      assertError(
        await inst.api("POST", `/api/v1/tokens/${apiRead.token.id}/rotate`, h.nsadmin.session),
        403,
        "forbidden",
        "namespace admin of another namespace",
      );
      assertError(
        await inst.api("POST", "/api/v1/tokens/tok_NOPE/rotate", inst.admin),
        404,
        "token_not_found",
      );
      const list1 = await list(inst.admin, "?tenant=acme&namespace=web&limit=500");
      assert(list1.tokens.every((x) => x.rotated_from_token_id !== target.token.id));
      // a revoked token cannot be rotated (409, the implementation's choice: spec leaves it open)
      assertStatus(await inst.api("DELETE", `/api/v1/tokens/${target.token.id}`, inst.admin), 200);
      assertError(
        await inst.api("POST", `/api/v1/tokens/${target.token.id}/rotate`, inst.admin),
        409,
        "conflict",
      );
    });

    await t.step("revoke: immediate, self-revocation, revoked_at/by, refusals", async () => {
      const self = await mint(inst, inst.admin, acme.read);
      assertEquals(await authStatus(inst, self.secret, self.token.id), 200);
      const res = await inst.api("DELETE", `/api/v1/tokens/${self.token.id}`, self.secret);
      assertStatus(res, 200, "self-revocation");
      assertEquals(res.body.token.id, self.token.id);
      assertEquals(res.body.token.status, "revoked");
      assert(typeof res.body.token.revoked_at === "string");
      assertEquals(res.body.request_id, res.headers.get("x-request-id"));
      // the very next request is refused
      assertError(
        await inst.api("GET", `/api/v1/tokens/${self.token.id}`, self.secret),
        401,
        "unauthorized",
      );
      assertError(await inst.api("GET", "/api/v1/tenants", self.secret), 401, "unauthorized");
      const rec = await superGet(inst, self.token.id);
      assertEquals(rec.status, "revoked");
      assertEquals(rec.revoked_by, self.token.id);
      assertEquals(rec.revoked_at, res.body.token.revoked_at);
      // revoked records stay listable as history
      const revoked = await list(inst.admin, "?tenant=acme&status=revoked&limit=500");
      assert(revoked.tokens.some((x) => x.id === self.token.id));
      assert(revoked.tokens.every((x) => x.status === "revoked"));
      const active = await list(inst.admin, "?tenant=acme&limit=500");
      assert(!active.tokens.some((x) => x.id === self.token.id));

      // namespace-bound tokens cannot revoke other tokens; the target keeps working
      const victim = await mint(inst, inst.admin, acme.read);
      for (const m of [webRead, webWrite, webClient]) {
        assertError(
          await inst.api("DELETE", `/api/v1/tokens/${victim.token.id}`, m.secret),
          403,
          "forbidden",
          `${m.token.type} revokes another token`,
        );
      }
      assertError(
        await inst.api("DELETE", `/api/v1/tokens/${victim.token.id}`, otherTenant.secret),
        404,
        "token_not_found",
      );
      assertError(
        await inst.api("DELETE", `/api/v1/tokens/${victim.token.id}`, apiRead.secret),
        403,
        "forbidden",
        "namespace token of another namespace",
      );
      assertEquals(await authStatus(inst, victim.secret, victim.token.id), 200, "still works");
      assertEquals((await superGet(inst, victim.token.id)).status, "active");
    });

    await t.step("revoke: by human and token admins, unknown id", async () => {
      const a = await mint(inst, inst.admin, acme.read);
      const b = await mint(inst, inst.admin, acme.write);
      const c = await mint(inst, inst.admin, acme.client);
      const byUser = await inst.api("DELETE", `/api/v1/tokens/${a.token.id}`, h.nsadmin.session);
      assertStatus(byUser, 200, "namespace admin revokes");
      assertEquals((await superGet(inst, a.token.id)).revoked_by, h.nsadmin.id);
      assertStatus(
        await inst.api("DELETE", `/api/v1/tokens/${b.token.id}`, acmeTenant.secret),
        200,
      );
      assertEquals((await superGet(inst, b.token.id)).revoked_by, acmeTenant.token.id);
      assertStatus(await inst.api("DELETE", `/api/v1/tokens/${c.token.id}`, h.tadmin.session), 200);
      for (const m of [a, b, c]) {
        assertEquals(await authStatus(inst, m.secret, m.token.id), 401);
      }
      // a tenant-admin token cannot revoke a superadmin token nor one of another tenant
      assertError(
        await inst.api("DELETE", `/api/v1/tokens/${otherRead.token.id}`, acmeTenant.secret),
        404,
        "token_not_found",
      );
      assertError(
        await inst.api("DELETE", "/api/v1/tokens/tok_NOPE", inst.admin),
        404,
        "token_not_found",
      );
    });

    await t.step("expiry: 401 after expires_at, status expired, one token.expired", async () => {
      const expiresAt = new Date(Date.now() + 2000).toISOString();
      const soon = await mint(inst, acmeTenant.secret, { ...acme.read, expires_at: expiresAt });
      assertEquals(soon.token.expires_at, expiresAt);
      assertEquals(await authStatus(inst, soon.secret, soon.token.id), 200);
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 300);
      // several requests at once observe the expiry concurrently…
      const burst = await Promise.all(
        [1, 2, 3, 4, 5].map(() => inst.api("GET", `/api/v1/tokens/${soon.token.id}`, soon.secret)),
      );
      for (const res of burst) {
        assertError(res, 401, "unauthorized", "concurrent request after expiry");
      }
      // …and later ones too
      for (let i = 0; i < 4; i++) {
        assertError(
          await inst.api("GET", `/api/v1/tokens/${soon.token.id}`, soon.secret),
          401,
          "unauthorized",
          `request ${i} after expiry`,
        );
      }
      assertError(
        await inst.api("GET", "/api/v1/tenants/acme/namespaces/web/manifest", soon.secret),
        401,
        "unauthorized",
      );
      const rec = await superGet(inst, soon.token.id);
      assertEquals(rec.status, "expired");
      assertEquals(rec.revoked_at, null, "expiry is not revocation");
      const expired = await list(inst.admin, "?tenant=acme&status=expired");
      assert(expired.tokens.some((x) => x.id === soon.token.id));
      const entries = await allAudit(inst, inst.admin, `token_id=${soon.token.id}`);
      const exp = entries.filter((e) => e.type === "token.expired");
      assertEquals(exp.length, 1, "exactly one token.expired entry");
      assertEquals(exp[0].token_prefix, soon.token.prefix);
      assertEquals(exp[0].tenant_slug, "acme");
      assertEquals(exp[0].namespace_slug, "web");
      // an expired token cannot be revoked back to life or rotated
      assertError(
        await inst.api("POST", `/api/v1/tokens/${soon.token.id}/rotate`, inst.admin),
        409,
        "conflict",
      );
    });

    await t.step("deleting a namespace revokes every token bound to it", async () => {
      await createNamespace(inst, "acme", "tmp", acmeTenant.secret);
      await pushManifest(inst, acmeTenant.secret, "acme", "tmp", { live: true });
      const tmp = bodies("acme", "tmp", "live");
      const bound = [
        await mint(inst, acmeTenant.secret, tmp.read),
        await mint(inst, acmeTenant.secret, tmp.write),
        await mint(inst, acmeTenant.secret, tmp.client),
      ];
      for (const m of bound) assertEquals(await authStatus(inst, m.secret, m.token.id), 200);
      const del = await inst.api(
        "DELETE",
        "/api/v1/tenants/acme/namespaces/tmp",
        acmeTenant.secret,
      );
      assertStatus(del, 200, "delete namespace");
      assertEquals([...del.body.revoked_tokens].sort(), ids(bound.map((m) => m.token)));
      for (const m of bound) {
        assertError(
          await inst.api("GET", `/api/v1/tokens/${m.token.id}`, m.secret),
          401,
          "unauthorized",
        );
        const rec = await superGet(inst, m.token.id);
        assertEquals(rec.status, "revoked");
        assertEquals(rec.revoked_by, acmeTenant.token.id);
      }
      // tokens bound elsewhere are untouched
      assertEquals(await authStatus(inst, acmeTenant.secret, acmeTenant.token.id), 200);
      assertEquals(await authStatus(inst, webRead.secret, webRead.token.id), 200);
      const revokedEntries = await allAudit(inst, inst.admin, "tenant=acme&type=token.revoked");
      for (const m of bound) {
        assert(revokedEntries.some((e) => e.token_id === m.token.id), "token.revoked audited");
      }
    });

    await t.step(
      "deleting a tenant revokes every token bound to it and its namespaces",
      async () => {
        await createTenant(inst, "doomed");
        await createNamespace(inst, "doomed", "a");
        await createNamespace(inst, "doomed", "b");
        await pushManifest(inst, inst.admin, "doomed", "a", { live: true });
        const d = bodies("doomed", "a", "live");
        const bound = [
          await mint(inst, inst.admin, d.tenant),
          await mint(inst, inst.admin, d.read),
          await mint(inst, inst.admin, d.write),
          await mint(inst, inst.admin, d.client),
          await mint(inst, inst.admin, { ...d.read, namespace_slug: "b" }),
        ];
        for (const m of bound) assertEquals(await authStatus(inst, m.secret, m.token.id), 200);
        // only a superadmin deletes tenants
        assertError(
          await inst.api("DELETE", "/api/v1/tenants/doomed", bound[0]!.secret),
          403,
          "forbidden",
        );
        const del = await inst.api("DELETE", "/api/v1/tenants/doomed", inst.admin);
        assertStatus(del, 200, "delete tenant");
        assertEquals(
          [...new Set(del.body.revoked_tokens as string[])].sort(),
          ids(bound.map((m) => m.token)),
        );
        for (const m of bound) {
          assertError(
            await inst.api("GET", `/api/v1/tokens/${m.token.id}`, m.secret),
            401,
            "unauthorized",
          );
          assertEquals((await superGet(inst, m.token.id)).status, "revoked");
        }
        assertEquals(await authStatus(inst, acmeTenant.secret, acmeTenant.token.id), 200);
        assertEquals(await authStatus(inst, otherRead.secret, otherRead.token.id), 200);
      },
    );

    await t.step("last_used_at: set on success, not rewritten within the minute", async () => {
      const m = await mint(inst, inst.admin, acme.read);
      assertEquals((await superGet(inst, m.token.id)).last_used_at, null);
      assertEquals(await authStatus(inst, m.secret, m.token.id), 200);
      const first = (await superGet(inst, m.token.id)).last_used_at;
      assert(typeof first === "string" && !Number.isNaN(Date.parse(first)));
      await sleep(20);
      assertEquals(await authStatus(inst, m.secret, m.token.id), 200);
      assertStatus(
        await inst.api("GET", "/api/v1/tenants/acme/namespaces/web/manifest", m.secret, undefined, {
          accept: "application/json",
        }),
        200,
      );
      assertEquals((await superGet(inst, m.token.id)).last_used_at, first, "same value");
      // a failed authentication (wrong environment gate, revoked…) never sets it
      const unused = await mint(inst, inst.admin, acme.read);
      assertError(
        await inst.api("GET", "/api/v1/tokens", tamper(unused.secret)),
        401,
        "unauthorized",
      );
      assertEquals((await superGet(inst, unused.token.id)).last_used_at, null);
    });
  } finally {
    await inst.close();
  }
});
