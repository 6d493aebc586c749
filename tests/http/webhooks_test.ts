/**
 * `/api/v1/tenants/{tenant}/webhooks` in-process (lib/http/webhooks.ts on
 * lib/services/webhooks.ts): the answers' shapes (a new webhook's secret
 * once, in an uncacheable 201; never in a list or a read), and the refusals
 * a caller sees: 403 for namespace tokens, members and another tenant's
 * admins, writing nothing; 400 for a bad body or a destination that is not
 * public; 404 for an unknown tenant or webhook id; never a 5xx.
 */
import { assert, assertEquals } from "../assert.ts";
import { type Person, signInTest, type SignInWorld } from "./auth/world.ts";

/** A JSON answer, its body read loosely. */
// deno-lint-ignore no-explicit-any
type Loose = { status: number; body: any };

/** A JSON request of the world. */
function api(w: SignInWorld, ...args: Parameters<SignInWorld["json"]>): Promise<Loose> {
  return w.json(...args);
}

const HOOKS = "/api/v1/tenants/acme/webhooks";
const PUBLIC = "https://93.184.216.34/hooks/cfgtool";

/** acme's namespace web, tokens and people of every kind. */
async function setUp(w: SignInWorld) {
  const admin = { bearer: w.admin };
  const made = await api(w, "POST", "/api/v1/tenants/acme/namespaces", {
    ...admin,
    json: { slug: "web" },
  });
  assertEquals(made.status, 201, JSON.stringify(made.body));
  let n = 0;
  const token = async (json: Record<string, unknown>) => {
    const res = await api(w, "POST", "/api/v1/tokens", {
      ...admin,
      json: { name: `t${++n}`, ...json },
    });
    assertEquals(res.status, 201, JSON.stringify(res.body));
    return res.body.secret as string;
  };
  const ada = await w.person("ada@acme.test", "acme");
  const added = await api(w, "POST", "/api/v1/tenants/acme/admins", {
    ...admin,
    json: { user_id: ada.user_id },
  });
  assertEquals(added.status, 201, JSON.stringify(added.body));
  return {
    tenantAdmin: await token({ type: "tenant-admin", tenant_slug: "acme" }),
    writer: await token({ type: "namespace-write", tenant_slug: "acme", namespace_slug: "web" }),
    reader: await token({ type: "namespace-read", tenant_slug: "acme", namespace_slug: "web" }),
    otherAdmin: await token({ type: "tenant-admin", tenant_slug: "other" }),
    ada,
    member: await w.person("ana@acme.test", "acme"),
  };
}

/** A request as a signed-in browser sends it: the cookie, the CSRF header, this origin. */
function asPerson(p: Person, json?: unknown) {
  return {
    cookie: p.cookie,
    headers: { "x-csrf-token": p.csrf, origin: "http://127.0.0.1:8080" },
    ...(json === undefined ? {} : { json }),
  };
}

signInTest(
  "a webhook is created with its secret in an uncacheable 201, then read, listed and deleted without it",
  async (w) => {
    const who = await setUp(w);
    const res = await w.call("POST", HOOKS, {
      bearer: who.tenantAdmin,
      json: { url: PUBLIC, events: ["manifest.*"], namespaces: ["web"], description: "ci" },
    });
    const body = await res.json();
    assertEquals(res.status, 201, JSON.stringify(body));
    assertEquals(res.headers.get("cache-control"), "no-store");
    assertEquals(Object.keys(body).sort(), ["request_id", "secret", "webhook"]);
    assert(body.secret.startsWith("whsec_"));
    const id = body.webhook.id as string;
    assertEquals(body.webhook, {
      id,
      tenant_slug: "acme",
      url: PUBLIC,
      events: ["manifest.*"],
      namespaces: ["web"],
      format: "standard",
      description: "ci",
      created_at: body.webhook.created_at,
      created_by: body.webhook.created_by,
    });
    const list = await api(w, "GET", HOOKS, asPerson(who.ada));
    assertEquals(list.status, 200);
    assertEquals(list.body, { webhooks: [body.webhook] });
    const one = await api(w, "GET", `${HOOKS}/${id}`, { bearer: w.admin });
    assertEquals(one.body, { webhook: body.webhook });
    const deliveries = await api(w, "GET", `${HOOKS}/${id}/deliveries`, {
      bearer: who.tenantAdmin,
    });
    assertEquals(deliveries.body, { deliveries: [] });
    const gone = await api(w, "DELETE", `${HOOKS}/${id}`, asPerson(who.ada));
    assertEquals(gone.status, 200, JSON.stringify(gone.body));
    assertEquals(gone.body.deleted, id);
    const audit = await api(w, "GET", "/api/v1/audit?tenant=acme&type=webhook.deleted", {
      bearer: w.admin,
    });
    assertEquals(audit.body.entries.length, 1);
    assertEquals(audit.body.entries[0].actor_id, who.ada.user_id);
    assertEquals((await api(w, "GET", `${HOOKS}/${id}`, { bearer: w.admin })).status, 404);
  },
);

signInTest(
  "namespace tokens, members and another tenant's admin get 403 on every webhook route, and nothing is written",
  async (w) => {
    const who = await setUp(w);
    const made = await api(w, "POST", HOOKS, {
      bearer: w.admin,
      json: { url: PUBLIC, events: ["*"] },
    });
    const id = made.body.webhook.id as string;
    const auditBefore = await api(w, "GET", "/api/v1/audit?tenant=acme&limit=500", {
      bearer: w.admin,
    });
    const callers: [string, (json?: unknown) => Record<string, unknown>][] = [
      ["namespace-write token", (json) => ({ bearer: who.writer, json })],
      ["namespace-read token", (json) => ({ bearer: who.reader, json })],
      ["another tenant's admin token", (json) => ({ bearer: who.otherAdmin, json })],
      ["a signed-in member", (json) => asPerson(who.member, json)],
    ];
    const routes: [string, string, unknown][] = [
      ["POST", HOOKS, { url: PUBLIC, events: ["*"] }],
      ["GET", HOOKS, undefined],
      ["GET", `${HOOKS}/${id}`, undefined],
      ["DELETE", `${HOOKS}/${id}`, undefined],
      ["POST", `${HOOKS}/${id}/test`, undefined],
      ["GET", `${HOOKS}/${id}/deliveries`, undefined],
      ["GET", `${HOOKS}/whk_01J00000000000000000000000`, undefined],
    ];
    for (const [name, options] of callers) {
      for (const [method, path, json] of routes) {
        const res = await api(w, method, path, options(json));
        assertEquals(res.status, 403, `${name} ${method} ${path}: ${JSON.stringify(res.body)}`);
        assertEquals(res.body.code, "forbidden");
      }
    }
    const auditAfter = await api(w, "GET", "/api/v1/audit?tenant=acme&limit=500", {
      bearer: w.admin,
    });
    // (using a token is recorded as token.authenticated, at most once a minute: not a change)
    const changes = (entries: { type: string }[]) =>
      entries.filter((e) => e.type !== "token.authenticated");
    assertEquals(changes(auditAfter.body.entries), changes(auditBefore.body.entries));
    const list = await api(w, "GET", HOOKS, { bearer: w.admin });
    assertEquals(list.body.webhooks.map((h: { id: string }) => h.id), [id]);
  },
);

signInTest(
  "bad bodies and destinations are 400s, unknown tenants and ids 404s, never a 5xx",
  async (w) => {
    const who = await setUp(w);
    const as = { bearer: who.tenantAdmin };
    const bad: [unknown, string][] = [
      [{ url: "file:///etc/passwd", events: ["*"] }, "url"],
      [{ url: "http://127.0.0.1:8080/x", events: ["*"] }, "url"],
      [{ url: "http://[fd00:ec2::254]/x", events: ["*"] }, "url"],
      [{ url: PUBLIC, events: ["nope.nope"] }, "events"],
      [{ url: PUBLIC }, "events"],
      [{ url: PUBLIC, events: ["*"], format: "xml" }, "format"],
    ];
    for (const [json, field] of bad) {
      const res = await api(w, "POST", HOOKS, { ...as, json });
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals([res.body.code, res.body.details.field], ["invalid_request", field]);
    }
    const loopback = await api(w, "POST", HOOKS, {
      ...as,
      json: { url: "http://127.0.0.1:8080/x", events: ["*"] },
    });
    assert(
      loopback.body.message.includes("127.0.0.1 is a loopback address"),
      loopback.body.message,
    );
    const notJson = await w.call("POST", HOOKS, {
      ...as,
      body: new URLSearchParams({ url: PUBLIC }),
    });
    assertEquals(notJson.status, 400);
    await notJson.body?.cancel();
    for (let i = 0; i < 20; i++) {
      const ok = await api(w, "POST", HOOKS, {
        ...as,
        json: { url: `${PUBLIC}/${i}`, events: ["*"] },
      });
      assertEquals(ok.status, 201, JSON.stringify(ok.body));
    }
    const full = await api(w, "POST", HOOKS, { ...as, json: { url: PUBLIC, events: ["*"] } });
    assertEquals([full.status, full.body.code], [400, "invalid_request"]);
    assertEquals(full.body.details, { limit: 20 });

    for (const id of ["whk_01J00000000000000000000000", "whk_nope", "x".repeat(2000)]) {
      for (
        const [method, suffix] of [["GET", ""], ["DELETE", ""], ["POST", "/test"], [
          "GET",
          "/deliveries",
        ]]
      ) {
        const res = await api(w, method!, `${HOOKS}/${id}${suffix}`, as);
        assertEquals(
          [res.status, res.body.code],
          [404, "webhook_not_found"],
          `${method} ${id}${suffix}`,
        );
      }
    }
    const unknownTenant = await api(w, "GET", "/api/v1/tenants/nope/webhooks", { bearer: w.admin });
    assertEquals([unknownTenant.status, unknownTenant.body.code], [404, "tenant_not_found"]);
  },
);
