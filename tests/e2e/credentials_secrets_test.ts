/**
 * End-to-end: bearer authentication failures, the audit trail of token
 * lifecycle events, secrets never stored or shown after issuance, and bad
 * request bodies, through the real server process (docs/api.md
 * "Tokens" and "Audit").
 */
import { base58 } from "base";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { type ApiResponse, startInstallation } from "./installation.ts";
import {
  addNamespaceAdmin,
  addTenantAdmin,
  allAudit,
  assertError,
  assertStatus,
  bodies,
  createHumans,
  createNamespace,
  createTenant,
  mint,
  type Minted,
  pushManifest,
  sleep,
  superGet,
} from "./credentials_fixture.ts";

Deno.test("e2e credentials: authentication, audit, secrets, bad bodies", async (t) => {
  const inst = await startInstallation();
  /** Every secret handed out during the test, to search for afterwards. */
  const secrets: string[] = [inst.admin];
  const keep = (m: Minted) => {
    secrets.push(m.secret);
    return m;
  };
  /** Every response body of the test (except create/rotate, which carry the secret). */
  const shown: string[] = [];
  const seen = (res: ApiResponse) => {
    shown.push(typeof res.body === "string" ? res.body : JSON.stringify(res.body));
    return res;
  };
  try {
    await createTenant(inst, "acme");
    await createTenant(inst, "other");
    await createNamespace(inst, "acme", "web");
    await createNamespace(inst, "other", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { production: false, staging: true });
    const h = await createHumans(inst, {
      tadmin: "tadmin@acme.test",
      nsadmin: "nsadmin@acme.test",
      nobody: "nobody@acme.test",
    });
    secrets.push(h.tadmin.session, h.nsadmin.session, h.nobody.session);
    await addTenantAdmin(inst, "acme", h.tadmin.id);
    await addNamespaceAdmin(inst, "acme", "web", h.nsadmin.id);
    const acme = bodies("acme", "web", "staging");
    // started first: it expires while the other steps run
    const expiresAt = new Date(Date.now() + 2500).toISOString();
    const shortLived = keep(await mint(inst, inst.admin, { ...acme.read, expires_at: expiresAt }));
    const acmeTenant = keep(await mint(inst, inst.admin, acme.tenant));
    const otherTenant = keep(await mint(inst, inst.admin, bodies("other", "web", "x").tenant));
    const webRead = keep(await mint(inst, inst.admin, acme.read));
    const webWrite = keep(await mint(inst, inst.admin, acme.write));
    const webClient = keep(await mint(inst, inst.admin, acme.client));

    await t.step("missing, malformed or unknown bearer → 401 unauthorized", async () => {
      const unknownToken = `svc_read_${base58.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
      const unknownSession = `ses_${base58.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
      const cases: [string, Record<string, string>][] = [
        ["no Authorization header", {}],
        ["empty header", { authorization: "" }],
        ["Basic scheme", { authorization: `Basic ${btoa("a:b")}` }],
        ["Bearer without credential", { authorization: "Bearer" }],
        ["Bearer with two words", { authorization: `Bearer ${webRead.secret} extra` }],
        ["token without svc_ prefix", { authorization: "Bearer abc123" }],
        ["unknown type word", { authorization: `Bearer svc_root_${unknownToken.slice(9)}` }],
        ["payload not base58", { authorization: "Bearer svc_read_0OIl0OIl" }],
        ["payload of 16 bytes", {
          authorization: `Bearer svc_read_${base58.encode(new Uint8Array(16).fill(7))}`,
        }],
        ["type word mismatch", { authorization: `Bearer svc_write_${webRead.secret.slice(9)}` }],
        ["unknown well-formed token", { authorization: `Bearer ${unknownToken}` }],
        ["truncated real token", { authorization: `Bearer ${webRead.secret.slice(0, -3)}` }],
        ["unknown session", { authorization: `Bearer ${unknownSession}` }],
      ];
      for (const path of ["/api/v1/tokens", "/api/v1/tenants/acme/namespaces/web/manifest"]) {
        for (const [what, headers] of cases) {
          const res = seen(await inst.api("GET", path, null, undefined, headers));
          assertError(res, 401, "unauthorized", `${what} on ${path}`);
        }
      }
      // 401 comes before any routing or body handling
      assertError(
        await inst.api("POST", "/api/v1/tokens", null, { ...acme.read, name: "x" }),
        401,
        "unauthorized",
      );
      assertError(
        await inst.api("DELETE", `/api/v1/tokens/${webRead.token.id}`, null),
        401,
        "unauthorized",
      );
      assertEquals((await superGet(inst, webRead.token.id)).status, "active");
      // the scheme name is case-insensitive (RFC 7235)
      assertStatus(
        await inst.api("GET", `/api/v1/tokens/${webRead.token.id}`, null, undefined, {
          authorization: `bearer ${webRead.secret}`,
        }),
        200,
      );
    });

    await t.step("rotate and revoke to fill the audit trail", async () => {
      const res = await inst.api(
        "POST",
        `/api/v1/tokens/${webWrite.token.id}/rotate`,
        h.tadmin.session,
      );
      assertStatus(res, 201);
      secrets.push(res.body.secret);
      const rotated = res.body.token;
      assertStatus(await inst.api("GET", `/api/v1/tokens/${rotated.id}`, res.body.secret), 200);
      assertStatus(
        seen(await inst.api("DELETE", `/api/v1/tokens/${webWrite.token.id}`, acmeTenant.secret)),
        200,
      );
      // the namespace admin mints one too (token.created with a user actor)
      keep(await mint(inst, h.nsadmin.session, acme.read));
      const created = await allAudit(inst, inst.admin, `token_id=${rotated.id}`);
      const rot = created.find((e) => e.type === "token.rotated");
      assert(rot, "token.rotated entry");
      assertEquals(rot.actor_id, h.tadmin.id);
      assertEquals(rot.principal_type, "user");
      assertEquals(rot.request_id, res.body.request_id);
      assertEquals(rot.details.rotated_from_token_id, webWrite.token.id);
      assertEquals(rot.token_prefix, rotated.prefix);
    });

    await t.step("audit: every lifecycle event with its fields", async () => {
      // wait until the short-lived token is past its expiry, then use it twice
      await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 200);
      for (let i = 0; i < 3; i++) {
        assertError(
          seen(await inst.api("GET", `/api/v1/tokens/${shortLived.token.id}`, shortLived.secret)),
          401,
          "unauthorized",
        );
      }
      const entries =
        seen(await inst.api("GET", "/api/v1/audit?limit=500", inst.admin)).body.entries;
      const types = new Set(entries.map((e: { type: string }) => e.type));
      for (
        const type of [
          "token.created",
          "token.rotated",
          "token.revoked",
          "token.expired",
          "token.authenticated",
        ]
      ) {
        assert(types.has(type), `audit has ${type}`);
      }
      // newest first
      const stamps = entries.map((e: { timestamp: string }) => Date.parse(e.timestamp));
      for (let i = 1; i < stamps.length; i++) assert(stamps[i - 1] >= stamps[i], "newest first");
      for (const e of entries) {
        if (!String(e.type).startsWith("token.")) continue;
        assertMatch(e.token_id, /^tok_/);
        assertEquals(typeof e.token_prefix, "string");
        assertEquals(e.token_prefix.length, 14);
        assert(
          ["namespace-read", "namespace-write", "namespace-client", "tenant-admin", "superadmin"]
            .includes(e.token_type),
        );
        assert("tenant_slug" in e && "namespace_slug" in e, "binding fields");
        assertEquals(typeof e.actor_id, "string");
        assert(!Number.isNaN(Date.parse(e.timestamp)) && /Z$/.test(e.timestamp));
        assert("request_id" in e);
        assertEquals(e.result, "success");
        assert(["user", "service", "client", "system"].includes(e.principal_type));
      }
      // token.created for the tenant-admin token: actor = bootstrap superadmin, request id of the create
      const bootId = (await inst.api("GET", "/api/v1/tokens?type=superadmin", inst.admin)).body
        .tokens.at(-1).id;
      const created = entries.find((e: { type: string; token_id: string }) =>
        e.type === "token.created" && e.token_id === acmeTenant.token.id
      );
      assertEquals(created.actor_id, bootId);
      assertEquals(created.principal_type, "service");
      assertEquals(created.token_prefix, acmeTenant.token.prefix);
      assertEquals(created.token_type, "tenant-admin");
      assertEquals(created.tenant_slug, "acme");
      assertEquals(created.namespace_slug, null);
      assertEquals(typeof created.request_id, "string");
      // token.revoked: actor = the tenant-admin token
      const revoked = entries.find((e: { type: string; token_id: string }) =>
        e.type === "token.revoked" && e.token_id === webWrite.token.id
      );
      assertEquals(revoked.actor_id, acmeTenant.token.id);
      assertEquals(revoked.namespace_slug, "web");
      // token.expired: exactly one, by the system, although used three times
      const expired = entries.filter((e: { type: string; token_id: string }) =>
        e.type === "token.expired" && e.token_id === shortLived.token.id
      );
      assertEquals(expired.length, 1);
      assertEquals(expired[0].principal_type, "system");
      assertEquals(expired[0].tenant_slug, "acme");
      // token.authenticated: actor is the token itself
      const authd = entries.find((e: { type: string; token_id: string }) =>
        e.type === "token.authenticated" && e.token_id === webRead.token.id
      );
      assertEquals(authd.actor_id, webRead.token.id);
      assertEquals(authd.principal_type, "service");
      // the bootstrap superadmin's creation is an installation-level entry
      const boot = entries.find((e: { type: string; token_id: string }) =>
        e.type === "token.created" && e.token_id === bootId
      );
      assertEquals(boot.actor_id, "bootstrap");
      assertEquals(boot.tenant_slug, null);
      // filters
      const onlyExpired = await allAudit(inst, inst.admin, "type=token.expired");
      assert(onlyExpired.length >= 1 && onlyExpired.every((e) => e.type === "token.expired"));
      const onlyWeb = await allAudit(inst, inst.admin, "tenant=acme&namespace=web");
      assert(onlyWeb.length >= 1 && onlyWeb.every((e) => e.namespace_slug === "web"));
      // pagination
      const p1 = await inst.api("GET", "/api/v1/audit?limit=3", inst.admin);
      assertEquals(p1.body.entries.length, 3);
      const p2 = await inst.api("GET", `/api/v1/audit?limit=3&after=${p1.body.next}`, inst.admin);
      const six = await inst.api("GET", "/api/v1/audit?limit=6", inst.admin);
      assertEquals(
        [...p1.body.entries, ...p2.body.entries].map((e: { id: string }) => e.id),
        six.body.entries.map((e: { id: string }) => e.id),
      );
    });

    await t.step(
      "audit access: tenant admins for their tenant; namespace tokens never",
      async () => {
        const mine = await allAudit(inst, acmeTenant.secret);
        assert(mine.length > 0);
        assert(mine.every((e) => e.tenant_slug === "acme"), "tenant-admin token sees only acme");
        const explicit = await allAudit(inst, acmeTenant.secret, "tenant=acme");
        assertEquals(explicit.length, mine.length);
        assertError(
          await inst.api("GET", "/api/v1/audit?tenant=other", acmeTenant.secret),
          403,
          "forbidden",
        );
        assert((await allAudit(inst, otherTenant.secret)).every((e) => e.tenant_slug === "other"));
        const human = await allAudit(inst, h.tadmin.session);
        assert(human.length > 0 && human.every((e) => e.tenant_slug === "acme"));
        assertError(
          await inst.api("GET", "/api/v1/audit?tenant=other", h.tadmin.session),
          403,
          "forbidden",
        );
        for (
          const [who, cred] of [
            ["namespace-read", webRead.secret],
            ["namespace-client", webClient.secret],
            ["namespace admin (human)", h.nsadmin.session],
            ["user without roles", h.nobody.session],
          ]
        ) {
          assertError(await inst.api("GET", "/api/v1/audit", cred!), 403, "forbidden", who);
          assertError(
            await inst.api("GET", "/api/v1/audit?tenant=acme", cred!),
            403,
            "forbidden",
            who,
          );
        }
      },
    );

    await t.step("bad bodies: 400 / 413 and the token list unchanged", async () => {
      const snapshot = async () => {
        const out: string[] = [];
        for (const status of ["active", "revoked", "expired"]) {
          const res = await inst.api(
            "GET",
            `/api/v1/tokens?status=${status}&limit=500`,
            inst.admin,
          );
          out.push(
            ...res.body.tokens.map((x: { id: string; status: string }) => `${x.id}:${x.status}`),
          );
        }
        return out.sort();
      };
      const before = await snapshot();
      const json = { "content-type": "application/json" };
      const victim = webRead.token.id;
      const raw: [string, string, string][] = [
        ["POST", "/api/v1/tokens", "{not json"],
        ["POST", "/api/v1/tokens", ""],
        ["POST", "/api/v1/tokens", JSON.stringify([acme.read])],
        ["POST", "/api/v1/tokens", "null"],
        ["POST", "/api/v1/tokens", '"namespace-read"'],
        ["POST", "/api/v1/tokens", "42"],
        ["POST", `/api/v1/tokens/${victim}/rotate`, "{not json"],
        ["POST", `/api/v1/tokens/${victim}/rotate`, "[]"],
      ];
      for (const [method, path, body] of raw) {
        const res = await inst.api(method, path, inst.admin, body, json);
        assertError(res, 400, "invalid_request", `${path} ${JSON.stringify(body)}`);
      }
      const wrongTypes: Record<string, unknown>[] = [
        { ...acme.read, name: 5 },
        { ...acme.read, name: "" },
        { ...acme.read, name: "x".repeat(101) },
        { ...acme.read, type: 7 },
        { ...acme.read, type: ["namespace-read"] },
        { ...acme.read, tenant_slug: 1 },
        { ...acme.read, namespace_slug: { slug: "web" } },
        { ...acme.read, description: 3 },
        { ...acme.read, expires_at: 1893456000 },
        { ...acme.read, scopes: "none" },
        { ...acme.client, allowed_origins: "https://a.example" },
        { ...acme.client, allowed_origins: [42] },
        { ...acme.client, environment_slug: true },
      ];
      for (const body of wrongTypes) {
        const res = await inst.api("POST", "/api/v1/tokens", inst.admin, {
          name: "typed",
          ...body,
        });
        assertError(res, 400, "invalid_request", JSON.stringify(body));
      }
      for (const body of [{ name: 5 }, { expires_at: 5 }, { expires_at: "later" }, { name: "" }]) {
        const res = await inst.api("POST", `/api/v1/tokens/${victim}/rotate`, inst.admin, body);
        assertError(res, 400, "invalid_request", `rotate ${JSON.stringify(body)}`);
      }
      // > 1 MiB: with a Content-Length …
      const huge = JSON.stringify({
        ...acme.read,
        name: "big",
        description: "x".repeat(1024 * 1024 + 10),
      });
      assertError(
        await inst.api("POST", "/api/v1/tokens", inst.admin, huge, json),
        413,
        "payload_too_large",
      );
      assertError(
        await inst.api("POST", `/api/v1/tokens/${victim}/rotate`, inst.admin, huge, json),
        413,
        "payload_too_large",
      );
      // … and streamed without one (chunked)
      const bytes = new TextEncoder().encode(huge);
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) {
            c.enqueue(bytes.slice(i, i + 64 * 1024));
          }
          c.close();
        },
      });
      const res = await fetch(`${inst.url}/api/v1/tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${inst.admin}`, "content-type": "application/json" },
        body: stream,
      });
      assertEquals(res.status, 413);
      assertEquals((await res.json()).code, "payload_too_large");
      assertEquals(await snapshot(), before, "no token created, rotated or revoked");
      // the rotated token was not marked as rotated either
      assertEquals((await superGet(inst, victim)).rotated_to_token_id, null);
    });

    await t.step("last_used_at: not rewritten within the minute", async () => {
      const m = keep(await mint(inst, inst.admin, acme.read));
      assertStatus(await inst.api("GET", `/api/v1/tokens/${m.token.id}`, m.secret), 200);
      const first = (await superGet(inst, m.token.id)).last_used_at;
      assert(first !== null);
      assertStatus(await inst.api("GET", `/api/v1/tokens/${m.token.id}`, m.secret), 200);
      assertEquals((await superGet(inst, m.token.id)).last_used_at, first);
      const auths = await allAudit(
        inst,
        inst.admin,
        `token_id=${m.token.id}&type=token.authenticated`,
      );
      assertEquals(auths.length, 1, "token.authenticated is rate-limited with last_used_at");
    });

    await t.step("no secret anywhere: responses, audit, logs, KV file", async () => {
      // collect every GET/list response once more
      seen(await inst.api("GET", "/api/v1/tokens?limit=500", inst.admin));
      for (const status of ["revoked", "expired"]) {
        seen(await inst.api("GET", `/api/v1/tokens?status=${status}&limit=500`, inst.admin));
      }
      const everything =
        seen(await inst.api("GET", "/api/v1/tokens?limit=500", inst.admin)).body.tokens;
      for (const tok of everything) {
        seen(await inst.api("GET", `/api/v1/tokens/${tok.id}`, inst.admin));
      }
      seen(await inst.api("GET", "/api/v1/tokens?tenant=acme&limit=500", acmeTenant.secret));
      seen(await inst.api("GET", "/api/v1/tokens?tenant=acme", h.tadmin.session));
      const audit = await allAudit(inst, inst.admin);
      shown.push(JSON.stringify(audit));
      assert(audit.length > 10);

      const logs = await inst.server.logsSettled();
      assert(logs.length > 0, "the server logged requests");
      const dec = new TextDecoder("latin1");
      const files: Record<string, string> = {};
      for await (const entry of Deno.readDir(inst.dir)) {
        if (entry.isFile && entry.name.startsWith("kv.sqlite3")) {
          files[entry.name] = dec.decode(await Deno.readFile(`${inst.dir}/${entry.name}`));
        }
      }
      assert("kv.sqlite3" in files, "the KV file exists");
      // positive control: the public prefix IS stored, so the search can find strings
      const kvText = Object.values(files).join("\n");
      assert(kvText.includes(webRead.token.prefix), "prefixes are found in the KV bytes");

      assert(secrets.length >= 10);
      for (const secret of secrets) {
        const payload = secret.slice(secret.lastIndexOf("_") + 1);
        assert(payload.length >= 40, `payload of ${secret.slice(0, 14)}`);
        for (const needle of [secret, payload]) {
          const label = `${secret.slice(0, 14)}… (${needle === secret ? "full" : "payload"})`;
          for (const body of shown) assert(!body.includes(needle), `${label} in a response`);
          assert(!logs.includes(needle), `${label} in the server logs`);
          for (const [name, text] of Object.entries(files)) {
            assert(!text.includes(needle), `${label} in ${name}`);
          }
        }
      }
    });
  } finally {
    await inst.close();
  }
});
