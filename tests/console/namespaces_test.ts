/**
 * A tenant's namespaces in the console: a tenant admin creates one (and
 * sees the form's refusal with the input kept) and deletes one after
 * typing its slug; a member sees neither form, and their forged posts are
 * refused and change nothing; an empty tenant says what to do next.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { consoleTest } from "./world.ts";

consoleTest("a tenant admin creates a namespace from the namespaces page", async (w) => {
  const page = await w.page("/ui/t/acme", w.tenantAdmin);
  assertEquals(page.status, 200);
  assert(page.doc.querySelector("form[action='/ui/t/acme/namespaces']"), "the create form");
  const made = await w.post("/ui/t/acme/namespaces", w.tenantAdmin, {
    slug: "mobile",
    description: "The mobile apps",
  });
  assertEquals(made.status, 303, made.text);
  assertEquals(made.headers.get("location"), "/ui/t/acme/ns/mobile");
  const listed = await w.json("GET", "/api/v1/tenants/acme/namespaces/mobile", { bearer: w.admin });
  assertEquals(listed.status, 200);
  assertStringIncludes(JSON.stringify(listed.body), "The mobile apps");
  // a taken slug: the form again, the input kept, the reason said
  const again = await w.post("/ui/t/acme/namespaces", w.tenantAdmin, { slug: "mobile" });
  assertEquals(again.status, 400);
  assertStringIncludes(again.text, "mobile");
  assertEquals(again.doc.querySelector("#namespace-slug").getAttribute("value"), "mobile");
  assertEquals(again.doc.querySelector("#namespace-slug").getAttribute("aria-invalid"), "true");
});

consoleTest("deleting a namespace asks for its slug, as the CLI does", async (w) => {
  const confirm = await w.page("/ui/t/acme/ns/web/delete", w.tenantAdmin);
  assertEquals(confirm.status, 200);
  assertStringIncludes(confirm.text, "revokes every token bound to it");
  const wrong = await w.post("/ui/t/acme/ns/web/delete", w.tenantAdmin, { slug: "wb" });
  assertEquals(wrong.status, 400);
  assertStringIncludes(wrong.text, "Type web exactly");
  assertEquals(
    (await w.json("GET", "/api/v1/tenants/acme/namespaces/web", { bearer: w.admin })).status,
    200,
  );
  const gone = await w.post("/ui/t/acme/ns/web/delete", w.tenantAdmin, { slug: "web" });
  assertEquals(gone.status, 303);
  assertEquals(gone.headers.get("location"), "/ui/t/acme?done=deleted");
  assertEquals(
    (await w.json("GET", "/api/v1/tenants/acme/namespaces/web", { bearer: w.admin })).status,
    404,
  );
  const empty = await w.page("/ui/t/acme", w.tenantAdmin);
  assertStringIncludes(empty.text, "Create the first one below");
});

consoleTest("a member sees no namespace forms, and forged posts change nothing", async (w) => {
  const page = await w.page("/ui/t/acme", w.member);
  assertEquals(page.status, 200);
  assertEquals(page.doc.querySelector("form[action='/ui/t/acme/namespaces']"), null);
  assert(!page.text.includes("/ns/web/delete"), "no delete link");
  const forged = await w.post("/ui/t/acme/namespaces", w.member, { slug: "sneaky" });
  assertEquals(forged.status, 403);
  assertEquals(
    (await w.json("GET", "/api/v1/tenants/acme/namespaces/sneaky", { bearer: w.admin })).status,
    404,
  );
  const forgedDelete = await w.post("/ui/t/acme/ns/web/delete", w.writer, { slug: "web" });
  assertEquals(forgedDelete.status, 403);
  assertEquals(
    (await w.json("GET", "/api/v1/tenants/acme/namespaces/web", { bearer: w.admin })).status,
    200,
  );
});
