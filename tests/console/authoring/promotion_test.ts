/**
 * Promotion in the console: copying what is in force in staging to
 * production makes production serve the flag as staging does; into a
 * protected production the flow proposes a change request and commits
 * nothing; the same environment twice is refused naming `to`; a reader
 * sees no form and a forged post writes nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { formFields, pressed } from "../forms.ts";
import { consoleTest, type ConsoleWorld } from "../world.ts";
import { evaluate as evaluateFlag, forgedCommitRefused, manifest } from "./helpers.ts";

const API = "/api/v1/tenants/acme/namespaces/web";
const PROMOTE = "/ui/t/acme/ns/web/edit/flags/banner-text/promote";

/** Evaluates banner-text in `env` for someone. */
const evaluate = (w: ConsoleWorld, env: string) =>
  evaluateFlag(w, env, "banner-text", { targeting_key: "someone" });

consoleTest(
  "promoting banner-text from staging to production: production serves as staging",
  async (w) => {
    assertEquals((await evaluate(w, "production")).reason, "DEFAULT");
    const form = await w.page(`${PROMOTE}?from=staging&to=production`, w.writer);
    assertEquals(form.status, 200, form.text);
    assertStringIncludes(
      form.doc.querySelector("#promote-what").textContent,
      "Copies what is in force in staging (whether banner-text is on, its default and its rules) to production",
    );
    const fields = pressed(form, "button[value=preview]");
    assertEquals(fields.from, "staging");
    assertEquals(fields.to, "production");
    assertEquals(fields.message, "Promote banner-text from staging to production");
    const preview = await w.post(PROMOTE, w.writer, fields);
    assertEquals(preview.status, 200, preview.text);
    assertStringIncludes(preview.doc.querySelector("#edit-impact").textContent, "production");
    const done = await w.post(PROMOTE, w.writer, formFields(preview, "commit"));
    assertEquals(done.status, 303, done.text);
    assertEquals(
      done.headers.get("location"),
      "/ui/t/acme/ns/web/flags/banner-text?env=production",
    );
    const file = (await manifest(w)).files["flags/banner-text.toml"]!;
    assertStringIncludes(
      file,
      '[environments.production]\nenabled = false\ndefault = "plain"\nrule = []\n',
    );
    assertEquals((await evaluate(w, "production")).reason, "DISABLED");
  },
);

consoleTest(
  "promoting into a protected production proposes a change request, commits nothing",
  async (w) => {
    const protect = await w.json("PUT", `${API}/protection`, {
      bearer: w.admin,
      json: { environments: { production: { required_approvals: 1 } } },
    });
    assertEquals(protect.status, 200, JSON.stringify(protect.body));
    const before = await manifest(w);
    const form = await w.page(`${PROMOTE}?from=staging&to=production`, w.writer);
    const preview = await w.post(PROMOTE, w.writer, pressed(form, "button[value=preview]"));
    assertEquals(preview.status, 200, preview.text);
    assert(preview.doc.querySelector("button[name=step][value=propose]"), "proposed for review");
    assert(!preview.doc.querySelector("button[name=step][value=commit]"), "no commit button");
    assertStringIncludes(preview.doc.querySelector("#edit-impact").textContent, "(protected)");
    // a commit forced past the page is refused too
    const forced = await w.post(PROMOTE, w.writer, {
      ...formFields(preview, "propose"),
      step: "commit",
    });
    assertEquals(forced.status, 409, forced.text);
    const proposed = await w.post(PROMOTE, w.writer, formFields(preview, "propose"));
    assertEquals(proposed.status, 303, proposed.text);
    const location = proposed.headers.get("location") ?? "";
    assert(location.startsWith("/ui/t/acme/ns/web/changes/cr_"), location);
    assert(location.endsWith("?done=opened"), location);
    const id = location.slice("/ui/t/acme/ns/web/changes/".length, location.indexOf("?"));
    const request = await w.json("GET", `${API}/change-requests/${id}`, { bearer: w.admin });
    assertEquals(request.status, 200, JSON.stringify(request.body));
    assertEquals(
      (request.body as { change_request: { status: string } }).change_request.status,
      "open",
    );
    const after = await manifest(w);
    assertEquals(after.version, before.version, "nothing committed");
    assertEquals(after.files["flags/banner-text.toml"], before.files["flags/banner-text.toml"]);
    assertEquals((await evaluate(w, "production")).reason, "DEFAULT");
  },
);

consoleTest("promoting an environment onto itself is refused naming the target", async (w) => {
  const form = await w.page(PROMOTE, w.writer);
  const refused = await w.post(PROMOTE, w.writer, {
    ...pressed(form, "button[value=preview]"),
    from: "staging",
    to: "staging",
  });
  assertEquals(refused.status, 400, refused.text);
  assertEquals(refused.doc.querySelector("#promote-to").getAttribute("aria-invalid"), "true");
  assertEquals(
    refused.doc.querySelector("#promote-to option[selected]").getAttribute("value"),
    "staging",
  );
});

consoleTest("a reader sees no promotion form and a forged post writes nothing", async (w) => {
  assertEquals((await w.page(`${PROMOTE}?from=staging&to=production`, w.member)).status, 403);
  const before = await manifest(w);
  await forgedCommitRefused(w, PROMOTE, { from: "staging", to: "production" });
  const after = await manifest(w);
  assertEquals(after.version, before.version);
  assertEquals(after.files, before.files);
});
