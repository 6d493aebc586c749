/**
 * `/api/v1/tokens/{id}` (read, rotate, revoke) answers a token of another
 * tenant exactly as a token id that names nothing: 404 `token_not_found`
 * to admins of this tenant, the same 403 to a namespace-bound token for
 * any id but its own. The token is left as it was. Within the caller's own
 * tenant, a token it may not touch is still a plain 403.
 */
import { assertEquals } from "../assert.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { signInTest, type SignInWorld } from "./auth/world.ts";
import { assertSameAnswer, mint, publicNamespace, tenantAdmin, UNKNOWN_TOKEN } from "./oracles.ts";

/** The three routes that take a token id. */
const ACTIONS = [
  ["read", "GET", ""],
  ["rotate", "POST", "/rotate"],
  ["revoke", "DELETE", ""],
] as const;

/** Asserts that the token still works and was neither rotated nor revoked. */
async function untouched(w: SignInWorld, token: { id: string; secret: string }): Promise<void> {
  const shown = await w.json("GET", `/api/v1/tokens/${token.id}`, { bearer: w.admin });
  const record = shown.body.token as { status: string; rotated_to_token_id: string | null };
  assertEquals([record.status, record.rotated_to_token_id], ["active", null]);
  assertEquals(
    (await w.call("GET", "/api/v1/tenants/other", { bearer: token.secret })).status,
    200,
  );
  const changes = (await listAudit(w.kv, { token_id: token.id })).items.map((e) => e.type);
  assertEquals(changes.filter((t) => t === "token.revoked" || t === "token.rotated"), []);
}

/** Sends each action on `id` and on an unknown id; asserts the answers match. */
async function sameAsUnknown(
  w: SignInWorld,
  bearer: string,
  id: string,
  expected: [number, string],
  who: string,
): Promise<void> {
  for (const [action, method, tail] of ACTIONS) {
    const real = await w.json(method, `/api/v1/tokens/${id}${tail}`, { bearer });
    const none = await w.json(method, `/api/v1/tokens/${UNKNOWN_TOKEN}${tail}`, { bearer });
    assertEquals([real.status, real.body.code], expected, `${who} ${action}s`);
    assertSameAnswer(real, none, [[id, UNKNOWN_TOKEN]], `${who} ${action}s`);
  }
}

signInTest(
  "a token of another tenant answers exactly as a token that does not exist",
  async (w) => {
    await publicNamespace(w, "acme", "web");
    await publicNamespace(w, "other", "app");
    const theirs = await mint(w, {
      type: "namespace-read",
      name: "runtime",
      tenant_slug: "other",
      namespace_slug: "app",
    });
    const automation = await mint(w, { type: "tenant-admin", name: "ops", tenant_slug: "acme" });
    const boss = await tenantAdmin(w, "boss@acme.test", "acme");
    const nia = await w.person("nia@acme.test", "acme");
    await w.json("POST", "/api/v1/tenants/acme/namespaces/web/admins", {
      bearer: w.admin,
      json: { user_id: nia.user_id },
    });
    const admins = [
      ["acme's tenant-admin token", automation.secret],
      ["acme's tenant admin", boss.secret],
      ["a namespace admin of acme/web", nia.secret],
    ] as const;
    for (const [who, bearer] of admins) {
      await sameAsUnknown(w, bearer, theirs.id, [404, "token_not_found"], who);
    }
    await untouched(w, theirs);
  },
);

signInTest("a namespace-bound token gets the same 403 for any token id but its own", async (w) => {
  await publicNamespace(w, "acme", "web");
  await publicNamespace(w, "other", "app");
  const theirs = await mint(w, {
    type: "namespace-read",
    name: "runtime",
    tenant_slug: "other",
    namespace_slug: "app",
  });
  const web = { tenant_slug: "acme", namespace_slug: "web" };
  const bound = [
    ["namespace-read", await mint(w, { ...web, type: "namespace-read", name: "r" })],
    ["namespace-write", await mint(w, { ...web, type: "namespace-write", name: "w" })],
    [
      "namespace-client",
      await mint(w, { ...web, type: "namespace-client", name: "c", environment_slug: "live" }),
    ],
  ] as const;
  for (const [who, token] of bound) {
    await sameAsUnknown(w, token.secret, theirs.id, [403, "forbidden"], who);
  }
  await untouched(w, theirs);
});

signInTest("in its own tenant, a token the caller may not touch is still a 403", async (w) => {
  await publicNamespace(w, "acme", "web");
  const automation = await mint(w, { type: "tenant-admin", name: "ops", tenant_slug: "acme" });
  const nia = await w.person("nia@acme.test", "acme");
  await w.json("POST", "/api/v1/tenants/acme/namespaces/web/admins", {
    bearer: w.admin,
    json: { user_id: nia.user_id },
  });
  const read = await w.json("GET", `/api/v1/tokens/${automation.id}`, { bearer: nia.secret });
  assertEquals([read.status, read.body.code], [403, "forbidden"]);
  const revoke = await w.json("DELETE", `/api/v1/tokens/${automation.id}`, { bearer: nia.secret });
  assertEquals(revoke.status, 403);
  const still = await w.call("GET", "/api/v1/tenants/acme", { bearer: automation.secret });
  assertEquals(still.status, 200, "the tenant-admin token still works");
});
