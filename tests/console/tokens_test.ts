/**
 * The service tokens of a tenant in the console
 * (lib/console/tokens.tsx): the list and its filters, creation that
 * shows the secret once, rotation and revocation behind a confirmation,
 * and the same refusals as the API for people without the right.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { consoleTest, type ConsoleWorld, type LoadedPage, type Person } from "./world.ts";

const TOKENS = "/ui/t/acme/tokens";
const MANIFEST = "/api/v1/tenants/acme/namespaces/web/manifest";

/** The API's answer to a manifest download with a token's secret. */
async function manifestStatus(w: ConsoleWorld, secret: string): Promise<number> {
  const res = await w.call("GET", MANIFEST, {
    bearer: secret,
    headers: { accept: "application/json" },
  });
  await res.body?.cancel();
  return res.status;
}

/** Creates a token through the console's form. */
function create(w: ConsoleWorld, who: Person, form: Record<string, string>): Promise<LoadedPage> {
  return w.post(TOKENS, who, { expiry: "90", ...form });
}

/** The secret and the token id a creation (or rotation) page shows. */
function issued(page: LoadedPage): { secret: string; id: string } {
  assertEquals(page.status, 201, page.text);
  const secret = page.doc.querySelector("#token-secret")?.textContent.trim() ?? "";
  const link = [...page.doc.querySelectorAll("a")]
    // deno-lint-ignore no-explicit-any
    .map((a: any) => a.getAttribute("href") as string)
    .filter((h) => /^\/ui\/t\/acme\/tokens\/tok_/.test(h))
    .at(-1)!;
  return { secret, id: link.split("/").at(-1)! };
}

/** The names in the list's table. */
function names(page: LoadedPage): string[] {
  // deno-lint-ignore no-explicit-any
  return [...page.doc.querySelectorAll("#token-table tbody tr")].map((r: any) =>
    r.querySelector("td").textContent.trim()
  );
}

/** The ids of acme's active tokens, as the superadmin lists them. */
async function activeIds(w: ConsoleWorld): Promise<string[]> {
  const res = await w.json("GET", "/api/v1/tokens?tenant=acme", { bearer: w.admin });
  return (res.body.tokens as { id: string }[]).map((t) => t.id);
}

/** Makes a token with the API as the superadmin; returns its id and secret. */
async function apiToken(
  w: ConsoleWorld,
  json: Record<string, unknown>,
): Promise<{ id: string; secret: string }> {
  const res = await w.json("POST", "/api/v1/tokens", {
    bearer: w.admin,
    json: { tenant_slug: "acme", ...json },
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return { id: (res.body.token as { id: string }).id, secret: res.body.secret as string };
}

consoleTest("a tenant admin creates a namespace-read token and sees its secret once", async (w) => {
  const list = await w.page(TOKENS, w.tenantAdmin);
  assertEquals(list.status, 200, list.text);
  assert(list.doc.querySelector("#create-token") !== null, "the create form");
  const types = [...list.doc.querySelectorAll("#token-type option")]
    // deno-lint-ignore no-explicit-any
    .map((o: any) => o.getAttribute("value"));
  assertEquals(types, ["namespace-read", "namespace-write", "namespace-client", "tenant-admin"]);

  const made = await create(w, w.tenantAdmin, {
    name: "runtime",
    type: "namespace-read",
    namespace: "web",
    expiry: "30",
  });
  const { secret, id } = issued(made);
  assert(secret.startsWith("svc_read_"), secret);
  assertEquals(made.headers.get("cache-control"), "no-store");
  assertStringIncludes(made.text, "You will not see this secret again");
  const copy = made.doc.querySelector('button[data-copy="token-secret"]');
  assertEquals(copy?.getAttribute("type"), "button");
  assertEquals(copy?.textContent.trim(), "Copy");
  assertEquals(await manifestStatus(w, secret), 200);

  const shown = await w.page(`${TOKENS}/${id}`, w.tenantAdmin);
  assertEquals(shown.status, 200, shown.text);
  assert(!shown.text.includes(secret), "the token's page never shows the secret again");
  assertStringIncludes(shown.text, "runtime");
  const again = await w.page(TOKENS, w.tenantAdmin);
  assertEquals(names(again), ["runtime"]);
  assert(!again.text.includes(secret));
  const expires = await w.json("GET", `/api/v1/tokens/${id}`, { bearer: w.admin });
  const token = expires.body.token as { expires_at: string; created_at: string };
  assertEquals(Date.parse(token.expires_at) - Date.parse(token.created_at), 30 * 86_400_000);
});

consoleTest("a namespace-client token is bound to its environment and origins", async (w) => {
  const made = await create(w, w.tenantAdmin, {
    name: "shop",
    type: "namespace-client",
    namespace: "web",
    environment: "staging",
    origins: "https://shop.example.com\r\n\r\nhttps://www.example.com\r\n",
    expiry: "date",
    expires_on: "2099-05-01",
  });
  const { secret, id } = issued(made);
  assert(secret.startsWith("svc_client_"), secret);
  assertStringIncludes(made.text, "https://www.example.com");
  const res = await w.json("GET", `/api/v1/tokens/${id}`, { bearer: w.admin });
  const token = res.body.token as Record<string, unknown>;
  assertEquals(token.environment_slug, "staging");
  assertEquals(token.allowed_origins, ["https://shop.example.com", "https://www.example.com"]);
  assertEquals(token.expires_at, "2099-05-01T00:00:00.000Z");
  const page = await w.page(`${TOKENS}/${id}`, w.tenantAdmin);
  assertStringIncludes(page.text, "web/staging");
  assertEquals(made.doc.querySelector("p.warning"), null, "staging is public: no warning");
});

consoleTest(
  "a client token for an environment that is not public comes with a warning",
  async (w) => {
    const made = await create(w, w.tenantAdmin, {
      name: "shop-production",
      type: "namespace-client",
      namespace: "web",
      environment: "production",
      origins: "https://shop.example.com",
      expiry: "never",
    });
    issued(made);
    assertStringIncludes(made.doc.querySelector("p.warning").textContent, "not public");
  },
);

consoleTest("refused input shows the form again with the problem and the input kept", async (w) => {
  const form = {
    name: "shop",
    type: "namespace-client",
    namespace: "web",
    environment: "qa",
    origins: "https://shop.example.com",
  };
  const bad = await create(w, w.tenantAdmin, form);
  assertEquals(bad.status, 400, bad.text);
  assertStringIncludes(bad.doc.querySelector("#token-error").textContent, "not in the current");
  assertEquals(bad.doc.querySelector("#token-environment").getAttribute("aria-invalid"), "true");
  assertEquals(bad.doc.querySelector("#token-name").getAttribute("value"), "shop");
  assertEquals(bad.doc.querySelector("#token-environment").getAttribute("value"), "qa");
  assertEquals(bad.doc.querySelector("#token-origins").textContent, "https://shop.example.com");
  assertEquals(
    bad.doc.querySelector("#token-type option[selected]").getAttribute("value"),
    "namespace-client",
  );
  assertEquals(await activeIds(w), []);

  const origins = await create(w, w.tenantAdmin, { ...form, type: "namespace-read" });
  assertEquals(origins.status, 400);
  assertStringIncludes(origins.text, "Only a namespace-client token has an environment");

  issued(await create(w, w.tenantAdmin, { name: "ci", type: "namespace-write", namespace: "web" }));
  const twin = await create(w, w.tenantAdmin, {
    name: "ci",
    type: "namespace-write",
    namespace: "web",
  });
  assertEquals(twin.status, 409, twin.text);
  assertEquals(twin.doc.querySelector("#token-name").getAttribute("value"), "ci");
});

consoleTest("rotation asks for confirmation, then shows a new secret that works", async (w) => {
  const old = await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
  const page = await w.page(`${TOKENS}/${old.id}`, w.tenantAdmin);
  assert(page.doc.querySelector("#rotate-confirm[required]") !== null, "a required checkbox");
  assertStringIncludes(page.text, "The old secret keeps working until you revoke this token");

  const unconfirmed = await w.post(`${TOKENS}/${old.id}/rotate`, w.tenantAdmin, {});
  assertEquals(unconfirmed.status, 400, unconfirmed.text);
  assertStringIncludes(unconfirmed.doc.querySelector("#rotate-error").textContent, "confirmation");
  assertEquals(await activeIds(w), [old.id]);

  const rotated = await w.post(`${TOKENS}/${old.id}/rotate`, w.tenantAdmin, { confirm: "yes" });
  const next = issued(rotated);
  assert(next.secret.startsWith("svc_read_") && next.secret !== old.secret);
  assertStringIncludes(rotated.text, "You will not see this secret again");
  assertEquals(await manifestStatus(w, next.secret), 200);
  assertEquals(await manifestStatus(w, old.secret), 200); // until revoked
  const oldPage = await w.page(`${TOKENS}/${old.id}`, w.tenantAdmin);
  assertStringIncludes(oldPage.text, "was rotated to");
  assertEquals(oldPage.doc.querySelector("#rotate-confirm"), null);
  assert(oldPage.doc.querySelector("#revoke-confirm") !== null);
  const newPage = await w.page(`${TOKENS}/${next.id}`, w.tenantAdmin);
  assert(!newPage.text.includes(next.secret));
});

consoleTest("revoking with confirmation refuses the secret; the page says revoked", async (w) => {
  const t = await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
  const page = await w.page(`${TOKENS}/${t.id}`, w.tenantAdmin);
  assert(page.doc.querySelector("#revoke-confirm[required]") !== null, "a required checkbox");
  assertStringIncludes(page.text, "cannot be undone");

  const res = await w.post(`${TOKENS}/${t.id}/revoke`, w.tenantAdmin, { confirm: "yes" });
  assertEquals(res.status, 303);
  assertEquals(res.headers.get("location"), `${TOKENS}/${t.id}`);
  assertEquals(await manifestStatus(w, t.secret), 401);
  const after = await w.page(`${TOKENS}/${t.id}`, w.tenantAdmin);
  assertStringIncludes(after.text, "This token is revoked");
  assertEquals(after.doc.querySelector(".badge").textContent, "revoked");
  assertEquals(after.doc.querySelector("#revoke-confirm"), null);
  assertEquals(after.doc.querySelector("#rotate-confirm"), null);
});

consoleTest("revoking without confirmation is refused and the token still works", async (w) => {
  const t = await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
  const res = await w.post(`${TOKENS}/${t.id}/revoke`, w.tenantAdmin, {});
  assertEquals(res.status, 400, res.text);
  assertStringIncludes(res.doc.querySelector("#revoke-error").textContent, "confirmation");
  assertEquals(await manifestStatus(w, t.secret), 200);
  assertEquals(await activeIds(w), [t.id]);
});

consoleTest(
  "a member sees no create form and no revoke button; forged ones are refused",
  async (w) => {
    const t = await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
    const list = await w.page(TOKENS, w.member);
    assertEquals(list.status, 200, list.text);
    assertEquals(list.doc.querySelector("#create-token"), null);
    assertEquals(names(list), []);
    assertStringIncludes(list.text, "You may see no tokens here");
    const page = await w.page(`${TOKENS}/${t.id}`, w.member);
    assertEquals(page.status, 403);
    assertEquals(page.doc.querySelector("#revoke-confirm"), null);

    const forged = await create(w, w.member, {
      name: "mine",
      type: "namespace-read",
      namespace: "web",
    });
    assertEquals(forged.status, 403, forged.text);
    const revoke = await w.post(`${TOKENS}/${t.id}/revoke`, w.member, { confirm: "yes" });
    assertEquals(revoke.status, 403, revoke.text);
    const rotate = await w.post(`${TOKENS}/${t.id}/rotate`, w.member, { confirm: "yes" });
    assertEquals(rotate.status, 403, rotate.text);
    assertEquals(await activeIds(w), [t.id]);
    assertEquals(await manifestStatus(w, t.secret), 200);
  },
);

consoleTest("a namespace admin issues tokens for its namespace only", async (w) => {
  const admin = await apiToken(w, { type: "tenant-admin", name: "automation" });
  const list = await w.page(TOKENS, w.writer);
  const types = [...list.doc.querySelectorAll("#token-type option")]
    // deno-lint-ignore no-explicit-any
    .map((o: any) => o.getAttribute("value"));
  assertEquals(types, ["namespace-read", "namespace-write", "namespace-client"]);
  assertEquals(names(list), []); // the tenant-admin token is not theirs to see
  const forged = await create(w, w.writer, { name: "root", type: "tenant-admin" });
  assertEquals(forged.status, 403, forged.text);
  issued(await create(w, w.writer, { name: "ci", type: "namespace-write", namespace: "web" }));
  assertEquals(names(await w.page(TOKENS, w.writer)), ["ci"]);
  assertEquals((await w.page(`${TOKENS}/${admin.id}`, w.writer)).status, 403);
});

consoleTest("a person of another tenant is refused the tokens", async (w) => {
  const t = await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
  const outsider = await w.person("eve@other.test", "other");
  const list = await w.page(TOKENS, outsider);
  assertEquals(list.status, 403);
  assertStringIncludes(list.text, "Not allowed");
  assertEquals((await w.page(`${TOKENS}/${t.id}`, outsider)).status, 403);
  const forged = await create(w, outsider, { name: "x", type: "namespace-read", namespace: "web" });
  assertEquals(forged.status, 403);
  const revoke = await w.post(`${TOKENS}/${t.id}/revoke`, outsider, { confirm: "yes" });
  assertEquals(revoke.status, 403);
  assertEquals(await manifestStatus(w, t.secret), 200);
});

consoleTest("the list filters by status, type and namespace, and pages", async (w) => {
  const other = await w.call("POST", "/api/v1/tenants/acme/namespaces", {
    bearer: w.admin,
    json: { slug: "app" },
  });
  assertEquals(other.status, 201, await other.text());
  await apiToken(w, { type: "namespace-read", name: "runtime", namespace_slug: "web" });
  await apiToken(w, { type: "namespace-write", name: "ci", namespace_slug: "app" });
  const gone = await apiToken(w, { type: "namespace-read", name: "old", namespace_slug: "web" });
  await apiToken(w, { type: "tenant-admin", name: "automation" });
  await w.call("DELETE", `/api/v1/tokens/${gone.id}`, { bearer: w.admin });

  const all = await w.page(TOKENS, w.tenantAdmin);
  assertEquals(names(all), ["automation", "ci", "runtime"]); // active, newest first
  assertEquals(names(await w.page(`${TOKENS}?type=tenant-admin`, w.tenantAdmin)), ["automation"]);
  assertEquals(names(await w.page(`${TOKENS}?namespace=web`, w.tenantAdmin)), ["runtime"]);
  const revoked = await w.page(`${TOKENS}?status=revoked`, w.tenantAdmin);
  assertEquals(names(revoked), ["old"]);
  assertEquals(
    revoked.doc.querySelector("#filter-status option[selected]").getAttribute("value"),
    "revoked",
  );
  const none = await w.page(`${TOKENS}?status=expired`, w.tenantAdmin);
  assertStringIncludes(none.doc.querySelector("#no-tokens").textContent, "No expired token");

  const first = await w.page(`${TOKENS}?limit=2`, w.tenantAdmin);
  assertEquals(names(first), ["automation", "ci"]);
  const next = [...first.doc.querySelectorAll("nav.pager a")]
    // deno-lint-ignore no-explicit-any
    .find((a: any) => a.textContent === "Next page").getAttribute("href");
  const second = await w.page(next, w.tenantAdmin);
  assertEquals(names(second), ["runtime"]);
  assert(second.doc.querySelector("nav.pager a") !== null, "a link back to the first page");
});
