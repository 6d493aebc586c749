/**
 * Versions, diff and rollback in the console (lib/console/versions.tsx):
 * the list says who made each version and why, a page pages through the
 * rest, a diff shows the values and lines that changed, and a rollback
 * (confirmed, with a message) makes a new version equal to the old one,
 * for people who may write the manifest and nobody else.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { PLAIN_FLAG } from "./fixture.ts";
import { consoleTest, type ConsoleWorld, FIXTURE } from "./world.ts";

const VERSIONS = "/ui/t/acme/ns/web/versions";
const API = "/api/v1/tenants/acme/namespaces/web";

/** FIXTURE with new-checkout switched off in production, banner-text gone, extra added. */
const SECOND: Record<string, string> = (() => {
  const files = { ...FIXTURE };
  files["flags/new-checkout.toml"] = FIXTURE["flags/new-checkout.toml"]!.replace(
    "enabled = true",
    "enabled = false",
  );
  delete files["flags/banner-text.toml"];
  files["flags/extra.toml"] = PLAIN_FLAG;
  return files;
})();

// deno-lint-ignore no-explicit-any
function rows(doc: any): string[] {
  return [...doc.querySelectorAll("#version-table tbody tr")].map((r) =>
    // deno-lint-ignore no-explicit-any
    [...r.querySelectorAll("td")].map((td: any) => td.textContent.trim()).join(" | ")
      .replace(/\s+/g, " ")
  );
}

/** The files of a version through the API. */
async function filesOf(w: ConsoleWorld, version: number): Promise<Record<string, string>> {
  const res = await w.json("GET", `${API}/manifest?version=${version}`, {
    bearer: w.admin,
    headers: { accept: "application/json" },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return (res.body as { files: Record<string, string> }).files;
}

/** A version's metadata through the API. */
async function metaOf(
  w: ConsoleWorld,
  version: number,
): Promise<{ closure_hash: string; message: string; created_by: string }> {
  const res = await w.json("GET", `${API}/versions/${version}`, { bearer: w.admin });
  assertEquals(res.status, 200);
  return (res.body as { version: { closure_hash: string; message: string; created_by: string } })
    .version;
}

/** The head version through the API. */
async function headOf(w: ConsoleWorld): Promise<number> {
  const res = await w.json("GET", `${API}/versions?limit=1`, { bearer: w.admin });
  return (res.body as { versions: { version: number }[] }).versions[0]!.version;
}

consoleTest("the list shows each version's author, message, file count and hash", async (w) => {
  await w.push(SECOND, "switch the new checkout off");
  const back = await w.post(`${VERSIONS}/1/rollback`, w.writer, {
    message: "the new checkout is fine after all",
    confirm: "yes",
  });
  assertEquals(back.status, 303, back.text);
  const page = await w.page(VERSIONS, w.member);
  assertEquals(page.status, 200, page.text);
  const list = rows(page.doc);
  assertEquals(list.length, 4); // v3, v2, v1 and the empty v0
  assert(list[0]!.startsWith("v3"), list[0]);
  assertStringIncludes(list[0]!, "nia@acme.test");
  assertStringIncludes(list[0]!, "the new checkout is fine after all");
  assertStringIncludes(list[0]!, `| ${Object.keys(FIXTURE).length} |`);
  assertStringIncludes(list[1]!, "switch the new checkout off");
  assertStringIncludes(list[1]!, "tok_"); // the superadmin's token: a member cannot read it
  assert(list[3]!.startsWith("v0"), list[3]);
  const meta = await metaOf(w, 3);
  const hash = page.doc.querySelector("#version-table tbody tr code");
  assertEquals(hash.getAttribute("title"), meta.closure_hash);
  assertEquals(meta.closure_hash.startsWith(`sha256:${hash.textContent}`), true);
  assert(page.doc.querySelector(`a[href="${VERSIONS}/3"]`), "links to the version");
  assert(page.doc.querySelector('a[href="/ui/t/acme/ns/web/diff?from=2&to=3"]'), "changes link");
  assert(page.doc.querySelector("time[datetime]"), "times are <time> elements");
});

consoleTest("the compare form is a plain GET form to the diff page", async (w) => {
  await w.push(SECOND);
  const page = await w.page(VERSIONS, w.member);
  const form = page.doc.querySelector('form[aria-label="Compare two versions"]');
  assertEquals(form.getAttribute("method"), "get");
  assertEquals(form.getAttribute("action"), "/ui/t/acme/ns/web/diff");
  assertEquals(page.doc.querySelector('label[for="compare-from"]').textContent, "From version");
  assertEquals(form.querySelector("#compare-from").getAttribute("value"), "1");
  assertEquals(form.querySelector("#compare-to").getAttribute("value"), "2");
});

consoleTest(
  "a token author shows its name to who may read the token, its id to others",
  async (w) => {
    const minted = await w.json("POST", "/api/v1/tokens", {
      bearer: w.admin,
      json: {
        type: "namespace-write",
        name: "ci-deploy",
        tenant_slug: "acme",
        namespace_slug: "web",
      },
    });
    assertEquals(minted.status, 201, JSON.stringify(minted.body));
    const token = minted.body as { secret: string; token: { id: string } };
    const pushed = await w.json("PUT", `${API}/manifest`, {
      bearer: token.secret,
      json: { files: SECOND, message: "from CI" },
    });
    assertEquals(pushed.status, 201, JSON.stringify(pushed.body));
    const asWriter = rows((await w.page(VERSIONS, w.writer)).doc)[0]!;
    assertStringIncludes(asWriter, "ci-deploy (token)");
    const asMember = rows((await w.page(VERSIONS, w.member)).doc)[0]!;
    assertStringIncludes(asMember, token.token.id);
    assert(!asMember.includes("ci-deploy"), asMember);
  },
);

consoleTest("50 versions a page, and Older pages through the rest", async (w) => {
  for (let i = 0; i < 51; i++) {
    await w.push({
      ...FIXTURE,
      "flags/max-items.toml": FIXTURE["flags/max-items.toml"]!.replace(
        "schema_version = 1\n",
        `schema_version = 1\ndescription = "n${i}"\n`,
      ),
    }, `push ${i}`);
  }
  const first = await w.page(VERSIONS, w.member);
  const list = rows(first.doc);
  assertEquals(list.length, 50);
  assert(list[0]!.startsWith("v52"), list[0]);
  assert(list[49]!.startsWith("v3"), list[49]);
  const older = first.doc.querySelector('nav.pager a[href*="after="]');
  assertEquals(older.textContent, "Older");
  assertEquals(older.getAttribute("href"), `${VERSIONS}?after=3`);
  const second = await w.page(older.getAttribute("href"), w.member);
  assertEquals(rows(second.doc).map((r) => r.split(" ")[0]), ["v2", "v1", "v0"]);
  assert(!second.doc.querySelector('nav.pager a[href*="after="]'), "no page after the last");
  assertEquals(second.doc.querySelector("nav.pager a").textContent, "Newest");
  assertEquals((await w.page(`${VERSIONS}?after=x`, w.member)).status, 400);
});

consoleTest("a new version redraws the first page's table alone for htmx", async (w) => {
  const page = await w.page(VERSIONS, w.member);
  assertEquals(
    page.doc.querySelector("#version-table").getAttribute("hx-trigger"),
    "cfgtool:version from:body",
  );
  assertStringIncludes(page.doc.body.getAttribute("data-live"), "/ui/live");
  await w.push(SECOND);
  const frag = await w.page(VERSIONS, w.member, { "hx-request": "true" });
  assert(!frag.text.startsWith("<!doctype"), frag.text.slice(0, 40));
  assert(rows(frag.doc)[0]!.startsWith("v2"));
});

consoleTest("the diff shows changed values, line diffs and added and removed files", async (w) => {
  await w.push(SECOND);
  const page = await w.page("/ui/t/acme/ns/web/diff?from=1&to=2", w.member);
  assertEquals(page.status, 200, page.text);
  assertStringIncludes(page.text, "1 changed, 1 added, 1 removed.");
  const checkout = page.doc.querySelector(
    'section[aria-label="flags/new-checkout.toml (changed)"]',
  );
  assert(checkout, "the changed flag has a section");
  const values = [...checkout.querySelectorAll("ul.toml-changes li")].map((li) =>
    // deno-lint-ignore no-explicit-any
    (li as any).textContent
  );
  assertEquals(values, ["environments.production.enabled: true → false"]);
  assertEquals(checkout.querySelector(".del .sr-only").textContent.trim(), "removed:");
  assertStringIncludes(checkout.querySelector(".del").textContent, "-enabled = true");
  assertEquals(checkout.querySelector(".add .sr-only").textContent.trim(), "added:");
  assertStringIncludes(checkout.querySelector(".add").textContent, "+enabled = false");
  // the summary comes before the lines
  assert(checkout.innerHTML.indexOf("toml-changes") < checkout.innerHTML.indexOf('class="diff"'));
  assert(page.doc.querySelector('section[aria-label="flags/banner-text.toml (removed)"]'));
  assert(page.doc.querySelector('section[aria-label="flags/extra.toml (added)"]'));
  assertEquals(page.doc.querySelectorAll("section.card").length, 3);
  assert(page.text.length < 100_000);
});

consoleTest("equal versions have no differences", async (w) => {
  await w.push(SECOND);
  const back = await w.post(`${VERSIONS}/1/rollback`, w.writer, { message: "m", confirm: "yes" });
  assertEquals(back.status, 303);
  for (const [from, to] of [[2, 2], [1, 3]]) {
    const page = await w.page(`/ui/t/acme/ns/web/diff?from=${from}&to=${to}`, w.member);
    assertEquals(page.status, 200);
    assertEquals(page.doc.querySelector("h2").textContent, "No differences");
  }
});

consoleTest("a diff of versions that are not there, or not numbers, is refused", async (w) => {
  const missing = await w.page("/ui/t/acme/ns/web/diff?from=1&to=99", w.member);
  assertEquals(missing.status, 404);
  assertStringIncludes(missing.text, "No version 99");
  for (const q of ["from=x&to=1", "from=1", ""]) {
    const bad = await w.page(`/ui/t/acme/ns/web/diff?${q}`, w.member);
    assertEquals(bad.status, 400, q);
  }
  assertEquals((await w.page(`${VERSIONS}/99`, w.member)).status, 404);
  assertEquals((await w.page(`${VERSIONS}/one`, w.member)).status, 400);
});

consoleTest(
  "a version's page shows its details, files and changes since the one before",
  async (w) => {
    await w.push(SECOND, "switch off");
    const page = await w.page(`${VERSIONS}/2`, w.member);
    assertEquals(page.status, 200, page.text);
    assertEquals(page.doc.querySelector("h1").textContent, "Version 2 of web");
    assertStringIncludes(page.doc.querySelector("dl.meta").textContent, "switch off");
    const files = [...page.doc.querySelectorAll("tbody tr")].map((r) =>
      // deno-lint-ignore no-explicit-any
      [...(r as any).querySelectorAll("td")].map((td: any) => td.textContent.trim()).join(" ")
    );
    assertEquals(files.length, Object.keys(SECOND).length);
    const extra = new TextEncoder().encode(SECOND["flags/extra.toml"]!).length;
    assert(files.includes(`flags/extra.toml ${extra} B`), files.join("\n"));
    assertStringIncludes(page.text, "environments.production.enabled: true → false");
    assert(page.doc.querySelector('section[aria-label="flags/extra.toml (added)"]'));
    const zero = await w.page(`${VERSIONS}/0`, w.member);
    assertEquals(zero.status, 200);
    assertStringIncludes(zero.text, "This version has no files.");
  },
);

consoleTest(
  "a rollback as a namespace admin makes a new version equal to the old one",
  async (w) => {
    await w.push(SECOND, "switch off");
    const v1 = await w.page(`${VERSIONS}/1`, w.writer);
    const form = v1.doc.querySelector('form[action="/ui/t/acme/ns/web/versions/1/rollback"]');
    assert(form, "a writer sees the rollback form");
    assertEquals(form.querySelector("#rollback-message").hasAttribute("required"), true);
    assertEquals(form.querySelector("#rollback-confirm").hasAttribute("required"), true);
    assertStringIncludes(
      v1.doc.querySelector('label[for="rollback-confirm"]').textContent,
      "I understand this makes a new version whose files equal version 1",
    );
    const res = await w.post(`${VERSIONS}/1/rollback`, w.writer, {
      message: "back to the first flags",
      confirm: "yes",
    });
    assertEquals(res.status, 303, res.text);
    assertEquals(res.headers.get("location"), `${VERSIONS}/3?done=rollback&from=1`);
    assertEquals(await filesOf(w, 3), await filesOf(w, 1));
    assertEquals(await filesOf(w, 3), FIXTURE);
    const meta = await metaOf(w, 3);
    assertEquals(meta.message, "back to the first flags");
    assertEquals(meta.created_by, w.writer.user_id);
    const shown = await w.page(res.headers.get("location")!, w.writer);
    assertEquals(shown.status, 200);
    assertStringIncludes(
      shown.doc.querySelector('[role="status"].notice').textContent,
      "Version 3 was made by a rollback to version 1",
    );
    assertStringIncludes(shown.doc.querySelector("dl.meta").textContent, "nia@acme.test");
  },
);

consoleTest("a rollback without confirmation or message is refused, the input kept", async (w) => {
  await w.push(SECOND);
  const unconfirmed = await w.post(`${VERSIONS}/1/rollback`, w.writer, { message: "keep me" });
  assertEquals(unconfirmed.status, 400);
  assertEquals(unconfirmed.doc.querySelector("#rollback-message").getAttribute("value"), "keep me");
  assertStringIncludes(unconfirmed.doc.querySelector('[role="alert"]').textContent, "Tick the box");
  assertEquals(unconfirmed.doc.querySelector("#rollback-confirm").hasAttribute("checked"), false);
  const silent = await w.post(`${VERSIONS}/1/rollback`, w.writer, {
    message: "  ",
    confirm: "yes",
  });
  assertEquals(silent.status, 400);
  assertStringIncludes(
    silent.doc.querySelector('[role="alert"]').textContent,
    "message is required",
  );
  assertEquals(silent.doc.querySelector("#rollback-confirm").hasAttribute("checked"), true);
  assertEquals(await headOf(w), 2);
});

consoleTest("rolling back to the head's files makes nothing and says so", async (w) => {
  await w.push(SECOND);
  const head = await w.page(`${VERSIONS}/2`, w.writer);
  assert(!head.doc.querySelector("form[action$='/rollback']"), "no form for the head's files");
  assertStringIncludes(head.text, "nothing to roll back");
  const res = await w.post(`${VERSIONS}/2/rollback`, w.writer, { message: "m", confirm: "yes" });
  assertEquals(res.status, 303);
  assertEquals(res.headers.get("location"), `${VERSIONS}/2?done=unchanged`);
  const shown = await w.page(res.headers.get("location")!, w.writer);
  assertStringIncludes(
    shown.doc.querySelector(".notice").textContent.replace(/\s+/g, " "),
    "Nothing to roll back: version 2 has the same files as the head",
  );
  assertEquals(await headOf(w), 2);
});

consoleTest("a member sees no rollback form and a forged rollback is refused", async (w) => {
  await w.push(SECOND);
  const page = await w.page(`${VERSIONS}/1`, w.member);
  assertEquals(page.status, 200);
  assert(!page.doc.querySelector("form[action$='/rollback']"), "no rollback form");
  assert(!page.text.includes("Roll back"), "no rollback section");
  const forged = await w.post(`${VERSIONS}/1/rollback`, w.member, { message: "m", confirm: "yes" });
  assertEquals(forged.status, 403);
  assertEquals(await headOf(w), 2);
  const unconfirmed = await w.post(`${VERSIONS}/1/rollback`, w.member, { message: "" });
  assertEquals(unconfirmed.status, 403, "refused before the form is read");
});

consoleTest("a person of another tenant is refused every version page", async (w) => {
  await w.push(SECOND);
  const outsider = await w.person("eve@other.test", "other");
  for (const path of [VERSIONS, `${VERSIONS}/1`, "/ui/t/acme/ns/web/diff?from=1&to=2"]) {
    const res = await w.page(path, outsider);
    assertEquals(res.status, 403, path);
    assertStringIncludes(res.text, "Not allowed");
  }
  const forged = await w.post(`${VERSIONS}/1/rollback`, outsider, { message: "m", confirm: "yes" });
  assertEquals(forged.status, 403);
  assertEquals(await headOf(w), 2);
});
