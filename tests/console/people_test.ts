/**
 * The people of a tenant (lib/console/people.tsx): everyone who signed in
 * (the API's list, a page at a time, with last sign-in, method and
 * roles), who administers the tenant and its namespaces, the login
 * policy; adding and removing admins through the services, by email or
 * from a person's row, with a confirmation before a removal; and the
 * refusals a person without the right gets, whatever they post.
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

/** The table whose (hidden) caption is `caption`. */
// deno-lint-ignore no-explicit-any
function tableNamed(doc: any, caption: string): any {
  // deno-lint-ignore no-explicit-any
  const found = [...doc.querySelectorAll("table")].find((t: any) =>
    text(t.querySelector("caption")) === caption
  );
  assert(found, `a table "${caption}"`);
  return found;
}

/** The row of the people table that names `email`. */
// deno-lint-ignore no-explicit-any
function personRow(doc: any, email: string): any {
  const table = tableNamed(doc, "People of acme");
  // deno-lint-ignore no-explicit-any
  const row = [...table.querySelectorAll("tbody tr")].find((r: any) =>
    text(r.querySelector("td")).startsWith(email)
  );
  assert(row, `a row for ${email}`);
  return row;
}

/** The hidden and chosen fields of a form, as the browser would send them. */
// deno-lint-ignore no-explicit-any
function formFields(form: any): Record<string, string> {
  const fields: Record<string, string> = {};
  // deno-lint-ignore no-explicit-any
  for (const i of form.querySelectorAll("input[type=hidden]") as any[]) {
    fields[i.getAttribute("name")] = i.getAttribute("value");
  }
  // deno-lint-ignore no-explicit-any
  for (const sel of form.querySelectorAll("select") as any[]) {
    fields[sel.getAttribute("name")] = sel.querySelector("option").getAttribute("value");
  }
  delete fields._csrf;
  return fields;
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
  assertEquals(h2, ["People of acme", "Tenant admins", "Namespace admins", "How people sign in"]);
  const tenantAdmins = text(tableNamed(page.doc, "Tenant admins of acme"));
  assertStringIncludes(tenantAdmins, "ada@acme.test");
  const web = text(page.doc.querySelector('section[aria-labelledby="ns-web"]'));
  assertStringIncludes(web, "nia@acme.test");
  // everyone who signed in, not only the admins: person, roles, last sign-in with its method
  const people = rows(tableNamed(page.doc, "People of acme")).map((r) => r.split(" 20")[0]);
  assertEquals(people, [
    "ada@acme.test (you) tenant admin",
    "ana@acme.test member",
    "nia@acme.test admin of web",
  ]);
  assertStringIncludes(text(personRow(page.doc, "ana@acme.test")), "OpenID Connect, browser");
  const policy = text(page.doc.querySelector("dl.facts"));
  assertStringIncludes(policy, "OpenID Connect (oidc)");
  assertStringIncludes(policy, "https://idp.acme.test");
  assertStringIncludes(policy, "cfgtool");
  assertStringIncludes(policy, "env:ACME_SECRET"); // the reference the API shows, never a secret
  assertStringIncludes(policy, "acme.test");
  assertStringIncludes(policy, "ops");
  assertStringIncludes(policy, "groups (the default)");
  // the tenant admin may change both lists: by email, and from each person's row
  assertEquals(
    page.doc.querySelectorAll('form[action="/ui/t/acme/people/add"]:not(details form)').length,
    2,
  );
  assertEquals(page.doc.querySelectorAll("details.role-changes").length, 3);
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
  assertEquals(page.doc.querySelectorAll("details.role-changes").length, 0);

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

consoleTest(
  "a tenant admin makes a person an admin from their row, then removes the role",
  async (w) => {
    const page = await w.page("/ui/t/acme/people", w.tenantAdmin);
    const row = personRow(page.doc, "ana@acme.test");
    const forms = row.querySelectorAll('form[action="/ui/t/acme/people/add"]');
    assertEquals(forms.length, 2, "make tenant admin, make admin of a namespace");
    const [makeTenantAdmin, makeNsAdmin] = [formFields(forms[0]), formFields(forms[1])];
    assertEquals(makeTenantAdmin, { user_id: w.member.user_id });
    assertEquals(makeNsAdmin, { user_id: w.member.user_id, namespace: "web" });
    assertEquals(row.querySelector("label").getAttribute("for"), "make-ns-1");

    const made = await w.post("/ui/t/acme/people/add", w.tenantAdmin, makeTenantAdmin);
    assertEquals(made.status, 303, made.text);
    assertEquals(
      made.headers.get("location"),
      `/ui/t/acme/people?done=added&user=${w.member.user_id}`,
    );
    assertEquals(await apiTenantAdmins(w), ["ada@acme.test", "ana@acme.test"]);
    const ns = await w.post("/ui/t/acme/people/add", w.tenantAdmin, makeNsAdmin);
    assertEquals(ns.status, 303, ns.text);
    assertEquals((await apiNamespaceAdmins(w)).includes(w.member.user_id), true);

    const after = await w.page(ns.headers.get("location")!, w.tenantAdmin);
    assertStringIncludes(
      text(after.doc.querySelector(".notice")),
      "ana@acme.test is an admin of namespace web",
    );
    const changed = personRow(after.doc, "ana@acme.test");
    assertStringIncludes(text(changed), "tenant admin, admin of web");
    assertEquals(changed.querySelectorAll("form").length, 0, "nothing left to add");
    // deno-lint-ignore no-explicit-any
    const removals = [...changed.querySelectorAll("details a")].map((a: any) =>
      a.getAttribute("href")
    );
    assertEquals(removals, [
      `/ui/t/acme/people?remove=${w.member.user_id}`,
      `/ui/t/acme/people?remove=${w.member.user_id}&namespace=web`,
    ]);
    const confirm = await w.page(removals[1]!, w.tenantAdmin);
    assertStringIncludes(
      text(confirm.doc.querySelector("main")),
      "Remove ana@acme.test as admin of namespace web",
    );
    const fields = formFields(confirm.doc.querySelector('form[action="/ui/t/acme/people/remove"]'));
    const removed = await w.post("/ui/t/acme/people/remove", w.tenantAdmin, fields);
    assertEquals(removed.status, 303, removed.text);
    assertEquals((await apiNamespaceAdmins(w)).includes(w.member.user_id), false);
    assertEquals(
      await apiTenantAdmins(w),
      ["ada@acme.test", "ana@acme.test"],
      "the other role stays",
    );
  },
);

consoleTest(
  "someone whose session ended is still one of the people, and may be made an admin",
  async (w) => {
    const bea = await w.person("bea@acme.test", "acme");
    const out = await w.call("DELETE", `/api/v1/users/${bea.user_id}/sessions`, {
      bearer: w.admin,
    });
    assertEquals(out.status, 200, await out.text());
    const page = await w.page("/ui/t/acme/people", w.tenantAdmin);
    const fields = formFields(personRow(page.doc, "bea@acme.test").querySelector("form"));
    const made = await w.post("/ui/t/acme/people/add", w.tenantAdmin, fields);
    assertEquals(made.status, 303, made.text);
    assertEquals(await apiTenantAdmins(w), ["ada@acme.test", "bea@acme.test"]);
  },
);

consoleTest("the people list comes a page of 50 at a time", async (w) => {
  for (let i = 0; i < 50; i++) await w.person(`p${String(i).padStart(2, "0")}@acme.test`, "acme");
  const first = await w.page("/ui/t/acme/people", w.tenantAdmin);
  const listed = rows(tableNamed(first.doc, "People of acme")).map((r) => r.split(" ")[0]);
  assertEquals(listed.length, 50);
  assertEquals(listed.slice(0, 3), ["ada@acme.test", "ana@acme.test", "nia@acme.test"]);
  const next = first.doc.querySelector('nav.pager a[rel="next"]');
  assertEquals(next.getAttribute("href"), "/ui/t/acme/people?after=p46%40acme.test");
  const second = await w.page(next.getAttribute("href"), w.tenantAdmin);
  assertEquals(
    rows(tableNamed(second.doc, "People of acme")).map((r) => r.split(" ")[0]),
    ["p47@acme.test", "p48@acme.test", "p49@acme.test"],
  );
  assertEquals(second.doc.querySelector('nav.pager a[rel="next"]'), null);
  assertEquals(
    second.doc.querySelector("nav.pager a").getAttribute("href"),
    "/ui/t/acme/people",
  );
  const bad = await w.page("/ui/t/acme/people?after=no%20such", w.tenantAdmin);
  assertEquals(bad.status, 400);
});

consoleTest("a forged row change is refused and changes nothing", async (w) => {
  const asMember = await w.post("/ui/t/acme/people/add", w.member, { user_id: w.member.user_id });
  assertEquals(asMember.status, 403, asMember.text);
  const asWriter = await w.post("/ui/t/acme/people/add", w.writer, {
    user_id: w.writer.user_id,
    namespace: "web",
  });
  assertEquals(asWriter.status, 403, asWriter.text);
  const badId = await w.post("/ui/t/acme/people/add", w.tenantAdmin, { user_id: "ada@acme.test" });
  assertEquals(badId.status, 400, badId.text);
  // another tenant's person, by id, through a forged row form: the 404 of an unknown person
  const eve = await w.person("eve@other.test", "other");
  const outsider = await w.post("/ui/t/acme/people/add", w.tenantAdmin, { user_id: eve.user_id });
  assertEquals(outsider.status, 404, outsider.text);
  assertEquals(outsider.text.includes("eve@other.test"), false);
  assertEquals(await apiTenantAdmins(w), ["ada@acme.test"]);
  assertEquals(await apiNamespaceAdmins(w), [w.writer.user_id]);
});
