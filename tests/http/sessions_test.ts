/**
 * `/api/v1/me`, `/api/v1/sessions` and `/api/v1/users/{id}/sessions`, with
 * the browser cookie and its CSRF rule (lib/http/sessions.ts,
 * lib/http/authn.ts): people see and end their own sessions, admins of the
 * user's tenant end theirs, everyone else is refused; a change made with
 * the cookie needs the page's CSRF token from the service's own origin.
 */
import { assert, assertEquals } from "../assert.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { OIDC_POLICY, ORIGIN, signInTest } from "./auth/world.ts";

/** The JSON of a `/me` answer, read loosely. */
// deno-lint-ignore no-explicit-any
type Loose = Record<string, any>;

signInTest("GET /api/v1/me names the signed-in person, their tenants and roles", async (w) => {
  const ana = await w.person("ana@acme.test", "acme");
  const me = await w.json("GET", "/api/v1/me", { bearer: ana.secret });
  assertEquals(me.status, 200);
  const p = me.body.principal as Loose;
  assertEquals(p.type, "user");
  assertEquals(p.user.email, "ana@acme.test");
  assertEquals(p.session.id, ana.session_id);
  assertEquals(p.session.login_method, "oidc");
  assertEquals(p.tenants, [{ slug: "acme", role: "member" }]);
  assert(!("digest" in p.session), "no digest leaves the server");
  assertEquals(me.body.csrf_token, undefined, "a bearer caller gets no CSRF token");
  const viaCookie = await w.json("GET", "/api/v1/me", { cookie: ana.cookie });
  assertEquals(viaCookie.body.csrf_token, ana.csrf);
  const token = await w.json("GET", "/api/v1/me", { bearer: w.admin });
  assertEquals((token.body.principal as Loose).type, "service");
  assertEquals((token.body.principal as Loose).token.type, "superadmin");
});

signInTest(
  "an admitted person reads their tenant and nothing else, and cannot change it",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    assertEquals((await w.call("GET", "/api/v1/tenants/acme", { bearer: ana.secret })).status, 200);
    assertEquals(
      (await w.call("GET", "/api/v1/tenants/other", { bearer: ana.secret })).status,
      403,
    );
    const list = await w.json("GET", "/api/v1/tenants", { bearer: ana.secret });
    assertEquals((list.body.tenants as { slug: string }[]).map((t) => t.slug), ["acme"]);
    const ns = await w.json("POST", "/api/v1/tenants/acme/namespaces", {
      bearer: ana.secret,
      body: { slug: "web" },
    });
    assertEquals([ns.status, ns.body.code], [403, "forbidden"]);
    const issue = await w.json("POST", "/api/v1/tokens", {
      bearer: ana.secret,
      body: { type: "tenant-admin", name: "x", tenant_slug: "acme" },
    });
    assertEquals(issue.status, 403);
    assertEquals(
      (await w.call("GET", "/api/v1/audit?tenant=acme", { bearer: ana.secret })).status,
      200,
    );
  },
);

signInTest(
  "a member of an admin group is a tenant admin only while the policy says so",
  async (w) => {
    await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: { ...OIDC_POLICY, admin_groups: ["flag-admins"] },
    });
    const bo = await w.person("bo@acme.test", "acme", ["flag-admins"]);
    const create = () =>
      w.json("POST", "/api/v1/tenants/acme/namespaces", {
        bearer: bo.secret,
        body: { slug: `ns${crypto.randomUUID().slice(0, 6)}` },
      });
    assertEquals((await create()).status, 201);
    await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: OIDC_POLICY,
    });
    assertEquals(
      (await create()).status,
      403,
      "the group no longer maps to admin: refused at once",
    );
  },
);

signInTest("removing a tenant admin takes effect on the very next request", async (w) => {
  const cy = await w.person("cy@acme.test", "acme");
  const add = await w.json("POST", "/api/v1/tenants/acme/admins", {
    bearer: w.admin,
    body: { user_id: cy.user_id },
  });
  assertEquals(add.status, 201);
  const create = (slug: string) =>
    w.call("POST", "/api/v1/tenants/acme/namespaces", { bearer: cy.secret, body: { slug } });
  assertEquals((await create("one")).status, 201);
  assertEquals(
    (await w.call("DELETE", `/api/v1/tenants/acme/admins/${cy.user_id}`, { bearer: w.admin }))
      .status,
    200,
  );
  assertEquals((await create("two")).status, 403);
  assertEquals((await w.call("GET", "/api/v1/tenants/acme", { bearer: cy.secret })).status, 200);
});

signInTest(
  "a tenant deleted and made again does not admit the sessions of the old one",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    assertEquals((await w.call("DELETE", "/api/v1/tenants/acme", { bearer: w.admin })).status, 200);
    w.advance(1000);
    assertEquals(
      (await w.call("POST", "/api/v1/tenants", { bearer: w.admin, body: { slug: "acme" } })).status,
      201,
    );
    assertEquals((await w.call("GET", "/api/v1/tenants/acme", { bearer: ana.secret })).status, 403);
  },
);

signInTest(
  "people list and end their own sessions; an ended session is refused at once",
  async (w) => {
    const one = await w.person("ana@acme.test", "acme");
    const two = await w.person("ana@acme.test", "acme");
    const list = await w.json("GET", "/api/v1/sessions", { bearer: one.secret });
    assertEquals(list.status, 200);
    const sessions = list.body.sessions as { id: string; current: boolean }[];
    assertEquals(sessions.map((s) => [s.id, s.current]), [
      [one.session_id, true],
      [two.session_id, false],
    ]);
    const end = await w.json("DELETE", `/api/v1/sessions/${two.session_id}`, {
      bearer: one.secret,
    });
    assertEquals([end.status, (end.body.session as { status: string }).status], [200, "revoked"]);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: two.secret })).status, 401);
    const audit = await listAudit(w.kv, { tenant: "acme", type: "session.revoked" });
    assertEquals(audit.items.length, 1);
    assertEquals(audit.items[0]!.details.session_id, two.session_id);
    const tokens = await w.json("GET", "/api/v1/sessions", { bearer: w.admin });
    assertEquals(tokens.status, 403, "service tokens have no sessions");
  },
);

signInTest(
  "another person's session cannot be seen or ended without admin rights over them",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    const eve = await w.person("eve@other.test", "other");
    const probe = await w.json("DELETE", `/api/v1/sessions/${ana.session_id}`, {
      bearer: eve.secret,
    });
    assertEquals([probe.status, probe.body.code], [404, "session_not_found"]);
    const all = await w.json("DELETE", `/api/v1/users/${ana.user_id}/sessions`, {
      bearer: eve.secret,
    });
    assertEquals(all.status, 403);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: ana.secret })).status, 200);
  },
);

signInTest(
  "a tenant admin or a superadmin ends every session of a user of their tenant",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    const ana2 = await w.person("ana@acme.test", "acme");
    const boss = await w.person("boss@acme.test", "acme");
    await w.json("POST", "/api/v1/tenants/acme/admins", {
      bearer: w.admin,
      body: { user_id: boss.user_id },
    });
    const ended = await w.json("DELETE", `/api/v1/users/${ana.user_id}/sessions`, {
      bearer: boss.secret,
    });
    assertEquals(ended.status, 200);
    assertEquals(
      (ended.body.revoked_sessions as string[]).sort(),
      [ana.session_id, ana2.session_id].sort(),
    );
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: ana.secret })).status, 401);
    assertEquals((await w.call("GET", "/api/v1/me", { bearer: ana2.secret })).status, 401);
    const other = await w.person("zed@other.test", "other");
    const bySuper = await w.json("DELETE", `/api/v1/users/${other.user_id}/sessions`, {
      bearer: w.admin,
    });
    assertEquals(bySuper.body.revoked_sessions as string[], [other.session_id]);
  },
);

signInTest(
  "a change made with the session cookie needs the CSRF token and the own origin",
  async (w) => {
    const boss = await w.person("boss@acme.test", "acme");
    await w.json("POST", "/api/v1/tenants/acme/admins", {
      bearer: w.admin,
      body: { user_id: boss.user_id },
    });
    const post = (headers: Record<string, string>, slug: string) =>
      w.json("POST", "/api/v1/tenants/acme/namespaces", {
        cookie: boss.cookie,
        headers,
        body: { slug },
      });
    const noToken = await post({ origin: ORIGIN }, "a");
    assertEquals([noToken.status, (noToken.body.details as { reason: string }).reason], [
      403,
      "csrf",
    ]);
    const crossSite = await post({ origin: "https://evil.test", "x-csrf-token": boss.csrf }, "b");
    assertEquals(crossSite.status, 403);
    const wrongToken = await post({ origin: ORIGIN, "x-csrf-token": "0".repeat(40) }, "c");
    assertEquals(wrongToken.status, 403);
    const ok = await post({ origin: ORIGIN, "x-csrf-token": boss.csrf }, "d");
    assertEquals(ok.status, 201);
    const read = await w.call("GET", "/api/v1/tenants/acme/namespaces", { cookie: boss.cookie });
    assertEquals(read.status, 200, "reads need no CSRF token");
    const names = (await w.json("GET", "/api/v1/tenants/acme/namespaces", { bearer: w.admin })).body
      .namespaces as { slug: string }[];
    assertEquals(names.map((n) => n.slug), ["d"], "no refused request changed anything");
  },
);

signInTest(
  "a sign-in to one tenant carries no admin rights in another, even for the same email",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    // the same person is an admin of other, through the admin list
    await w.json("POST", "/api/v1/tenants/other/admins", {
      bearer: w.admin,
      body: { user_id: ana.user_id },
    });
    assertEquals(
      (await w.call("GET", "/api/v1/tenants/other", { bearer: ana.secret })).status,
      403,
    );
    const policy = await w.call("PUT", "/api/v1/tenants/other/login", {
      bearer: ana.secret,
      body: { method: "email", domains: ["acme.test"] },
    });
    assertEquals(policy.status, 403);
    const me = await w.json("GET", "/api/v1/me", { bearer: ana.secret });
    assertEquals((me.body.principal as Loose).tenants, [{ slug: "acme", role: "member" }]);
    const viaOther = await w.person("ana@acme.test", "other");
    assertEquals(
      (await w.call("GET", "/api/v1/tenants/other", { bearer: viaOther.secret })).status,
      200,
    );
    const own = await w.json("GET", "/api/v1/sessions", { bearer: ana.secret });
    assertEquals(
      (own.body.sessions as { id: string }[]).map((s) => s.id),
      [ana.session_id],
      "a session of acme does not see the person's sessions of other",
    );
  },
);

signInTest("an admin of one tenant ends a person's sessions of that tenant only", async (w) => {
  const boss = await w.person("boss@acme.test", "acme");
  await w.json("POST", "/api/v1/tenants/acme/admins", {
    bearer: w.admin,
    body: { user_id: boss.user_id },
  });
  const inAcme = await w.person("cy@both.test", "acme");
  const inOther = await w.person("cy@both.test", "other");
  const ended = await w.json("DELETE", `/api/v1/users/${inAcme.user_id}/sessions`, {
    bearer: boss.secret,
  });
  assertEquals(ended.body.revoked_sessions, [inAcme.session_id]);
  assertEquals((await w.call("GET", "/api/v1/me", { bearer: inOther.secret })).status, 200);
  const one = await w.json("DELETE", `/api/v1/sessions/${inOther.session_id}`, {
    bearer: boss.secret,
  });
  assertEquals(one.status, 404);
});

signInTest(
  "the user list of a signed-in admin covers the tenant of the sign-in only",
  async (w) => {
    const ana = await w.person("ana@acme.test", "acme");
    for (const tenant of ["acme", "other"]) {
      await w.json("POST", `/api/v1/tenants/${tenant}/admins`, {
        bearer: w.admin,
        body: { user_id: ana.user_id },
      });
    }
    const eve = await w.person("eve@other.test", "other");
    await w.json("POST", "/api/v1/tenants/other/admins", {
      bearer: w.admin,
      body: { user_id: eve.user_id },
    });
    const list = await w.json("GET", "/api/v1/users", { bearer: ana.secret });
    assertEquals(list.status, 200);
    const emails = (list.body.users as { email: string }[]).map((u) => u.email);
    assertEquals(emails, ["ana@acme.test"], "other's members stay hidden from a sign-in to acme");
  },
);

signInTest(
  "an admin through the policy's admin_groups lists the tenant's users without naming it",
  async (w) => {
    await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: { ...OIDC_POLICY, admin_groups: ["flag-admins"] },
    });
    const bo = await w.person("bo@acme.test", "acme", ["flag-admins"]);
    const list = await w.json("GET", "/api/v1/users", { bearer: bo.secret });
    assertEquals(list.status, 200, JSON.stringify(list.body));
    const member = await w.person("cy@acme.test", "acme");
    assertEquals((await w.call("GET", "/api/v1/users", { bearer: member.secret })).status, 403);
  },
);
