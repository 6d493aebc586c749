/**
 * Segments in the console: the list (readers too, the button for writers),
 * a new segment with a date predicate and a pasted list that the
 * evaluation then serves, an edit that keeps the file's comments, a
 * deletion refused while something names the segment, a reference cycle
 * refused, a 10,000-id list through the edit form, and a reader's forged
 * posts writing nothing.
 */
import { assert, assertEquals, assertStringIncludes } from "../../assert.ts";
import { SEGMENT_OPERATORS } from "../../../lib/flags/authoring/mod.ts";
import { CONSOLE_BODY_LIMIT } from "../../../lib/console/routes.tsx";
import { formFields } from "../forms.ts";
import { FIXTURE } from "../fixture.ts";
import { consoleTest, type ConsoleWorld, type LoadedPage } from "../world.ts";

const UI = "/ui/t/acme/ns/web";
const LIST = `${UI}/segments`;
const NEW = `${UI}/edit/segments/_new`;
const EDIT = (key: string) => `${UI}/edit/segments/${key}`;
const API = "/api/v1/tenants/acme/namespaces/web";

/** The manifest's files at the head. */
async function files(w: ConsoleWorld): Promise<Record<string, string>> {
  const res = await w.json("GET", `${API}/manifest`, {
    bearer: w.admin,
    headers: { accept: "application/json" },
  });
  assertEquals(res.status, 200);
  return (res.body as { files: Record<string, string> }).files;
}

/** What production serves for `flag` to `context`. */
async function served(w: ConsoleWorld, flag: string, context: unknown): Promise<unknown> {
  const res = await w.json("POST", `${API}/environments/production/evaluate`, {
    bearer: w.admin,
    json: { flag, context },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return (res.body as { value: unknown }).value;
}

/** The base version a form was drawn on. */
const baseOf = (page: LoadedPage): string =>
  page.doc.querySelector("input[name=base]").getAttribute("value");

/**
 * A textarea's text as a browser reads it (linkedom leaves the character
 * references of a textarea undecoded).
 */
const decoded = (html: string): string =>
  html.replaceAll("&quot;", '"').replaceAll("&#39;", "'").replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">").replaceAll("&amp;", "&");

/** What the editor's form sends as drawn (its Preview button), textareas decoded. */
function editorFields(page: LoadedPage): Record<string, string> {
  const fields = formFields(page, "preview");
  for (const el of page.doc.querySelectorAll("form.editor textarea")) {
    fields[el.getAttribute("name")] = decoded(el.textContent);
  }
  return fields;
}

/** A boolean flag serving `on` to segment `segment`. */
const targeting = (segment: string) =>
  'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n' +
  `[[rule]]\nsegment = "${segment}"\nvariation = "on"\n`;

consoleTest("everyone reads the segments; writers get the button", async (w) => {
  const read = await w.page(LIST, w.member);
  assertEquals(read.status, 200, read.text);
  const rows = [...read.doc.querySelectorAll("#segments tbody tr")];
  assertEquals(rows.map((r) => r.querySelector("th").textContent.trim()), [
    "beta-testers",
    "eu-customers",
    "paying",
  ]);
  const paying = rows[2];
  assertEquals(paying.querySelector("a").getAttribute("href"), `${UI}/segments/paying`);
  assertStringIncludes(paying.textContent, "Paying customers");
  // new-checkout reaches paying through eu-customers, which names it
  assertStringIncludes(paying.textContent, "1 flag, 1 segment");
  assertEquals(read.doc.querySelector(`a[href="${NEW}"]`), null, "no button for a reader");
  const written = await w.page(LIST, w.writer);
  assertEquals(written.doc.querySelector(`a.button[href="${NEW}"]`).textContent, "New segment");
});

consoleTest("a namespace without segments says what one is", async (w) => {
  await w.push({
    "namespace.toml": FIXTURE["namespace.toml"]!,
    "flags/max-items.toml": FIXTURE["flags/max-items.toml"]!,
  });
  const read = await w.page(LIST, w.member);
  assertEquals(read.status, 200);
  assertStringIncludes(read.doc.querySelector("#empty-segments").textContent, "No segment yet");
  assertEquals(read.doc.querySelector(`a[href="${NEW}"]`), null);
  const written = await w.page(LIST, w.writer);
  assert(written.doc.querySelector(`#empty-segments a.button[href="${NEW}"]`));
});

consoleTest("a new segment: a date predicate and a pasted list, served by a flag", async (w) => {
  const form = await w.page(NEW, w.writer);
  assertEquals(form.status, 200, form.text);
  const ops = [...form.doc.querySelectorAll("#predicate-0-op option")]
    .map((o) => o.getAttribute("value")).filter((v) => v !== "");
  assertEquals(ops, [...SEGMENT_OPERATORS], "every operator, the date ones too");
  assertStringIncludes(form.doc.querySelector("#predicate-0-op").textContent, "date-time after");
  assert(form.doc.querySelector("#predicate-1-value"), "two empty rows");
  const fields = {
    base: baseOf(form),
    key: "early-eu",
    description: "Early customers in the EU",
    match: "all",
    "predicates.0.attribute": "user.created_at",
    "predicates.0.op": "after",
    "predicates.0.value": "2026-01-01T00:00:00Z",
    "predicates.1.attribute": "user.id",
    "predicates.1.op": "in",
    "predicates.1.value": "u-1\r\n\r\n  u-2  \r\nu-3\r\n",
    "predicates.2.attribute": "",
    "predicates.2.op": "",
    "predicates.2.value": "",
    message: "Add early-eu",
  };
  const preview = await w.post(NEW, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  assertStringIncludes(preview.text, "segments/early-eu.toml");
  const done = await w.post(NEW, w.writer, { ...fields, step: "commit" });
  assertEquals(done.status, 303, done.text);
  assertEquals(done.headers.get("location"), `${UI}/segments/early-eu`);
  assertEquals(
    (await files(w))["segments/early-eu.toml"],
    'schema_version = 1\ndescription = "Early customers in the EU"\nmatch = "all"\n\n' +
      '[[predicate]]\nattribute = "user.created_at"\nop = "after"\nvalue = "2026-01-01T00:00:00Z"\n\n' +
      '[[predicate]]\nattribute = "user.id"\nop = "in"\nvalue = ["u-1", "u-2", "u-3"]\n',
  );
  await w.push({ ...await files(w), "flags/early.toml": targeting("early-eu") });
  const joined = (at: string, id = "u-2") => ({ user: { id, created_at: at } });
  assertEquals(await served(w, "early", joined("2026-01-01T09:30:00+01:00")), true);
  assertEquals(await served(w, "early", joined("2026-01-01")), false, "the same instant");
  assertEquals(await served(w, "early", joined("2026-02-01T00:00:00Z", "u-9")), false);
});

consoleTest(
  "values keep their types, and a value that does not fit is refused on its row",
  async (w) => {
    const form = await w.page(NEW, w.writer);
    const fields = {
      base: baseOf(form),
      key: "typed",
      match: "any",
      "predicates.0.attribute": "account.seats",
      "predicates.0.op": "gte",
      "predicates.0.value": "100",
      "predicates.1.attribute": "account.code",
      "predicates.1.op": "eq",
      "predicates.1.value": '"10"',
      "predicates.2.attribute": "segment.paying",
      "predicates.2.op": "",
      "predicates.2.value": "",
      "predicates.3.attribute": "account.zip",
      "predicates.3.op": "in",
      "predicates.3.value": "10115\n20095",
      message: "Add typed",
    };
    const done = await w.post(NEW, w.writer, { ...fields, step: "commit" });
    assertEquals(done.status, 303, done.text);
    const text = (await files(w))["segments/typed.toml"]!;
    assertStringIncludes(text, 'op = "gte"\nvalue = 100\n');
    assertStringIncludes(text, 'op = "eq"\nvalue = "10"\n');
    assertStringIncludes(text, 'attribute = "segment.paying"\nop = "eq"\nvalue = true\n');
    assertStringIncludes(text, "value = [10115, 20095]\n");
    // drawn back, it reads the same: posting the form unchanged changes nothing
    const again = await w.page(EDIT("typed"), w.writer);
    assertEquals(decoded(again.doc.querySelector("#predicate-1-value").textContent), '"10"');
    const same = await w.post(EDIT("typed"), w.writer, {
      ...editorFields(again),
      match: "any",
      message: "nothing",
    });
    assertEquals(same.status, 200, same.text);
    assertStringIncludes(same.text, "changes nothing");
    const refused = await w.post(NEW, w.writer, {
      ...fields,
      key: "typed-2",
      "predicates.0.value": "a hundred",
    });
    assertEquals(refused.status, 400, refused.text);
    assertStringIncludes(refused.doc.querySelector("#edit-refusal").textContent, "is not a number");
    assertEquals(
      refused.doc.querySelector("#predicate-0-value").getAttribute("aria-invalid"),
      "true",
    );
    assertEquals(refused.doc.querySelector("#predicate-0-value").textContent, "a hundred");
    const badDate = await w.post(NEW, w.writer, {
      ...fields,
      base: baseOf(await w.page(NEW, w.writer)),
      key: "typed-2",
      "predicates.3.op": "before",
      "predicates.3.value": "next tuesday",
    });
    assertEquals(badDate.status, 400, badDate.text);
    assertStringIncludes(badDate.text, "RFC 3339");
    assertEquals(
      badDate.doc.querySelector("#predicate-3-value").getAttribute("aria-invalid"),
      "true",
    );
  },
);

consoleTest("an edit of the predicates keeps the file's comments", async (w) => {
  await w.push({
    ...FIXTURE,
    "segments/paying.toml": `schema_version = 1
# Paying: what billing calls an active plan.
description = "Paying customers"
match = "all"
[[predicate]]
attribute = "account.plan"
op = "in"
value = ["pro", "team"] # keep in step with billing
`,
  });
  const form = await w.page(EDIT("paying"), w.writer);
  assertEquals(form.status, 200, form.text);
  assertEquals(
    form.doc.querySelector("#predicate-0-attribute").getAttribute("value"),
    "account.plan",
  );
  assertEquals(form.doc.querySelector("#predicate-0-value").textContent, "pro\nteam");
  assert(form.doc.querySelector("#segment-match-all[checked]"));
  const fields = {
    ...editorFields(form),
    match: "all",
    "predicates.0.value": "pro\r\nteam\r\nenterprise",
    message: "Enterprise pays too",
  };
  const preview = await w.post(EDIT("paying"), w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  const done = await w.post(EDIT("paying"), w.writer, { ...fields, step: "commit" });
  assertEquals(done.status, 303, done.text);
  const text = (await files(w))["segments/paying.toml"]!;
  assertStringIncludes(text, "# Paying: what billing calls an active plan.\n");
  assertStringIncludes(text, '"enterprise"');
  assertStringIncludes(text, "# keep in step with billing");
  // a predicate removed with its box
  const again = await w.page(EDIT("beta-testers"), w.writer);
  const removed = await w.post(EDIT("beta-testers"), w.writer, {
    ...editorFields(again),
    match: "any",
    "predicates.0.remove": "yes",
    message: "none",
  });
  assertEquals(removed.status, 400, "a segment keeps one predicate at least");
  assertStringIncludes(removed.text, "at least one predicate");
});

consoleTest("a segment something names cannot be deleted; one nothing names can", async (w) => {
  const page = await w.page(`${EDIT("paying")}/delete`, w.writer);
  assertEquals(page.status, 200);
  assertStringIncludes(page.doc.querySelector("#edit-refusal").textContent, "eu-customers");
  assertEquals(
    page.doc.querySelector(`#segment-references a[href="${UI}/segments/eu-customers"]`)
      .textContent,
    "eu-customers",
  );
  assertEquals(page.doc.querySelector("input[name=confirm]"), null, "nothing to confirm");
  const forged = await w.post(`${EDIT("paying")}/delete`, w.writer, {
    base: baseOf(await w.page(EDIT("paying"), w.writer)),
    confirm: "yes",
    message: "Delete paying",
    step: "commit",
  });
  assertEquals(forged.status, 400, forged.text);
  assertStringIncludes(
    forged.doc.querySelector("#edit-refusal").textContent,
    "Segment paying is used by segment eu-customers (predicate 2)",
  );
  assert("segments/paying.toml" in await files(w), "still there");

  await w.push({
    ...FIXTURE,
    "segments/old-cohort.toml": 'schema_version = 1\n[[predicate]]\nattribute = "user.cohort"\n' +
      'op = "eq"\nvalue = "2019"\n',
  });
  const form = await w.page(`${EDIT("old-cohort")}/delete`, w.writer);
  assertEquals(form.status, 200, form.text);
  assertStringIncludes(form.text, "segments/old-cohort.toml");
  const unconfirmed = await w.post(`${EDIT("old-cohort")}/delete`, w.writer, {
    base: baseOf(form),
    message: "Delete old-cohort",
  });
  assertEquals(unconfirmed.status, 400);
  assertEquals(
    unconfirmed.doc.querySelector("#segment-delete-confirm").getAttribute("aria-invalid"),
    "true",
  );
  const fields = { base: baseOf(form), confirm: "yes", message: "Delete old-cohort" };
  const preview = await w.post(`${EDIT("old-cohort")}/delete`, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  const done = await w.post(`${EDIT("old-cohort")}/delete`, w.writer, {
    ...formFields(preview, "commit"),
  });
  assertEquals(done.status, 303, done.text);
  assertEquals(done.headers.get("location"), LIST);
  assert(!("segments/old-cohort.toml" in await files(w)), "deleted");
  assertEquals((await w.page(`${EDIT("old-cohort")}/delete`, w.writer)).status, 404);
  assertEquals((await w.page(EDIT("old-cohort"), w.writer)).status, 404);
});

consoleTest("a reference cycle is refused on its row, and nothing is written", async (w) => {
  const before = await files(w);
  const form = await w.page(EDIT("paying"), w.writer);
  const datalist = [...form.doc.querySelectorAll("#segment-references option")]
    .map((o) => o.getAttribute("value"));
  assertEquals(datalist, ["segment.beta-testers", "segment.eu-customers"]);
  const fields = {
    ...editorFields(form),
    match: "all",
    "predicates.2.attribute": "segment.eu-customers",
    "predicates.2.op": "eq",
    "predicates.2.value": "true",
    message: "loop",
  };
  for (const step of ["preview", "commit"]) {
    const refused = await w.post(EDIT("paying"), w.writer, { ...fields, step });
    assertEquals(refused.status, 400, refused.text);
    assertStringIncludes(refused.doc.querySelector("#edit-refusal").textContent, "cycle");
    assertEquals(
      refused.doc.querySelector("#predicate-2-attribute").getAttribute("aria-invalid"),
      "true",
    );
  }
  assertEquals(await files(w), before);
});

consoleTest("a list of 10,000 ids goes through the edit form", async (w) => {
  const ids = Array.from({ length: 10_000 }, (_, i) => `user-${String(i + 1).padStart(6, "0")}`);
  await w.push({
    ...FIXTURE,
    "segments/allow-list.toml": 'schema_version = 1\n[[predicate]]\nattribute = "user.id"\n' +
      `op = "in"\nvalue = [\n${ids.map((id) => `  "${id}",\n`).join("")}]\n`,
    "flags/allowed.toml": targeting("allow-list"),
  });
  const form = await w.page(EDIT("allow-list"), w.writer);
  assertEquals(form.status, 200);
  assertEquals(form.doc.querySelectorAll("textarea").length, 3, "one textarea a row");
  assertEquals(form.doc.querySelector("#predicate-0-value").textContent, ids.join("\n"));
  assertStringIncludes(form.doc.querySelector("#predicate-0-count").textContent, "10000 values");
  // what a browser sends: CRLF line ends, one id more
  const fields = {
    ...editorFields(form),
    match: "all",
    "predicates.0.value": [...ids.slice(0, 5000), "user-new", ...ids.slice(5000)].join("\r\n"),
    message: "One more",
  };
  const size = new URLSearchParams(fields).toString().length;
  assert(size < CONSOLE_BODY_LIMIT, `${size} bytes`);
  const preview = await w.post(EDIT("allow-list"), w.writer, fields);
  assertEquals(preview.status, 200, preview.text.slice(0, 2000));
  assertStringIncludes(preview.text, "+  &quot;user-new&quot;,");
  const done = await w.post(EDIT("allow-list"), w.writer, formFields(preview, "commit"));
  assertEquals(done.status, 303, done.text.slice(0, 2000));
  const text = (await files(w))["segments/allow-list.toml"]!;
  assertEquals(text.split("\n").length, 10_008);
  assertEquals(await served(w, "allowed", { user: { id: "user-new" } }), true);
  assertEquals(await served(w, "allowed", { user: { id: "user-010000" } }), true);
  assertEquals(await served(w, "allowed", { user: { id: "user-010001" } }), false);
});

consoleTest("a reader sees the list but no form, and forged posts write nothing", async (w) => {
  const before = await files(w);
  for (const path of [NEW, EDIT("paying"), `${EDIT("beta-testers")}/delete`]) {
    assertEquals((await w.page(path, w.member)).status, 403, path);
  }
  const forged = {
    base: "1",
    key: "sneaky",
    match: "all",
    "predicates.0.attribute": "user.id",
    "predicates.0.op": "eq",
    "predicates.0.value": "me",
    confirm: "yes",
    message: "sneak",
    step: "commit",
  };
  for (const path of [NEW, EDIT("paying"), `${EDIT("old")}/delete`, `${EDIT("paying")}/delete`]) {
    assertEquals((await w.post(path, w.member, forged)).status, 403, path);
  }
  assertEquals(await files(w), before);
});
