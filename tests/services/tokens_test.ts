import { assert, assertEquals, assertNotEquals, assertRejects } from "../assert.ts";
import {
  ConflictError,
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
} from "../../lib/errors.ts";
import type { CreateTokenInput } from "../../lib/auth/issuance.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import {
  createToken,
  getToken,
  issueTenantToken,
  listTokens,
  revokeToken,
  rotateToken,
  tenantToken,
  tenantTokens,
  tokenFormChoices,
} from "../../lib/services/tokens.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { addNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { addTenantAdmin } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { authWorld } from "../auth/world.ts";
import { commitEnvironments, worldTest } from "../store/world.ts";
import { serviceTest } from "./world.ts";

const ctx = { requestId: "req-test" };

/** A store with tenants acme/other, namespaces acme/web (staging public) and acme/api. */
async function world() {
  const { kv, key, deps, login, superadmin } = await authWorld({
    tenants: ["acme", "other"],
    namespaces: ["web", "api"],
  });
  await commitEnvironments(kv, {
    production: { public_evaluate: false },
    staging: { public_evaluate: true },
  });
  const issue = (p: Principal, input: CreateTokenInput) => createToken(deps, p, input, ctx);
  /** Issues with the superadmin and logs in with the new token. */
  const as = async (input: CreateTokenInput) => {
    const made = await issue(superadmin, input);
    return { ...made, principal: await login(made.secret) };
  };
  const human = async (roles: { tenantAdmin?: string; nsAdmin?: [string, string] }) => {
    const user = await createUser(kv, { email: `${crypto.randomUUID()}@example.com` });
    if (roles.tenantAdmin !== undefined) {
      await addTenantAdmin(kv, { tenant: roles.tenantAdmin, user_id: user.id, added_by: "test" });
    }
    if (roles.nsAdmin !== undefined) {
      await addNamespaceAdmin(kv, {
        tenant: roles.nsAdmin[0],
        namespace: roles.nsAdmin[1],
        user_id: user.id,
        added_by: "test",
      });
    }
    const s = await createSession(kv, key, { user: user.id });
    return { user, principal: await login(s.secret) };
  };
  return { kv, key, deps, login, superadmin, issue, as, human };
}

const wtest = worldTest(world);

const read = (ns = "web", tenant = "acme"): CreateTokenInput => ({
  type: "namespace-read",
  name: `read-${crypto.randomUUID()}`,
  tenant_slug: tenant,
  namespace_slug: ns,
});
const write = (ns = "web"): CreateTokenInput => ({
  ...read(ns),
  type: "namespace-write",
  name: `write-${crypto.randomUUID()}`,
});
const client = (env = "staging"): CreateTokenInput => ({
  ...read("web"),
  type: "namespace-client",
  name: `client-${crypto.randomUUID()}`,
  environment_slug: env,
  allowed_origins: ["https://app.example.com"],
});
const tenantAdmin = (tenant = "acme"): CreateTokenInput => ({
  type: "tenant-admin",
  name: `tenant-${crypto.randomUUID()}`,
  tenant_slug: tenant,
});
const superadminInput = (): CreateTokenInput => ({
  type: "superadmin",
  name: `admin-${crypto.randomUUID()}`,
});

async function refused(
  p: Promise<unknown>,
  cls:
    | typeof ForbiddenError
    | typeof InvalidRequestError
    | typeof ConflictError
    | typeof NotFoundError,
  status: number,
  code: string,
) {
  const err = await assertRejects(() => p, cls);
  assertEquals([err.status, err.code], [status, code]);
}

// ---- issuance table -------------------------------------------------------

for (
  const [label, input] of [["namespace-read", read], ["namespace-write", write], [
    "namespace-client",
    client,
  ]] as const
) {
  wtest(
    `${label} may be issued by superadmin, tenant-admin token, human tenant admin and namespace admin`,
    async (w) => {
      const tokenAdmin = await w.as(tenantAdmin());
      const humanTenant = await w.human({ tenantAdmin: "acme" });
      const humanNs = await w.human({ nsAdmin: ["acme", "web"] });
      for (
        const p of [w.superadmin, tokenAdmin.principal, humanTenant.principal, humanNs.principal]
      ) {
        const made = await w.issue(p, input());
        assertEquals(made.token.type, label);
        assertEquals(made.token.status, "active");
      }
    },
  );

  wtest(
    `${label} is refused to namespace-bound tokens, other tenants, other namespaces' admins and role-less users`,
    async (w) => {
      const nsRead = await w.as(read());
      const nsWrite = await w.as(write());
      const nsClient = await w.as(client());
      const otherAdmin = await w.as(tenantAdmin("other"));
      const humanOtherNs = await w.human({ nsAdmin: ["acme", "api"] });
      const humanOtherTenant = await w.human({ tenantAdmin: "other" });
      const nobody = await w.human({});
      for (
        const p of [nsRead, nsWrite, nsClient, otherAdmin, humanOtherNs, humanOtherTenant, nobody]
      ) {
        await refused(w.issue(p.principal, input()), ForbiddenError, 403, "forbidden");
      }
    },
  );
}

wtest("tenant-admin may be issued by a human tenant admin or a superadmin", async (w) => {
  const humanTenant = await w.human({ tenantAdmin: "acme" });
  assertEquals((await w.issue(humanTenant.principal, tenantAdmin())).token.type, "tenant-admin");
  assertEquals((await w.issue(w.superadmin, tenantAdmin())).token.type, "tenant-admin");
});

wtest(
  "a tenant-admin token cannot mint another tenant-admin token; namespace admins and other tenants cannot either",
  async (w) => {
    const tokenAdmin = await w.as(tenantAdmin());
    const humanNs = await w.human({ nsAdmin: ["acme", "web"] });
    const humanOther = await w.human({ tenantAdmin: "other" });
    const nsWrite = await w.as(write());
    for (const p of [tokenAdmin, humanNs, humanOther, nsWrite]) {
      await refused(w.issue(p.principal, tenantAdmin()), ForbiddenError, 403, "forbidden");
    }
  },
);

wtest("superadmin may be issued only by an active superadmin token", async (w) => {
  assertEquals((await w.issue(w.superadmin, superadminInput())).token.type, "superadmin");
  const tokenAdmin = await w.as(tenantAdmin());
  const humanTenant = await w.human({ tenantAdmin: "acme" });
  const nsWrite = await w.as(write());
  for (const p of [tokenAdmin, humanTenant, nsWrite]) {
    await refused(w.issue(p.principal, superadminInput()), ForbiddenError, 403, "forbidden");
  }
});

wtest(
  "namespace-client issuance needs the environment in the current manifest, but not public_evaluate",
  async (w) => {
    await refused(w.issue(w.superadmin, client("qa")), InvalidRequestError, 400, "invalid_request");
    const made = await w.issue(w.superadmin, client("production"));
    assertEquals(made.token.status, "active");
  },
);

wtest(
  "namespace-client issuance with scopes or with * in allowed_origins is 400 invalid_request",
  async (w) => {
    await refused(
      w.issue(w.superadmin, { ...client(), scopes: ["x"] }),
      InvalidRequestError,
      400,
      "invalid_request",
    );
    await refused(
      w.issue(w.superadmin, { ...client(), allowed_origins: ["*"] }),
      InvalidRequestError,
      400,
      "invalid_request",
    );
    await refused(
      w.issue(w.superadmin, { ...client(), allowed_origins: ["https://a.example/path"] }),
      InvalidRequestError,
      400,
      "invalid_request",
    );
    await refused(
      w.issue(w.superadmin, { ...read(), allowed_origins: ["https://a.example"] }),
      InvalidRequestError,
      400,
      "invalid_request",
    );
  },
);

wtest("issuance for an unknown tenant or namespace is 404", async (w) => {
  await refused(w.issue(w.superadmin, read("web", "nope")), NotFoundError, 404, "tenant_not_found");
  await refused(w.issue(w.superadmin, read("nope")), NotFoundError, 404, "namespace_not_found");
});

wtest(
  "a token name is unique within its bound scope (409), and free in another scope",
  async (w) => {
    await w.issue(w.superadmin, { ...read(), name: "ci" });
    await refused(
      w.issue(w.superadmin, { ...write(), name: "ci" }),
      ConflictError,
      409,
      "conflict",
    );
    await w.issue(w.superadmin, { ...read("api"), name: "ci" });
    await w.issue(w.superadmin, { ...tenantAdmin(), name: "ci" });
  },
);

wtest(
  "the created record carries every field of the spec and the secret is returned once",
  async (w) => {
    const made = await w.issue(w.superadmin, { ...client(), description: "browser" });
    const t = made.token;
    assert(t.id.startsWith("tok_"));
    assertEquals(t.prefix, made.secret.slice(0, 14));
    assertEquals(
      [t.tenant_slug, t.namespace_slug, t.environment_slug, t.allowed_origins, t.scopes],
      ["acme", "web", "staging", ["https://app.example.com"], []],
    );
    assertEquals([t.status, t.expires_at, t.last_used_at, t.revoked_at, t.revoked_by], [
      "active",
      null,
      null,
      null,
      null,
    ]);
    assertEquals([t.rotated_from_token_id, t.rotated_to_token_id], [null, null]);
    assertEquals(t.created_by, (w.superadmin as { token: { id: string } }).token.id);
    assert(!("digest" in t));
    const again = await getToken(w.deps, w.superadmin, t.id);
    assert(!JSON.stringify(again).includes(made.secret));
  },
);

// ---- list / rotate / revoke by namespace-bound tokens ------------------------

wtest("namespace-bound tokens cannot list, rotate or revoke other tokens", async (w) => {
  const victim = await w.issue(w.superadmin, read());
  for (const input of [read(), write(), client()]) {
    const p = (await w.as(input)).principal;
    await refused(listTokens(w.deps, p), ForbiddenError, 403, "forbidden");
    await refused(
      rotateToken(w.deps, p, victim.token.id, {}, ctx),
      ForbiddenError,
      403,
      "forbidden",
    );
    await refused(revokeToken(w.deps, p, victim.token.id, ctx), ForbiddenError, 403, "forbidden");
    await refused(getToken(w.deps, p, victim.token.id), ForbiddenError, 403, "forbidden");
  }
  assertEquals((await getToken(w.deps, w.superadmin, victim.token.id)).status, "active");
});

wtest("a token may revoke itself, and then gets 401", async (w) => {
  const me = await w.as(write());
  const after = await revokeToken(w.deps, me.principal, me.token.id, ctx);
  assertEquals(after.status, "revoked");
  assertEquals(after.revoked_by, me.token.id);
  assert(after.revoked_at !== null);
  await assertRejects(() => w.login(me.secret));
});

wtest("revocation audits token.revoked with the actor and request id", async (w) => {
  const t = await w.issue(w.superadmin, read());
  await revokeToken(w.deps, w.superadmin, t.token.id, { requestId: "req-42" });
  const audit = await listAudit(w.kv, { token_id: t.token.id, type: "token.revoked" });
  assertEquals(audit.items.length, 1);
  const e = audit.items[0]!;
  assertEquals([e.request_id, e.actor_id, e.token_prefix, e.tenant_slug, e.namespace_slug], [
    "req-42",
    (w.superadmin as { token: { id: string } }).token.id,
    t.token.prefix,
    "acme",
    "web",
  ]);
});

wtest("a tenant-admin token lists only its tenant's tokens; a superadmin lists all", async (w) => {
  const a = await w.issue(w.superadmin, read());
  const b = await w.issue(w.superadmin, tenantAdmin("other"));
  const admin = await w.as(tenantAdmin());
  const seen = (await listTokens(w.deps, admin.principal)).items.map((t) => t.id);
  assert(seen.includes(a.token.id) && seen.includes(admin.token.id));
  assert(!seen.includes(b.token.id));
  await refused(
    listTokens(w.deps, admin.principal, { tenant: "other" }),
    ForbiddenError,
    403,
    "forbidden",
  );
  const all = (await listTokens(w.deps, w.superadmin)).items.map((t) => t.id);
  assert(all.includes(a.token.id) && all.includes(b.token.id));
});

wtest(
  "listing filters by namespace, type and status (default active) and paginates newest first",
  async (w) => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await w.issue(w.superadmin, read("api"))).token.id);
    await revokeToken(w.deps, w.superadmin, ids[0]!, ctx);
    const q = { tenant: "acme", namespace: "api" };
    const p1 = await listTokens(w.deps, w.superadmin, { ...q, limit: 2 });
    assertEquals(p1.items.map((t) => t.id), [ids[4], ids[3]]);
    assert(p1.next !== null);
    const p2 = await listTokens(w.deps, w.superadmin, { ...q, limit: 2, after: p1.next });
    assertEquals(p2.items.map((t) => t.id), [ids[2], ids[1]]);
    assertEquals(p2.next, null);
    const revoked = await listTokens(w.deps, w.superadmin, { ...q, status: "revoked" });
    assertEquals(revoked.items.map((t) => t.id), [ids[0]]);
    const writes = await listTokens(w.deps, w.superadmin, { ...q, type: "namespace-write" });
    assertEquals(writes.items, []);
  },
);

wtest("a human namespace admin sees only the tokens of namespaces they administer", async (w) => {
  const mine = await w.issue(w.superadmin, read("web"));
  const theirs = await w.issue(w.superadmin, read("api"));
  const h = await w.human({ nsAdmin: ["acme", "web"] });
  const seen = (await listTokens(w.deps, h.principal, { tenant: "acme" })).items.map((t) => t.id);
  assert(seen.includes(mine.token.id) && !seen.includes(theirs.token.id));
  await refused(
    revokeToken(w.deps, h.principal, theirs.token.id, ctx),
    ForbiddenError,
    403,
    "forbidden",
  );
  assertEquals((await revokeToken(w.deps, h.principal, mine.token.id, ctx)).status, "revoked");
});

// ---- rotation ---------------------------------------------------------------

wtest(
  "rotation inherits type, binding, scopes, origins, description and name; the old token stays active",
  async (w) => {
    const old = await w.issue(w.superadmin, { ...client(), description: "site" });
    const rotated = await rotateToken(w.deps, w.superadmin, old.token.id, {}, ctx);
    const n = rotated.token;
    assertNotEquals(rotated.secret, old.secret);
    assertEquals(
      [
        n.type,
        n.name,
        n.description,
        n.tenant_slug,
        n.namespace_slug,
        n.environment_slug,
        n.allowed_origins,
        n.scopes,
        n.expires_at,
      ],
      [
        old.token.type,
        old.token.name,
        "site",
        "acme",
        "web",
        "staging",
        ["https://app.example.com"],
        [],
        null,
      ],
    );
    assertEquals(n.rotated_from_token_id, old.token.id);
    const before = await getToken(w.deps, w.superadmin, old.token.id);
    assertEquals([before.status, before.rotated_to_token_id], ["active", n.id]);
    await w.login(old.secret);
    await w.login(rotated.secret);
    const audit = await listAudit(w.kv, { type: "token.rotated" });
    assertEquals(audit.items.map((e) => e.token_id), [n.id]);
    await refused(
      rotateToken(w.deps, w.superadmin, old.token.id, {}, ctx),
      ConflictError,
      409,
      "conflict",
    );
  },
);

wtest("rotation keeps the expiry policy (same lifetime from now) unless overridden", async (w) => {
  const created = new Date();
  const old = await w.issue(w.superadmin, {
    ...read(),
    expires_at: new Date(created.getTime() + 86_400_000).toISOString(),
  });
  const same = await rotateToken(w.deps, w.superadmin, old.token.id, {}, ctx);
  const lifetime = Date.parse(same.token.expires_at!) - Date.parse(same.token.created_at);
  assert(Math.abs(lifetime - 86_400_000) < 5_000, String(lifetime));
  const other = await w.issue(w.superadmin, read());
  const renamed = await rotateToken(w.deps, w.superadmin, other.token.id, {
    name: "renamed",
    expires_at: "2999-01-01T00:00:00Z",
  }, ctx);
  assertEquals([renamed.token.name, renamed.token.expires_at], [
    "renamed",
    "2999-01-01T00:00:00.000Z",
  ]);
});

wtest("a tenant-admin token may rotate namespace tokens but not tenant-admin tokens", async (w) => {
  const admin = await w.as(tenantAdmin());
  const ns = await w.issue(w.superadmin, write());
  assertEquals(
    (await rotateToken(w.deps, admin.principal, ns.token.id, {}, ctx)).token.type,
    "namespace-write",
  );
  await refused(
    rotateToken(w.deps, admin.principal, admin.token.id, {}, ctx),
    ForbiddenError,
    403,
    "forbidden",
  );
});

wtest("a revoked token cannot be rotated (409)", async (w) => {
  const t = await w.issue(w.superadmin, read());
  await revokeToken(w.deps, w.superadmin, t.token.id, ctx);
  await refused(
    rotateToken(w.deps, w.superadmin, t.token.id, {}, ctx),
    ConflictError,
    409,
    "conflict",
  );
});

wtest("unknown token ids are 404 token_not_found", async (w) => {
  await refused(getToken(w.deps, w.superadmin, "tok_nope"), NotFoundError, 404, "token_not_found");
  await refused(
    revokeToken(w.deps, w.superadmin, "tok_nope", ctx),
    NotFoundError,
    404,
    "token_not_found",
  );
});

// ---- a tenant's tokens, as the console shows them --------------------------

wtest(
  "what a person may issue: their namespaces with environments, tenant-admin for tenant admins",
  async (w) => {
    const nsAdmin = await w.human({ nsAdmin: ["acme", "web"] });
    const choices = await tokenFormChoices(w.deps, nsAdmin.principal, "acme");
    assertEquals(choices.types, ["namespace-read", "namespace-write", "namespace-client"]);
    assertEquals(choices.namespaces, [{ slug: "web", environments: ["production", "staging"] }]);
    const admin = await w.human({ tenantAdmin: "acme" });
    const all = await tokenFormChoices(w.deps, admin.principal, "acme");
    assertEquals(all.types.at(-1), "tenant-admin");
    assertEquals(all.namespaces.map((n) => n.slug).toSorted(), ["api", "web"]);
    const nobody = await w.human({});
    assertEquals(await tokenFormChoices(w.deps, nobody.principal, "acme"), {
      types: [],
      namespaces: [],
    });
    await refused(
      issueTenantToken(w.deps, nobody.principal, "acme", () => {
        throw new Error("the input is read only once the person may issue");
      }, ctx),
      ForbiddenError,
      403,
      "forbidden",
    );
    const made = await issueTenantToken(w.deps, nsAdmin.principal, "acme", () => read("web"), ctx);
    assertEquals(made.token.namespace_slug, "web");
  },
);

wtest(
  "a tenant's list needs tenant.read and the tenant, and drops a namespace it does not have",
  async (w) => {
    const t = await w.issue(w.superadmin, read("api"));
    const admin = await w.human({ tenantAdmin: "acme" });
    const list = await tenantTokens(w.deps, admin.principal, "acme", {
      status: "active",
      namespace: "app",
      limit: 25,
    });
    assertEquals(list.filter, { status: "active", limit: 25 });
    assertEquals(list.namespaces.toSorted(), ["api", "web"]);
    assert(list.page.items.some((x) => x.id === t.token.id));
    assertEquals(list.choices.types.at(-1), "tenant-admin");
    const api = await tenantTokens(w.deps, admin.principal, "acme", {
      status: "active",
      namespace: "api",
      limit: 25,
    });
    assertEquals(api.page.items.map((x) => x.id), [t.token.id]);
    await refused(
      tenantTokens(w.deps, admin.principal, "other", { status: "active", limit: 25 }),
      ForbiddenError,
      403,
      "forbidden",
    );
    await refused(
      tenantTokens(w.deps, w.superadmin, "nope", { status: "active", limit: 25 }),
      NotFoundError,
      404,
      "tenant_not_found",
    );
  },
);

wtest(
  "a token named within a tenant is not found in another; its page says what the person may do",
  async (w) => {
    const t = await w.issue(w.superadmin, read("web"));
    const other = await w.issue(w.superadmin, tenantAdmin("other"));
    const admin = await w.human({ tenantAdmin: "acme" });
    const shown = await tenantToken(w.deps, admin.principal, "acme", t.token.id);
    assertEquals([shown.token.id, shown.may], [t.token.id, { rotate: true, revoke: true }]);
    await refused(
      tenantToken(w.deps, w.superadmin, "acme", other.token.id),
      NotFoundError,
      404,
      "token_not_found",
    );
    await refused(
      rotateToken(w.deps, w.superadmin, { tenant: "acme", id: other.token.id }, {}, ctx),
      NotFoundError,
      404,
      "token_not_found",
    );
    await refused(
      revokeToken(w.deps, admin.principal, { tenant: "other", id: other.token.id }, ctx),
      ForbiddenError,
      403,
      "forbidden",
    );
    const writer = await w.human({ nsAdmin: ["acme", "api"] });
    await refused(
      tenantToken(w.deps, writer.principal, "acme", t.token.id, "token.revoke"),
      ForbiddenError,
      403,
      "forbidden",
    );
    const rotated = await rotateToken(
      w.deps,
      admin.principal,
      { tenant: "acme", id: t.token.id },
      {},
      ctx,
    );
    const old = await tenantToken(w.deps, admin.principal, "acme", t.token.id, "token.rotate");
    assertEquals(old.token.rotated_to_token_id, rotated.token.id);
    assertEquals(old.may, { rotate: false, revoke: true });
  },
);

serviceTest("revoking through the runtime re-checks the open streams at once", async (w) => {
  const made = await createToken(w.services, w.superadmin, {
    type: "namespace-read",
    name: "r",
    tenant_slug: "acme",
    namespace_slug: "web",
  }, w.ctx);
  const before = w.rechecks();
  await revokeToken(w.services, w.superadmin, made.token.id, w.ctx);
  assertEquals(w.rechecks(), before + 1);
  await assertRejects(() => w.login(made.secret));
});
