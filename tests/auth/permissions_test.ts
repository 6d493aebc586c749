import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ForbiddenError } from "../../lib/errors.ts";
import { readAudit } from "../../lib/services/audit.ts";
import { type Action, authorize, can, type Target } from "../../lib/auth/permissions.ts";
import { authenticateCredential, type Principal } from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { createToken } from "../../lib/services/tokens.ts";
import { addNamespaceAdmin, removeNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { addTenantAdmin, removeTenantAdmin } from "../../lib/store/tenants.ts";
import { getTokenRecord } from "../../lib/store/tokens.ts";
import { createUser } from "../../lib/store/users.ts";
import { authWorld } from "./world.ts";
import { commitEnvironments, worldTest } from "../store/world.ts";

/** Tenants acme and other; acme/web (production private, staging public) and acme/api. */
async function world() {
  const { kv, key, deps, ctx, superadmin, login } = await authWorld({
    tenants: ["acme", "other"],
    namespaces: ["web", "api"],
  });
  const setEnvs = (stagingPublic: boolean) =>
    commitEnvironments(kv, {
      production: { public_evaluate: false },
      staging: { public_evaluate: stagingPublic },
    });
  await setEnvs(true);
  const token = async (type: string, extra: Record<string, string> = {}) => {
    const binding = type === "superadmin"
      ? {}
      : type === "tenant-admin"
      ? { tenant_slug: "acme" }
      : { tenant_slug: "acme", namespace_slug: "web" };
    const made = await createToken(deps, superadmin, {
      type,
      name: crypto.randomUUID(),
      ...binding,
      ...extra,
    }, ctx);
    return { ...made, principal: await login(made.secret) };
  };
  const user = async () => {
    const u = await createUser(kv, { email: `${crypto.randomUUID()}@example.com` });
    const s = await createSession(kv, key, { user: u.id });
    return { id: u.id, principal: await login(s.secret) };
  };
  return { kv, key, deps, superadmin, token, user, setEnvs };
}

const wtest = worldTest(world);

async function forbidden(kv: Deno.Kv, p: Principal, action: Action, target: Target) {
  const err = await assertRejects(() => authorize(kv, p, action, target), ForbiddenError);
  assertEquals([err.status, err.code], [403, "forbidden"]);
}

const WEB = { tenant: "acme", namespace: "web" };

wtest("a {tenant} in the path that differs from the token's binding is 403", async (w) => {
  for (const type of ["tenant-admin", "namespace-read", "namespace-write"]) {
    const { principal } = await w.token(type);
    await forbidden(w.kv, principal, "manifest.read", { tenant: "other", namespace: "web" });
    await forbidden(w.kv, principal, "tenant.read", { tenant: "other" });
  }
  const { principal } = await w.token("namespace-read");
  await forbidden(w.kv, principal, "manifest.read", { tenant: "acme", namespace: "api" });
});

wtest(
  "namespace-read reads and evaluates; namespace-write also writes; neither administers",
  async (w) => {
    const r = (await w.token("namespace-read")).principal;
    const wr = (await w.token("namespace-write")).principal;
    for (const p of [r, wr]) {
      for (const a of ["manifest.read", "evaluate", "namespace.read"] as const) {
        await authorize(
          w.kv,
          p,
          a,
          WEB,
        );
      }
      await authorize(w.kv, p, "evaluate", { ...WEB, environment: "production" });
      await authorize(w.kv, p, "tenant.read", { tenant: "acme" });
      for (
        const a of [
          "namespace.create",
          "namespace.delete",
          "namespace.admins",
          "audit.read",
          "tenant.admins",
        ] as const
      ) {
        await forbidden(w.kv, p, a, WEB);
      }
    }
    await authorize(w.kv, wr, "manifest.write", WEB);
    await forbidden(w.kv, r, "manifest.write", WEB);
  },
);

wtest(
  "a tenant-admin token administers namespaces of its tenant but not the tenant itself",
  async (w) => {
    const p = (await w.token("tenant-admin")).principal;
    for (
      const a of [
        "namespace.create",
        "namespace.delete",
        "namespace.admins",
        "manifest.write",
        "audit.read",
        "namespace.list",
      ] as const
    ) {
      await authorize(
        w.kv,
        p,
        a,
        a === "audit.read" || a === "namespace.list" ? { tenant: "acme" } : WEB,
      );
    }
    for (const a of ["tenant.create", "tenant.delete", "tenant.admins"] as const) {
      await forbidden(w.kv, p, a, { tenant: "acme" });
    }
  },
);

wtest("only a superadmin creates and deletes tenants", async (w) => {
  await authorize(w.kv, w.superadmin, "tenant.create", {});
  await authorize(w.kv, w.superadmin, "tenant.delete", { tenant: "acme" });
  const human = await w.user();
  await addTenantAdmin(w.kv, { tenant: "acme", user_id: human.id, added_by: "test" });
  await forbidden(w.kv, human.principal, "tenant.delete", { tenant: "acme" });
  await authorize(w.kv, human.principal, "tenant.admins", { tenant: "acme" });
});

wtest("a namespace-client token may only evaluate its bound triple", async (w) => {
  const p = (await w.token("namespace-client", { environment_slug: "staging" })).principal;
  await authorize(w.kv, p, "evaluate.public", { ...WEB, environment: "staging" });
  await authorize(w.kv, p, "evaluate", { ...WEB, environment: "staging" });
  await forbidden(w.kv, p, "evaluate.public", { ...WEB, environment: "production" });
  await forbidden(w.kv, p, "evaluate.public", {
    tenant: "acme",
    namespace: "api",
    environment: "staging",
  });
  for (
    const a of [
      "manifest.read",
      "manifest.write",
      "namespace.read",
      "tenant.read",
      "audit.read",
      "tenant.list",
    ] as const
  ) {
    await forbidden(w.kv, p, a, WEB);
  }
});

wtest(
  "evaluate.public is refused with 403 once public_evaluate is false, and the token stays active",
  async (w) => {
    const made = await w.token("namespace-client", { environment_slug: "staging" });
    const target = { ...WEB, environment: "staging" };
    await authorize(w.kv, made.principal, "evaluate.public", target);
    await w.setEnvs(false);
    await forbidden(w.kv, made.principal, "evaluate.public", target);
    assertEquals((await getTokenRecord(w.kv, made.token.id)).status, "active");
  },
);

wtest(
  "the gate is read at each authorization: a principal reused for a second one (a long-lived stream) reads public_evaluate again",
  async (w) => {
    const made = await w.token("namespace-client", { environment_slug: "staging" });
    const target = { ...WEB, environment: "staging" };
    const principal = await authenticateCredential(w.deps, made.secret, { requestId: "r-gate" });
    await authorize(w.kv, principal, "evaluate", target);
    // public_evaluate is revoked while the principal lives on (a long-lived stream)
    await w.setEnvs(false);
    await forbidden(w.kv, principal, "evaluate", target);
    await forbidden(w.kv, principal, "evaluate", target); // and every time after
  },
);

wtest("human roles are read per request: removing an admin takes effect at once", async (w) => {
  const h = await w.user();
  assert(!(await can(w.kv, h.principal, "manifest.write", WEB)));
  await addNamespaceAdmin(w.kv, { ...WEB, user_id: h.id, added_by: "test" });
  assert(await can(w.kv, h.principal, "manifest.write", WEB));
  assert(!(await can(w.kv, h.principal, "manifest.write", { tenant: "acme", namespace: "api" })));
  assert(!(await can(w.kv, h.principal, "namespace.delete", WEB)));
  await removeNamespaceAdmin(w.kv, "acme", "web", h.id);
  assert(!(await can(w.kv, h.principal, "manifest.write", WEB)));
  await addTenantAdmin(w.kv, { tenant: "acme", user_id: h.id, added_by: "test" });
  assert(await can(w.kv, h.principal, "namespace.delete", WEB));
  await removeTenantAdmin(w.kv, "acme", h.id);
  assert(!(await can(w.kv, h.principal, "namespace.delete", WEB)));
  assert(!(await can(w.kv, h.principal, "tenant.read", { tenant: "acme" })));
});

wtest(
  "audit is readable by a superadmin and by a tenant admin for its own tenant only",
  async (w) => {
    const all = await readAudit(w.deps, w.superadmin);
    assert(all.items.length > 0);
    const admin = (await w.token("tenant-admin")).principal;
    const mine = await readAudit(w.deps, admin);
    assert(mine.items.every((e) => e.tenant_slug === "acme"));
    await assertRejects(() => readAudit(w.deps, admin, { tenant: "other" }), ForbiddenError);
    const reader = (await w.token("namespace-read")).principal;
    await assertRejects(() => readAudit(w.deps, reader), ForbiddenError);
  },
);

wtest(
  "an operator's console session acts as superadmin but cannot issue a superadmin token",
  async (w) => {
    const u = await createUser(w.kv, { email: "ops@example.com" });
    const made = await createSession(w.kv, w.key, {
      user: u.id,
      superadmin: true,
      login_method: "operator",
      client: "browser",
    });
    const operator = await principalOf(w, made.secret);
    for (const a of ["tenant.create", "tenant.delete"] as const) {
      await authorize(w.kv, operator, a, {});
    }
    await authorize(w.kv, operator, "manifest.write", { tenant: "other", namespace: "web" });
    const ctx = { requestId: "r1" };
    const tenantAdmin = await createToken(w.deps, operator, {
      type: "tenant-admin",
      name: "from the console",
      tenant_slug: "acme",
    }, ctx);
    assertEquals(tenantAdmin.token.type, "tenant-admin");
    await assertRejects(
      () => createToken(w.deps, operator, { type: "superadmin", name: "nope" }, ctx),
      ForbiddenError,
    );
    // the same person without the operator mark is nobody here
    const plain = await createSession(w.kv, w.key, { user: u.id });
    await forbidden(w.kv, await principalOf(w, plain.secret), "tenant.create", {});
  },
);

/** The principal of a secret in the world. */
async function principalOf(w: { kv: Deno.Kv; key: CryptoKey }, secret: string) {
  return await authenticateCredential({ kv: w.kv, key: w.key }, secret, { requestId: "r" });
}
