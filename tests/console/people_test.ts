/**
 * The people of a tenant (lib/console/people.tsx): who administers
 * the tenant and its namespaces, the people the API lists, the login
 * policy; adding and removing admins through the services, with a
 * confirmation before a removal; and the refusals a person without the
 * right gets, whatever they post.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { OIDC_POLICY } from "../http/auth/world.ts";
import { consoleTest, type ConsoleWorld } from "./world.ts";

/** The tenant's admin emails as the API lists them (ids resolved to emails through the users list). */
async function apiTenantAdmins(w: ConsoleWorld): Promise<string[]> {
  const admins = await w.json("GET", "/api/v1/tenants/acme/admins", { bearer: w.admin });
  const users = await w.json("GET", "/api/v1/users", { bearer: w.admin });
  const email = new Map(
    (users.body.users as { id: string; email: string }[]).map((u) => [u.id, u.email]),
  );
  return (admins.body.admins as { user_id: string }[]).map((a) => email.get(a.user_id)!).sort();
}

async function apiNamespaceAdmins(w: ConsoleWorld): Promise<string[]> {
  const res = await w.json("GET", "/api/v1/tenants/acme/namespaces/web/admins", {
    bearer: w.admin,
  });
  return (res.body.admins as { user_id: string }[]).map((a) => a.user_id).sort();
}

// deno-lint-ignore no-explicit-any
function text(node: any): string {
  return node.textContent.replace(/\s+/g, " ").trim();
}

/** A table's body rows, each as its cells' text joined by spaces. */
// deno-lint-ignore no-explicit-any
function rows(table: any): string[] {
  // deno-lint-ignore no-explicit-any
  return [...table.querySelectorAll("tbody tr")].map((r: any) =>
    // deno-lint-ignore no-explicit-any
    [...r.querySelectorAll("td")].map((td: any) => text(td)).join(" ")
  );
}

consoleTest("the people page lists the admins, the people and the login policy", async (w) => {
  const set = await w.call("PUT", "/api/v1/tenants/acme/login", {
    bearer: w.admin,
    json: { ...OIDC_POLICY, allowed_email_domains: ["acme.test"], admin_groups: ["ops"] },
  });
  assertEquals(set.status, 200, await set.text());
  const page = await w.page("/ui/t/acme/people", w.tenantAdmin);
  assertEquals(page.status, 200, page.text);
  const h2 = [...page.doc.querySelectorAll("h2")].map(text);
  assertEquals(h2, ["Tenant admins", "Namespace admins", "People of acme", "How people sign in"]);
  const tenantAdmins = text(page.doc.querySelector("table"));
  assertStringIncludes(tenantAdmins, "ada@acme.test");
  const web = text(page.doc.querySelector('section[aria-labelledby="ns-web"]'));
  assertStringIncludes(web, "nia@acme.test");
  const members = rows(page.doc.querySelectorAll("table")[2]).map((r) => r.split(" 20")[0]);
  assertEquals(members, ["ada@acme.test tenant admin", "nia@acme.test admin of web"]);
  const policy = text(page.doc.querySelector("dl.facts"));
  assertStringIncludes(policy, "OpenID Connect (oidc)");
  assertStringIncludes(policy, "https://idp.acme.test");
  assertStringIncludes(policy, "cfgtool");
  assertStringIncludes(policy, "env:ACME_SECRET"); // the reference the API shows, never a secret
  assertStringIncludes(policy, "acme.test");
  assertStringIncludes(policy, "ops");
  assertStringIncludes(policy, "groups (the default)");
  // the tenant admin may change both lists
  assertEquals(page.doc.querySelectorAll('form[action="/ui/t/acme/people/add"]').length, 2);
  assertEquals(page.doc.querySelector('label[for="add-tenant-admin"]') !== null, true);
  assertStringIncludes(page.text, "people exist after their first sign-in");
});

consoleTest("a tenant admin adds a tenant admin by email and the API lists them", async (w) => {
  const bea = await w.person("bea@acme.test", "acme"); // signed in once: the user exists
  const res = await w.post("/ui/t/acme/people/add", w.tenantAdmin, { email: "Bea@acme.test" });
  assertEquals(res.status, 303, res.text);
  const to = res.headers.get("location")!;
  assertEquals(to, `/ui/t/acme/people?done=added&user=${bea.user_id}`);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test", "bea@acme.test"]);
  const page = await w.page(to, w.tenantAdmin);
  assertStringIncludes(text(page.doc.querySelector(".notice")), "bea@acme.test is a tenant admin");
  assertStringIncludes(text(page.doc.querySelector("table")), "bea@acme.test");
});

consoleTest("a tenant admin adds a namespace admin by email", async (w) => {
  const bea = await w.person("bea@acme.test", "acme");
  const res = await w.post("/ui/t/acme/people/add", w.tenantAdmin, {
    email: "bea@acme.test",
    namespace: "web",
  });
  assertEquals(res.status, 303, res.text);
  assertEquals((await apiNamespaceAdmins(w)).includes(bea.user_id), true);
  const page = await w.page(res.headers.get("location")!, w.tenantAdmin);
  assertStringIncludes(text(page.doc.querySelector(".notice")), "admin of namespace web");
});

consoleTest("adding someone who never signed in keeps the input and says why", async (w) => {
  const res = await w.post("/ui/t/acme/people/add", w.tenantAdmin, {
    email: "nobody@acme.test",
    namespace: "web",
  });
  assertEquals(res.status, 404);
  const field = res.doc.querySelector("#add-admin-web");
  assertEquals(field.getAttribute("value"), "nobody@acme.test");
  assertEquals(field.getAttribute("aria-invalid"), "true");
  assertStringIncludes(res.text, "Nobody has signed in as nobody@acme.test yet");
  assertEquals(res.doc.querySelector("#add-tenant-admin").getAttribute("value"), "");
  const empty = await w.post("/ui/t/acme/people/add", w.tenantAdmin, { email: " " });
  assertEquals(empty.status, 400);
  assertStringIncludes(empty.text, "Enter the email of the person to add");
});

consoleTest("removing a tenant admin asks first, then removes them", async (w) => {
  const bea = await w.person("bea@acme.test", "acme");
  await w.post("/ui/t/acme/people/add", w.tenantAdmin, { email: "bea@acme.test" });
  const page = await w.page("/ui/t/acme/people", w.tenantAdmin);
  const link = [...page.doc.querySelectorAll("table a.button")]
    // deno-lint-ignore no-explicit-any
    .find((a: any) => text(a).includes("bea@acme.test"));
  assert(link, "a remove link for bea");
  const confirm = await w.page(link.getAttribute("href"), w.tenantAdmin);
  assertEquals(confirm.status, 200, confirm.text);
  assertStringIncludes(text(confirm.doc.querySelector("main")), "Remove bea@acme.test as tenant");
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test", "bea@acme.test"], "nothing yet");
  // the confirm page's form, as the browser would submit it
  const form = confirm.doc.querySelector('form[action="/ui/t/acme/people/remove"]');
  const fields: Record<string, string> = {};
  // deno-lint-ignore no-explicit-any
  for (const i of form.querySelectorAll("input[type=hidden]") as any[]) {
    fields[i.getAttribute("name")] = i.getAttribute("value");
  }
  assertEquals(fields.user_id, bea.user_id);
  assertEquals(fields.confirm, "yes");
  // a post without the confirmation only asks again
  const asked = await w.post("/ui/t/acme/people/remove", w.tenantAdmin, { user_id: bea.user_id });
  assertEquals(asked.status, 200);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test", "bea@acme.test"]);
  const done = await w.post("/ui/t/acme/people/remove", w.tenantAdmin, fields);
  assertEquals(done.status, 303, done.text);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test"]);
  const after = await w.page(done.headers.get("location")!, w.tenantAdmin);
  assertStringIncludes(text(after.doc.querySelector(".notice")), "is no longer a tenant admin");
});

consoleTest("a tenant admin removes a namespace admin after confirming", async (w) => {
  const confirm = await w.page(
    `/ui/t/acme/people?remove=${w.writer.user_id}&namespace=web`,
    w.tenantAdmin,
  );
  assertStringIncludes(text(confirm.doc.querySelector("main")), "as admin of namespace web");
  const res = await w.post("/ui/t/acme/people/remove", w.tenantAdmin, {
    user_id: w.writer.user_id,
    namespace: "web",
    confirm: "yes",
  });
  assertEquals(res.status, 303, res.text);
  assertEquals(await apiNamespaceAdmins(w), []);
  const again = await w.post("/ui/t/acme/people/remove", w.tenantAdmin, {
    user_id: w.writer.user_id,
    namespace: "web",
    confirm: "yes",
  });
  assertEquals(again.status, 404, "no longer an admin");
  assertStringIncludes(again.text, "No such admin");
});

consoleTest("a member sees no forms and a forged add or remove is refused", async (w) => {
  const before = await apiTenantAdmins(w);
  const page = await w.page("/ui/t/acme/people", w.member);
  assertEquals(page.status, 200, page.text);
  assertStringIncludes(text(page.doc.querySelector("table")), "ada@acme.test");
  assertEquals(page.doc.querySelectorAll("main form").length, 0);
  assertEquals(page.doc.querySelectorAll("table a.button").length, 0);
  assertStringIncludes(page.text, "Only the admins of acme can read its login policy");
  assertStringIncludes(page.text, "Only the admins of acme can list its people");

  const add = await w.post("/ui/t/acme/people/add", w.member, { email: "ana@acme.test" });
  assertEquals(add.status, 403, add.text);
  const addNs = await w.post("/ui/t/acme/people/add", w.member, {
    email: "ana@acme.test",
    namespace: "web",
  });
  assertEquals(addNs.status, 403);
  const remove = await w.post("/ui/t/acme/people/remove", w.member, {
    user_id: w.tenantAdmin.user_id,
    confirm: "yes",
  });
  assertEquals(remove.status, 403, remove.text);
  const removeNs = await w.post("/ui/t/acme/people/remove", w.member, {
    user_id: w.writer.user_id,
    namespace: "web",
    confirm: "yes",
  });
  assertEquals(removeNs.status, 403);
  const confirm = await w.page(`/ui/t/acme/people?remove=${w.tenantAdmin.user_id}`, w.member);
  assertEquals(confirm.status, 403);
  assertEquals(await apiTenantAdmins(w), before);
  assertEquals(await apiNamespaceAdmins(w), [w.writer.user_id]);
});

consoleTest("a namespace admin changes no list but sees them", async (w) => {
  const page = await w.page("/ui/t/acme/people", w.writer);
  assertEquals(page.status, 200);
  assertEquals(page.doc.querySelectorAll("main form").length, 0);
  const forged = await w.post("/ui/t/acme/people/add", w.writer, {
    email: "ana@acme.test",
    namespace: "web",
  });
  assertEquals(forged.status, 403, "namespace.admins is the tenant admins' (as the API)");
});

consoleTest("a change without the page's CSRF token is refused", async (w) => {
  const res = await w.call("POST", "/ui/t/acme/people/add", {
    cookie: w.tenantAdmin.cookie,
    form: { email: "ana@acme.test" },
    headers: { origin: "http://127.0.0.1:8080" },
  });
  assertEquals(res.status, 403);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test"]);
});

consoleTest("a person of another tenant is refused the people page", async (w) => {
  const outsider = await w.person("eve@other.test", "other");
  const res = await w.page("/ui/t/acme/people", outsider);
  assertEquals(res.status, 403);
  const forged = await w.post("/ui/t/acme/people/add", outsider, { email: "eve@other.test" });
  assertEquals(forged.status, 403);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test"]);
});

consoleTest("the change notice names nobody for someone who may not make the change", async (w) => {
  const bob = await w.person("bob@other.test", "other");
  const page = await w.page(`/ui/t/acme/people?done=added&user=${bob.user_id}`, w.member);
  assertEquals(page.status, 200);
  assertEquals(page.text.includes("bob@other.test"), false);
});
