/**
 * Environments in the console: the list (readers see it, writers also get
 * the forms); adding one keeps the comments of namespace.toml; public
 * evaluation is set with its warning shown; removing one an override names
 * is refused naming the flag, an unnamed one goes; a namespace without any
 * file gets its first environment (and namespace.toml); a reader's forged
 * posts write nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { FIXTURE } from "../fixture.ts";
import { consoleTest, type ConsoleWorld, type LoadedPage } from "../world.ts";
import {
  filled,
  forgedCommitRefused,
  manifest,
  previewThenCommit,
  wellLabelled,
} from "./helpers.ts";

const ENVS = "/ui/t/acme/ns/web/edit/environments";

/** Previews then commits the form holding the preview button of `page`, with `changes`. */
function commit(
  w: ConsoleWorld,
  path: string,
  page: LoadedPage,
  changes: Record<string, string>,
): Promise<LoadedPage> {
  return previewThenCommit(w, path, {
    ...filled(page, "button[name=step][value=preview]"),
    ...changes,
  });
}

const COMMENTED = `schema_version = 1
# Who owns this: the web team.
[namespace]
description = "Web shop"

# What customers see.
[namespace.environments.production]
public_evaluate = false # reviewed
[namespace.environments.staging]
public_evaluate = true
`;

consoleTest("a writer adds qa, opens public evaluation, and the comments stay", async (w) => {
  await w.push({ ...FIXTURE, "namespace.toml": COMMENTED });
  const list = await w.page(ENVS, w.writer);
  assertEquals(list.status, 200, list.text);
  const rows = [...list.doc.querySelectorAll("#environments tbody tr")].map((r) => r.textContent);
  assertEquals(rows.length, 2);
  wellLabelled(list);
  assertStringIncludes(rows[0]!, "What customers see.");
  const added = await commit(w, `${ENVS}/add`, list, {
    key: "qa",
    description: "Manual checks",
    message: "Add qa",
  });
  assertEquals(added.status, 303, added.text);
  assertEquals(added.headers.get("location"), ENVS);
  assertEquals(
    (await manifest(w)).files["namespace.toml"],
    COMMENTED + "\n# Manual checks\n[namespace.environments.qa]\npublic_evaluate = false\n",
  );

  const form = await w.page(`${ENVS}/public?env=qa&to=true`, w.writer);
  assertEquals(form.status, 200, form.text);
  wellLabelled(form);
  assertStringIncludes(form.doc.querySelector("#public-warning").textContent, "namespace-client");
  assertStringIncludes(form.doc.querySelector("#public-warning").textContent, "secrets");
  assert(form.doc.querySelector("#public-yes").hasAttribute("checked"), "prefilled as asked");
  const opened = await commit(w, `${ENVS}/public`, form, { message: "qa for the browser" });
  assertEquals(opened.status, 303, opened.text);
  const text = (await manifest(w)).files["namespace.toml"]!;
  assert(
    text.endsWith("# Manual checks\n[namespace.environments.qa]\npublic_evaluate = true\n"),
    text,
  );
  assertStringIncludes(text, "# Who owns this: the web team.\n");
  assertStringIncludes(text, "public_evaluate = false # reviewed\n");
  const after = await w.page(ENVS, w.writer);
  assertStringIncludes(after.doc.querySelector("#environments").textContent, "yes");
});

consoleTest(
  "removing an environment an override names is refused; an unnamed one goes",
  async (w) => {
    const form = await w.page(`${ENVS}/remove?env=production`, w.writer);
    assertEquals(form.status, 200, form.text);
    wellLabelled(form);
    const before = await manifest(w);
    const refused = await w.post(`${ENVS}/remove`, w.writer, {
      ...filled(form, "button[name=step][value=preview]"),
      message: "No production",
    });
    assertEquals(refused.status, 400, refused.text);
    assertStringIncludes(refused.doc.querySelector("#edit-refusal").textContent, "new-checkout");
    assertStringIncludes(refused.doc.querySelector("#referenced-by").textContent, "new-checkout");
    assertEquals(
      refused.doc.querySelector("#remove-environment").getAttribute("aria-invalid"),
      "true",
    );
    assertEquals((await manifest(w)).version, before.version);

    // qa is named by no override
    await w.push({
      ...FIXTURE,
      "namespace.toml": FIXTURE["namespace.toml"] + "[namespace.environments.qa]\n",
    });
    const qa = await w.page(`${ENVS}/remove?env=qa`, w.writer);
    const removed = await commit(w, `${ENVS}/remove`, qa, { message: "No qa" });
    assertEquals(removed.status, 303, removed.text);
    assertEquals((await manifest(w)).files["namespace.toml"], FIXTURE["namespace.toml"]);
  },
);

consoleTest("a namespace without files gets its first environment", async (w) => {
  const created = await w.json("POST", "/api/v1/tenants/acme/namespaces", {
    bearer: w.admin,
    json: { slug: "fresh" },
  });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const path = "/ui/t/acme/ns/fresh/edit/environments";
  const list = await w.page(path, w.tenantAdmin);
  assertEquals(list.status, 200, list.text);
  assertStringIncludes(list.doc.querySelector("#no-environment").textContent, "No environment yet");
  assertStringIncludes(
    list.doc.querySelector("#no-environment").textContent,
    "Add the first environment",
  );
  assertEquals(list.doc.querySelector("input[name=base]").getAttribute("value"), "0");
  const preview = await w.post(`${path}/add`, w.tenantAdmin, {
    ...filled(list, "button[name=step][value=preview]"),
    key: "production",
    message: "First environment",
  });
  assertEquals(preview.status, 200, preview.text);
  const done = await w.post(`${path}/add`, w.tenantAdmin, {
    ...filled(preview, "button[name=step][value=commit]"),
    step: "commit",
  });
  assertEquals(done.status, 303, done.text);
  const after = await manifest(w, "fresh");
  assertEquals(after.version, 1);
  assertEquals(
    after.files["namespace.toml"],
    "schema_version = 1\n\n[namespace.environments.production]\npublic_evaluate = false\n",
  );
});

consoleTest("a reader sees the list without forms; forged posts write nothing", async (w) => {
  const list = await w.page(ENVS, w.member);
  assertEquals(list.status, 200, list.text);
  assertEquals(list.doc.querySelectorAll("#environments tbody tr").length, 2);
  assert(list.doc.querySelector("form[action*='/edit/']") === null, "no form");
  assert(!list.text.includes("Remove"), "no links to the forms");
  for (const action of ["add", "public", "remove"]) {
    assertEquals((await w.page(`${ENVS}/${action}`, w.member)).status, 403, action);
  }
  const before = await manifest(w);
  const posts: [string, Record<string, string>][] = [
    ["add", { key: "qa", public_evaluate: "true" }],
    ["public", { environment: "production", public_evaluate: "true" }],
    ["remove", { environment: "staging" }],
  ];
  for (const [action, fields] of posts) {
    await forgedCommitRefused(w, `${ENVS}/${action}`, fields);
  }
  const after = await manifest(w);
  assertEquals(after.version, before.version);
  assertEquals(after.files["namespace.toml"], FIXTURE["namespace.toml"]);
});
