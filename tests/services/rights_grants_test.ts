/**
 * Rights granted through configuration: every setting that changes who may
 * do what, and who may change it. No principal can raise its own or anyone's
 * rights above its own, directly (an admin list, a token) or through a
 * policy (admission, admin groups, the identity provider): each refusal is a
 * 403 and leaves the setting as it was.
 *
 * | setting | who may change it |
 * |---|---|
 * | login policy: admission and admin groups | superadmin; human tenant admin |
 * | login policy: identity provider | superadmin |
 * | tenant admins | superadmin; human tenant admin |
 * | namespace admins | superadmin; tenant admin (human or token) |
 * | a `tenant-admin` token | superadmin; human tenant admin |
 * | a namespace token | superadmin; tenant admin (human or token); that namespace's admin |
 * | a `superadmin` token | superadmin token |
 */
import { assertEquals } from "../assert.ts";
import { OIDC_POLICY, signInTest, type SignInWorld } from "../http/auth/world.ts";

/** Every kind of principal of tenant acme (and two outsiders), as bearer secrets. */
async function principals(w: SignInWorld): Promise<Record<string, string>> {
  const post = async (path: string, body: unknown) => {
    const res = await w.json("POST", path, { bearer: w.admin, body });
    if (res.status !== 201 && res.status !== 200) throw new Error(JSON.stringify(res.body));
    return res.body;
  };
  await post("/api/v1/tenants/acme/namespaces", { slug: "web" });
  await post("/api/v1/tenants/other/namespaces", { slug: "web" });
  assertEquals(
    (await w.json("PUT", "/api/v1/tenants/acme/login", {
      bearer: w.admin,
      body: { ...OIDC_POLICY, admin_groups: ["flag-admins"] },
    })).status,
    200,
  );
  const token = async (type: string, tenant = "acme") =>
    (await post("/api/v1/tokens", {
      type,
      name: crypto.randomUUID(),
      tenant_slug: tenant,
      ...(type === "tenant-admin" ? {} : { namespace_slug: "web" }),
    })).secret as string;
  const humanAdmin = await w.person("boss@acme.test", "acme");
  await post("/api/v1/tenants/acme/admins", { user_id: humanAdmin.user_id });
  const groupAdmin = await w.person("grp@acme.test", "acme", ["flag-admins"]);
  const nsAdmin = await w.person("nsa@acme.test", "acme");
  await post("/api/v1/tenants/acme/namespaces/web/admins", { user_id: nsAdmin.user_id });
  const member = await w.person("ana@acme.test", "acme");
  return {
    "superadmin token": w.admin,
    "human tenant admin": humanAdmin.secret,
    "group tenant admin": groupAdmin.secret,
    "tenant-admin token": await token("tenant-admin"),
    "namespace admin": nsAdmin.secret,
    "namespace-write token": await token("namespace-write"),
    "namespace-read token": await token("namespace-read"),
    "member": member.secret,
    "other tenant's tenant-admin token": await token("tenant-admin", "other"),
  };
}

/** One right-granting change, and how to see whether it was written. */
interface Grant {
  /** Sends the change as `bearer`; returns the status. */
  attempt(w: SignInWorld, bearer: string): Promise<number>;
  /** What the setting looks like now (compared before and after a refusal). */
  state(w: SignInWorld): Promise<unknown>;
}

const ALL = [
  "superadmin token",
  "human tenant admin",
  "group tenant admin",
  "tenant-admin token",
  "namespace admin",
  "namespace-write token",
  "namespace-read token",
  "member",
  "other tenant's tenant-admin token",
];

const policyState = async (w: SignInWorld) =>
  (await w.json("GET", "/api/v1/tenants/acme/login", { bearer: w.admin })).body.policy;

const tokenCount = async (w: SignInWorld) =>
  ((await w.json("GET", "/api/v1/tokens?tenant=acme", { bearer: w.admin })).body
    .tokens as unknown[])
    .length;

let counter = 0;
const fresh = () => `x${++counter}`;

/** Adds `email` as a person first (an admin list names existing users). */
async function userId(w: SignInWorld, email: string): Promise<string> {
  return (await w.person(email, "acme")).user_id;
}

const GRANTS: Record<string, { grant: Grant; allowed: string[] }> = {
  "login policy: admin groups": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("PUT", "/api/v1/tenants/acme/login", {
          bearer,
          body: { ...OIDC_POLICY, admin_groups: ["flag-admins", fresh()] },
        })).status,
      state: policyState,
    },
    allowed: ["superadmin token", "human tenant admin", "group tenant admin"],
  },
  "login policy: admission (domains)": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("PUT", "/api/v1/tenants/acme/login", {
          bearer,
          body: {
            ...OIDC_POLICY,
            admin_groups: ["flag-admins"],
            allowed_email_domains: [`${fresh()}.test`],
          },
        })).status,
      state: policyState,
    },
    allowed: ["superadmin token", "human tenant admin", "group tenant admin"],
  },
  "login policy: identity provider": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("PUT", "/api/v1/tenants/acme/login", {
          bearer,
          body: {
            ...OIDC_POLICY,
            issuer: `https://${fresh()}.test`,
            admin_groups: ["flag-admins"],
          },
        })).status,
      state: policyState,
    },
    allowed: ["superadmin token"],
  },
  "tenant admins": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("POST", "/api/v1/tenants/acme/admins", {
          bearer,
          body: { user_id: await userId(w, `${fresh()}@acme.test`) },
        })).status,
      state: async (w) =>
        (await w.json("GET", "/api/v1/tenants/acme/admins", { bearer: w.admin })).body,
    },
    allowed: ["superadmin token", "human tenant admin", "group tenant admin"],
  },
  "namespace admins": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("POST", "/api/v1/tenants/acme/namespaces/web/admins", {
          bearer,
          body: { user_id: await userId(w, `${fresh()}@acme.test`) },
        })).status,
      state: async (w) =>
        (await w.json("GET", "/api/v1/tenants/acme/namespaces/web/admins", { bearer: w.admin }))
          .body,
    },
    allowed: ["superadmin token", "human tenant admin", "group tenant admin", "tenant-admin token"],
  },
  "a tenant-admin token": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("POST", "/api/v1/tokens", {
          bearer,
          body: { type: "tenant-admin", name: fresh(), tenant_slug: "acme" },
        })).status,
      state: tokenCount,
    },
    allowed: ["superadmin token", "human tenant admin", "group tenant admin"],
  },
  "a namespace-write token": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("POST", "/api/v1/tokens", {
          bearer,
          body: {
            type: "namespace-write",
            name: fresh(),
            tenant_slug: "acme",
            namespace_slug: "web",
          },
        })).status,
      state: tokenCount,
    },
    allowed: [
      "superadmin token",
      "human tenant admin",
      "group tenant admin",
      "tenant-admin token",
      "namespace admin",
    ],
  },
  "a superadmin token": {
    grant: {
      attempt: async (w, bearer) =>
        (await w.json("POST", "/api/v1/tokens", {
          bearer,
          body: { type: "superadmin", name: fresh() },
        })).status,
      state: async (w) =>
        ((await w.json("GET", "/api/v1/tokens?type=superadmin", { bearer: w.admin })).body
          .tokens as unknown[]).length,
    },
    allowed: ["superadmin token"],
  },
};

for (const [setting, { grant, allowed }] of Object.entries(GRANTS)) {
  signInTest(
    `${setting}: changed only by ${allowed.join(", ")}; refusals write nothing`,
    async (w) => {
      const who = await principals(w);
      const seen: Record<string, number> = {};
      for (const name of ALL) {
        const before = await grant.state(w);
        if (before === undefined) throw new Error(`${setting}: no state to compare`);
        const status = await grant.attempt(w, who[name]!);
        seen[name] = status;
        if (!allowed.includes(name)) assertEquals(await grant.state(w), before, `${name} wrote`);
      }
      const expected = Object.fromEntries(
        ALL.map((name) => [name, allowed.includes(name) ? [200, 201] : [403]]),
      );
      const wrong = Object.entries(seen).filter(([name, s]) => !expected[name]!.includes(s));
      assertEquals(wrong, [], JSON.stringify(seen));
    },
  );
}
