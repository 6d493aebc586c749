/**
 * Change requests in the console (lib/console/change_requests.tsx and the
 * request's page): a quick change on a protected environment is proposed
 * for review instead of committed; the Changes page lists requests newest
 * first and filters them; a request's page shows what it changes (values,
 * lines, environments) and only the buttons its reader may use; each
 * action works, and each refusal (the wrong person, the wrong state, bad
 * input) shows the page again with an alert and writes nothing: neither
 * the request nor the audit log changes.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { versionKey } from "../../lib/store/keys.ts";
import { formFields, pressed } from "./forms.ts";
import { consoleTest, type ConsoleWorld, FIXTURE, type LoadedPage, type Person } from "./world.ts";

const API = "/api/v1/tenants/acme/namespaces/web";
const CHANGES = "/ui/t/acme/ns/web/changes";
const TOGGLE = "/ui/t/acme/ns/web/flags/new-checkout/change?env=production&kind=toggle";

/** Protects environments of acme/web (as the superadmin, through the API). */
async function protect(w: ConsoleWorld, approvals: Record<string, number>): Promise<void> {
  const environments = Object.fromEntries(
    Object.entries(approvals).map(([env, n]) => [env, { required_approvals: n }]),
  );
  const res = await w.json("PUT", `${API}/protection`, { bearer: w.admin, json: { environments } });
  assertEquals(res.status, 200, JSON.stringify(res.body));
}

/** The id of the request a redirect goes to (`…/changes/<id>?done=<done>`). */
function requestIdOf(page: LoadedPage, done: string): string {
  assertEquals(page.status, 303, page.text);
  const location = page.headers.get("location") ?? "";
  const m = new RegExp(`^${CHANGES}/(cr_[0-9A-Z]{26})\\?done=${done}$`).exec(location);
  assert(m !== null, location);
  return m[1]!;
}

/** `who` proposes a quick change of new-checkout (a toggle in production by default). */
async function propose(
  w: ConsoleWorld,
  who: Person,
  message: string,
  url = TOGGLE,
  fields: Record<string, string> = {},
): Promise<string> {
  const form = await w.page(url, who);
  assertEquals(form.status, 200, form.text);
  const sent = { ...formFields(form, "preview"), ...fields, message, step: "propose" };
  return requestIdOf(await w.post(url, who, sent), "opened");
}

/** A request as the API shows it (read as the superadmin). */
async function record(w: ConsoleWorld, id: string) {
  const res = await w.json("GET", `${API}/change-requests/${id}`, { bearer: w.admin });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return res.body as {
    change_request: {
      status: string;
      approvals: { user_id: string; comment?: string }[];
      applied_version: number | null;
      scheduled_at: string | null;
      rejection: unknown;
    };
    comments: { text: string }[];
  };
}

/** The types of acme's audit entries, newest first. */
async function auditTypes(w: ConsoleWorld): Promise<string[]> {
  const res = await w.json("GET", "/api/v1/audit?tenant=acme&limit=200", { bearer: w.admin });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return (res.body.entries as { type: string }[]).map((e) => e.type);
}

/** The versions of acme/web, newest first. */
async function versions(w: ConsoleWorld): Promise<{ version: number; created_by: string }[]> {
  const res = await w.json("GET", `${API}/versions`, { bearer: w.admin });
  return (res.body as { versions: { version: number; created_by: string }[] }).versions;
}

/** The action forms of a request's page, by the last segment of their address. */
function actions(page: LoadedPage): string[] {
  return [...page.doc.querySelectorAll("main form[method=post]")].map((f) =>
    f.getAttribute("action").split("/").at(-1)
  ).sort();
}

/** Two days from now, as a `datetime-local` field holds it (read as UTC). */
function inTwoDays(): string {
  return new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 16);
}

function alertText(page: LoadedPage): string {
  return page.doc.querySelector('[role="alert"]')?.textContent.replace(/\s+/g, " ").trim() ?? "";
}

function mainText(page: LoadedPage): string {
  return page.doc.querySelector("main").textContent.replace(/\s+/g, " ");
}

consoleTest(
  "a quick change on a protected environment is shown again (409) and proposed for review",
  async (w) => {
    await protect(w, { production: 1 });
    const form = await w.page(TOGGLE, w.writer);
    const shown = await w.post(TOGGLE, w.writer, {
      ...formFields(form, "preview"),
      message: "stop the new checkout",
    });
    assertEquals(shown.status, 200, shown.text);
    const refused = await w.post(TOGGLE, w.writer, formFields(shown, "commit"));
    assertEquals(refused.status, 409, refused.text);
    assertStringIncludes(alertText(refused), "protected environment production");
    assertStringIncludes(alertText(refused), "needs 1 approval before it lands");
    assertEquals(refused.doc.querySelector('button[value="commit"]'), null);
    const button = refused.doc.querySelector('button[name="step"][value="propose"]');
    assertEquals(button.textContent.trim(), "Propose for review");
    assertStringIncludes(refused.text, "+enabled = false"); // the preview again
    assertEquals((await versions(w)).length, 2, "nothing was committed"); // v1 and v0

    const id = requestIdOf(
      await w.post(TOGGLE, w.writer, formFields(refused, "propose")),
      "opened",
    );
    const page = await w.page(`${CHANGES}/${id}?done=opened`, w.writer);
    assertEquals(page.status, 200, page.text);
    assertEquals(page.doc.querySelector("h1").textContent, "Change request: stop the new checkout");
    assertStringIncludes(
      page.doc.querySelector('.notice[role="status"]').textContent,
      "It needs 1 approval before it can be applied",
    );
    const r = await record(w, id);
    assertEquals(r.change_request.status, "open");
    assertEquals((await versions(w)).length, 2);
    assertEquals((await auditTypes(w))[0], "change_request.opened");
  },
);

consoleTest("the Changes page lists requests newest first and filters them", async (w) => {
  await protect(w, { production: 1 });
  const first = await propose(w, w.writer, "stop the new checkout");
  w.advance(1000);
  const second = await propose(
    w,
    w.writer,
    "winter sale in staging",
    "/ui/t/acme/ns/web/flags/banner-text/change?env=staging&kind=default",
    { variation: "sale" },
  );
  const page = await w.page(CHANGES, w.member);
  assertEquals(page.status, 200, page.text);
  const rows = [...page.doc.querySelectorAll("#change-table tbody tr")].map((tr) =>
    [...tr.querySelectorAll("td")].map((td) => td.textContent.replace(/\s+/g, " ").trim())
  );
  assertEquals(rows.length, 2);
  assertEquals(rows[0]!.slice(0, 5), [
    `winter sale in staging${second}`,
    "nia@acme.test",
    "approved",
    "staging",
    "0/0",
  ]);
  assertEquals(rows[1]!.slice(0, 5), [
    `stop the new checkout${first}`,
    "nia@acme.test",
    "open",
    "production (protected)",
    "0/1",
  ]);
  assert(page.doc.querySelector(`#change-table a[href="${CHANGES}/${first}"]`));
  assert(page.doc.querySelector("#change-table time[datetime]"), "the updated time");

  const open = await w.page(`${CHANGES}?status=open`, w.member);
  const ids = (p: LoadedPage) =>
    [...p.doc.querySelectorAll("#change-table tbody .mono")].map((e) => e.textContent);
  assertEquals(ids(open), [first]);
  assertEquals(
    open.doc.querySelector("#changes-status option[selected]").getAttribute("value"),
    "open",
  );
  assertEquals(ids(await w.page(`${CHANGES}?status=approved`, w.member)), [second]);
  assertEquals(ids(await w.page(`${CHANGES}?status=pending`, w.member)), [second, first]);
  const none = await w.page(`${CHANGES}?status=applied`, w.member);
  assertStringIncludes(mainText(none), "No change request matches.");
  const flag = await w.page(`${CHANGES}?flag=banner-text`, w.member);
  assertEquals(ids(flag), [second]);
  const bad = await w.page(`${CHANGES}?status=merged`, w.member);
  assertEquals(bad.status, 400);
  assertStringIncludes(alertText(bad), "status must be one of pending, open");
});

consoleTest(
  "a request's page shows the value diff, the line diff and the protected environment",
  async (w) => {
    await protect(w, { production: 1 });
    const id = await propose(w, w.writer, "stop the new checkout");
    const page = await w.page(`${CHANGES}/${id}`, w.member);
    assertEquals(page.status, 200, page.text);
    const values = [...page.doc.querySelectorAll('ul[aria-label="Values it changes"] li')]
      .map((li) => li.textContent);
    assertEquals(values, ["flag new-checkout in production: enabled: true → false"]);
    const added = [...page.doc.querySelectorAll(".diff .add")].map((e) =>
      e.textContent.replace(/^added: ?/, "")
    );
    assertEquals(added, ["+enabled = false"]);
    assert(page.doc.querySelector('section[aria-label="flags/new-checkout.toml (changed)"]'));
    const impact = page.doc.querySelector('section[aria-labelledby="impact-heading"]');
    const cells = [...impact.querySelectorAll("tbody td")].map((td) =>
      td.textContent.replace(/\s+/g, " ").trim()
    );
    assertEquals(cells, ["production", "protected needs 1 approval"]);
    assertStringIncludes(impact.textContent, "it has 0");
    const facts = page.doc.querySelector("dl.facts").textContent.replace(/\s+/g, " ");
    assertStringIncludes(facts, "open Open: waiting for approvals");
    assertStringIncludes(facts, "nia@acme.test");
    assertStringIncludes(facts, "version 1");
  },
);

consoleTest("each reader sees only the buttons they may use", async (w) => {
  await protect(w, { production: 1 });
  const id = await propose(w, w.writer, "stop the new checkout");
  const url = `${CHANGES}/${id}`;
  assertEquals(actions(await w.page(url, w.writer)), ["comment", "withdraw"]);
  assertEquals(actions(await w.page(url, w.tenantAdmin)), ["approve", "comment", "reject"]);
  assertEquals(actions(await w.page(url, w.member)), ["comment"]);

  const approved = await w.post(`${url}/approve`, w.tenantAdmin, { comment: "" });
  assertEquals(approved.status, 303, approved.text);
  assertEquals(actions(await w.page(url, w.writer)), ["apply", "comment", "schedule", "withdraw"]);
  assertEquals(actions(await w.page(url, w.tenantAdmin)), [
    "apply",
    "comment",
    "reject",
    "schedule",
  ]);
  assertEquals(actions(await w.page(url, w.member)), ["comment"]);
});

consoleTest(
  "a reviewer approves with a comment, the author applies, and a version appears",
  async (w) => {
    await protect(w, { production: 1 });
    const id = await propose(w, w.writer, "stop the new checkout");
    const url = `${CHANGES}/${id}`;
    const approve = await w.post(`${url}/approve`, w.tenantAdmin, { comment: "fine by me" });
    assertEquals(approve.status, 303, approve.text);
    assertEquals(approve.headers.get("location"), `${url}?done=approved`);
    const approvedPage = await w.page(`${url}?done=approved`, w.tenantAdmin);
    assertStringIncludes(
      approvedPage.doc.querySelector('.notice[role="status"]').textContent,
      "You approved this change request. It has the approvals it needs.",
    );
    const review = approvedPage.doc.querySelector('section[aria-labelledby="review-heading"]');
    assertStringIncludes(review.textContent.replace(/\s+/g, " "), "ada@acme.test approved");
    assertStringIncludes(review.textContent, "fine by me");
    assertEquals((await record(w, id)).change_request.status, "approved");

    const apply = await w.post(`${url}/apply`, w.writer, {});
    assertEquals(apply.status, 303, apply.text);
    assertEquals(apply.headers.get("location"), `${url}?done=applied`);
    const [v2] = await versions(w);
    assertEquals(v2!.version, 2);
    assertEquals(v2!.created_by, w.writer.user_id);
    const applied = await w.page(`${url}?done=applied`, w.writer);
    assertStringIncludes(
      applied.doc.querySelector('.notice[role="status"]').textContent,
      "applied as version 2",
    );
    assert(applied.doc.querySelector('a[href="/ui/t/acme/ns/web/versions/2"]'));
    assertEquals(actions(applied), ["comment"]);
    const r = await record(w, id);
    assertEquals([r.change_request.status, r.change_request.applied_version], ["applied", 2]);
    const types = await auditTypes(w);
    // the version and the request's apply are one commit: their entries come together
    assertEquals(types.slice(0, 2).sort(), ["change_request.applied", "manifest.pushed"]);
    assertEquals(types[2], "change_request.approved");
  },
);

consoleTest("every refusal shows the page with an alert and writes nothing", async (w) => {
  await protect(w, { production: 1 });
  const id = await propose(w, w.writer, "stop the new checkout");
  const url = `${CHANGES}/${id}`;
  const before = JSON.stringify(await record(w, id));
  const audited = (await auditTypes(w)).length;
  const unchanged = async (what: string) => {
    assertEquals(JSON.stringify(await record(w, id)), before, what);
    assertEquals((await auditTypes(w)).length, audited, what);
  };
  const refusals: [string, Person, Record<string, string>, number, string][] = [
    ["approve", w.member, {}, 403, "Could not approve this change request"],
    ["approve", w.writer, {}, 403, "The author of a change request cannot review it"],
    ["reject", w.member, { comment: "no" }, 403, "Could not reject this change request"],
    ["reject", w.tenantAdmin, { comment: "  " }, 400, "A comment is required"],
    ["withdraw", w.tenantAdmin, { confirm: "yes" }, 403, "Only the author"],
    ["withdraw", w.writer, {}, 400, "Tick the box"],
    ["apply", w.writer, {}, 409, "is open: it cannot be applied"],
    ["schedule", w.writer, { at: inTwoDays() }, 409, "is open: it cannot be applied"],
    ["cancel-schedule", w.writer, {}, 409, "it cannot be unscheduled"],
    ["comment", w.member, { text: " " }, 400, "A comment is required"],
  ];
  for (const [action, who, form, status, text] of refusals) {
    const page = await w.post(`${url}/${action}`, who, form);
    assertEquals(page.status, status, `${action}: ${page.text}`);
    assertStringIncludes(alertText(page), text, `${action}: ${alertText(page)}`);
    assertEquals(page.doc.querySelector("h1").textContent, "Change request: stop the new checkout");
    assert(!page.text.includes("    at "), "no stack trace");
    await unchanged(action);
  }
  // the field the refusal is about is marked, and what was typed is kept
  const reject = await w.post(`${url}/reject`, w.tenantAdmin, { comment: "  " });
  assertEquals(reject.doc.querySelector("#reject-comment").getAttribute("aria-invalid"), "true");
  assertEquals(
    reject.doc.querySelector("#reject-comment").getAttribute("aria-describedby"),
    "action-error",
  );

  // withdrawn, it can no longer be approved (409), nor withdrawn again
  const withdrawn = await w.post(`${url}/withdraw`, w.writer, { confirm: "yes" });
  assertEquals(withdrawn.headers.get("location"), `${url}?done=withdrawn`);
  assertEquals((await record(w, id)).change_request.status, "withdrawn");
  const after = JSON.stringify(await record(w, id));
  const late = await w.post(`${url}/approve`, w.tenantAdmin, {});
  assertEquals(late.status, 409, late.text);
  assertStringIncludes(alertText(late), `Change request ${id} is withdrawn: it cannot be approved`);
  assertEquals(JSON.stringify(await record(w, id)), after);
  assertEquals(actions(await w.page(url, w.writer)), ["comment"]);
});

consoleTest("an unknown request is a 404 page, for reading and for acting", async (w) => {
  const unknown = "cr_01J00000000000000000000000";
  const page = await w.page(`${CHANGES}/${unknown}`, w.member);
  assertEquals(page.status, 404);
  assertStringIncludes(alertText(page), `No change request ${unknown} in acme/web`);
  const acted = await w.post(`${CHANGES}/${unknown}/approve`, w.tenantAdmin, {});
  assertEquals(acted.status, 404);
  assertEquals((await w.page(`${CHANGES}/not-an-id`, w.member)).status, 404);
  assertEquals((await w.post(`${CHANGES}/${unknown}/merge`, w.tenantAdmin, {})).status, 404);
});

consoleTest(
  "a request is scheduled in UTC, refused in the past, and the schedule cancelled",
  async (w) => {
    await protect(w, { production: 1 });
    const id = await propose(w, w.writer, "stop the new checkout");
    const url = `${CHANGES}/${id}`;
    assertEquals((await w.post(`${url}/approve`, w.tenantAdmin, {})).status, 303);
    const approved = await w.page(url, w.writer);
    const field = approved.doc.querySelector("#schedule-at");
    assertEquals(field.getAttribute("type"), "datetime-local");
    assertEquals(
      approved.doc.querySelector('label[for="schedule-at"]').textContent,
      "Apply at (UTC)",
    );
    assertStringIncludes(
      approved.doc.querySelector("#schedule-at-hint").textContent,
      "The time is UTC",
    );

    const audited = (await auditTypes(w)).length;
    const past = await w.post(`${url}/schedule`, w.writer, { at: "2020-01-01T09:00" });
    assertEquals(past.status, 400, past.text);
    assertStringIncludes(alertText(past), "is in the past");
    assertEquals(past.doc.querySelector("#schedule-at").getAttribute("value"), "2020-01-01T09:00");
    assertEquals(past.doc.querySelector("#schedule-at").getAttribute("aria-invalid"), "true");
    const empty = await w.post(`${url}/schedule`, w.writer, { at: "" });
    assertEquals(empty.status, 400);
    assertStringIncludes(alertText(empty), "Choose the date and time (UTC)");
    assertEquals((await record(w, id)).change_request.status, "approved");
    assertEquals((await auditTypes(w)).length, audited);

    const at = inTwoDays();
    const scheduled = await w.post(`${url}/schedule`, w.writer, { at });
    assertEquals(scheduled.status, 303, scheduled.text);
    assertEquals(scheduled.headers.get("location"), `${url}?done=scheduled`);
    const r = await record(w, id);
    assertEquals(r.change_request.status, "scheduled");
    assertEquals(r.change_request.scheduled_at, `${at}:00.000Z`);
    const page = await w.page(`${url}?done=scheduled`, w.writer);
    assertStringIncludes(
      page.doc.querySelector('.notice[role="status"]').textContent,
      `it applies at ${at.replace("T", " ")} UTC`,
    );
    // a scheduled request may still be applied now, or at another time
    assertEquals(actions(page), ["apply", "cancel-schedule", "comment", "schedule", "withdraw"]);
    assertEquals(actions(await w.page(url, w.member)), ["comment"]);

    const cancelled = await w.post(`${url}/cancel-schedule`, w.writer, {});
    assertEquals(cancelled.headers.get("location"), `${url}?done=unscheduled`);
    assertEquals((await record(w, id)).change_request.status, "approved");
    assertEquals((await auditTypes(w)).slice(0, 2), [
      "change_request.schedule_cancelled",
      "change_request.scheduled",
    ]);
    assertEquals((await versions(w)).length, 2, "nothing applied");
  },
);

consoleTest("a reviewer rejects with a reason, and anyone who may propose comments", async (w) => {
  await protect(w, { production: 1 });
  const id = await propose(w, w.writer, "stop the new checkout");
  const url = `${CHANGES}/${id}`;
  const commented = await w.post(`${url}/comment`, w.member, { text: "can we wait for Monday?" });
  assertEquals(commented.headers.get("location"), `${url}?done=commented`);
  const rejected = await w.post(`${url}/reject`, w.tenantAdmin, { comment: "not this week" });
  assertEquals(rejected.headers.get("location"), `${url}?done=rejected`);
  const page = await w.page(url, w.writer);
  const text = mainText(page);
  assertStringIncludes(text, "Comments (1)");
  assertStringIncludes(text, "ana@acme.test");
  assertStringIncludes(text, "can we wait for Monday?");
  assertStringIncludes(text, "Rejected by ada@acme.test");
  assertStringIncludes(text, "not this week");
  assertEquals(actions(page), ["comment"]);
  const r = await record(w, id);
  assertEquals(r.change_request.status, "rejected");
  assertEquals(r.comments.map((c) => c.text), ["can we wait for Monday?"]);
});

consoleTest("the rollout form opens a rollout request; bad steps are refused, kept", async (w) => {
  await protect(w, { production: 1 });
  const list = await w.page(CHANGES, w.writer);
  const form = list.doc.querySelector('form[aria-label="Start a progressive rollout"]');
  assert(form, "a writer sees the rollout form");
  assertEquals(list.doc.querySelector('label[for="rollout-steps"]').textContent, "Steps (percent)");
  const fields = pressed(list, 'form[aria-label="Start a progressive rollout"] button');
  assertEquals([fields.flag, fields.environment], ["banner-text", "production"]);

  const audited = (await auditTypes(w)).length;
  const bad = await w.post(`${CHANGES}/rollout`, w.writer, {
    ...fields,
    flag: "new-checkout",
    steps: "5,half",
    message: "slowly",
  });
  assertEquals(bad.status, 400, bad.text);
  assertStringIncludes(alertText(bad), "Steps are whole percentages");
  assertEquals(bad.doc.querySelector("#rollout-steps").getAttribute("value"), "5,half");
  assertEquals(bad.doc.querySelector("#rollout-steps").getAttribute("aria-invalid"), "true");
  assertEquals(bad.doc.querySelector("#rollout-message").getAttribute("value"), "slowly");
  assertEquals(
    bad.doc.querySelector("#rollout-flag option[selected]").getAttribute("value"),
    "new-checkout",
  );
  const noRollout = await w.post(`${CHANGES}/rollout`, w.writer, {
    ...fields,
    flag: "max-items",
    message: "slowly",
  });
  assertEquals(noRollout.status, 400);
  assertStringIncludes(alertText(noRollout), "max-items has no rollout of two variations");
  const soon = await w.post(`${CHANGES}/rollout`, w.writer, {
    ...fields,
    flag: "new-checkout",
    every: "soon",
    message: "slowly",
  });
  assertEquals(soon.status, 400);
  assertStringIncludes(alertText(soon), "a whole number and a unit (m, h, d, w)");
  assertEquals(soon.doc.querySelector("#rollout-every").getAttribute("aria-invalid"), "true");
  assertEquals((await auditTypes(w)).length, audited);

  const id = requestIdOf(
    await w.post(`${CHANGES}/rollout`, w.writer, {
      ...fields,
      flag: "new-checkout",
      steps: "5, 25,50,100",
      every: "1d",
      message: "roll the new checkout out",
    }),
    "opened",
  );
  const page = await w.page(`${CHANGES}/${id}`, w.writer);
  const plan = page.doc.querySelector('section[aria-labelledby="plan-heading"]');
  assertStringIncludes(plan.textContent.replace(/\s+/g, " "), "one step every 1d: 0 of 4 steps");
  const steps = [...plan.querySelectorAll("li")].map((li) =>
    li.textContent.replace(/\s+/g, " ").trim()
  );
  assertEquals(steps, ["5% to come", "25% to come", "50% to come", "100% to come"]);
  assertEquals((await record(w, id)).change_request.status, "open");
  assertEquals(actions(await w.page(CHANGES, w.member)).includes("rollout"), true);

  // its approval starts the plan: the first step is due now
  assertEquals((await w.post(`${CHANGES}/${id}/approve`, w.tenantAdmin, {})).status, 303);
  assertEquals((await record(w, id)).change_request.status, "scheduled");
  const started = await w.page(`${CHANGES}/${id}`, w.writer);
  const first = started.doc.querySelector('section[aria-labelledby="plan-heading"] li');
  assertStringIncludes(first.textContent.replace(/\s+/g, " "), "5% next at");
  // a started rollout may take its next step now, be rescheduled, or stop
  assertEquals(actions(started), ["apply", "cancel-schedule", "comment", "schedule", "withdraw"]);
});

consoleTest(
  "admins set the protected environments; a member sees them, and a forged post changes nothing",
  async (w) => {
    const member = await w.page(CHANGES, w.member);
    assertEquals(member.doc.querySelector('form[aria-label="Protected environments"]'), null);
    assertStringIncludes(mainText(member), "No environment of web is protected.");
    const forged = await w.post(`${CHANGES}/protection`, w.member, { "approvals.production": "1" });
    assertEquals(forged.status, 403, forged.text);
    assertStringIncludes(alertText(forged), "Could not save the protected environments");
    const read = async () =>
      (await w.json("GET", `${API}/protection`, { bearer: w.admin })).body.environments;
    assertEquals(await read(), {});
    assert(!(await auditTypes(w)).includes("namespace.protection_changed"));

    const admin = await w.page(CHANGES, w.tenantAdmin);
    const fields = pressed(admin, 'form[aria-label="Protected environments"] button');
    assertEquals(fields, { "approvals.production": "0", "approvals.staging": "0" });
    assertEquals(
      admin.doc.querySelector('label[for="protect-production"]').textContent,
      "Approvals needed in production",
    );
    const saved = await w.post(`${CHANGES}/protection`, w.tenantAdmin, {
      ...fields,
      "approvals.production": "2",
    });
    assertEquals(saved.status, 303, saved.text);
    assertEquals(saved.headers.get("location"), `${CHANGES}?done=protection`);
    assertEquals(await read(), { production: { required_approvals: 2 } });
    assertEquals((await auditTypes(w))[0], "namespace.protection_changed");
    const after = await w.page(`${CHANGES}?done=protection`, w.member);
    assertStringIncludes(mainText(after), "production: a change needs 2 approvals");
    assertStringIncludes(mainText(after), "The protected environments were saved.");

    const tooMany = await w.post(`${CHANGES}/protection`, w.writer, {
      "approvals.production": "9",
    });
    assertEquals(tooMany.status, 400, tooMany.text);
    assertStringIncludes(alertText(tooMany), "required_approvals of production must be");
    assertEquals(await read(), { production: { required_approvals: 2 } });
  },
);

consoleTest(
  "the flags page links a flag's pending request, or the filtered list for several",
  async (w) => {
    await protect(w, { production: 1 });
    const flags = "/ui/t/acme/ns/web/env/production";
    assertEquals((await w.page(flags, w.member)).doc.querySelector("a.badge"), null);
    const id = await propose(w, w.writer, "stop the new checkout");
    const one = await w.page(flags, w.member);
    const badge = one.doc.querySelector("a.badge");
    assertEquals(badge.textContent.trim(), "change pending");
    assertEquals(badge.getAttribute("href"), `${CHANGES}/${id}`);
    assertStringIncludes(badge.closest("tr").textContent, "new-checkout");
    assert(one.doc.querySelector(`nav a[href="${CHANGES}"]`), "the namespace links its changes");

    w.advance(1000);
    await propose(w, w.writer, "half and half", TOGGLE.replace("toggle", "weights"), {
      "weight.on": "50",
      "weight.off": "50",
    });
    const two = await w.page(flags, w.member);
    const both = two.doc.querySelector("a.badge");
    assertEquals(both.textContent.trim(), "2 changes pending");
    assertEquals(both.getAttribute("href"), `${CHANGES}?status=pending&flag=new-checkout`);
    const listed = await w.page(both.getAttribute("href"), w.member);
    assertEquals(listed.doc.querySelectorAll("#change-table tbody tr").length, 2);
    // a fragment (the live redraw) carries the badges too
    const fragment = await w.page(flags, w.member, { "hx-request": "true" });
    assertStringIncludes(fragment.text, "2 changes pending");

    assertEquals(
      (await w.post(`${CHANGES}/${id}/withdraw`, w.writer, { confirm: "yes" })).status,
      303,
    );
    const withdrawn = await w.page(flags, w.member);
    assertEquals(withdrawn.doc.querySelector("a.badge").textContent.trim(), "change pending");
  },
);

consoleTest(
  "a rollback on a protected environment is shown again (409) and proposed for review",
  async (w) => {
    await w.push({
      ...FIXTURE,
      "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
        "enabled = true",
        "enabled = false",
      ),
    }, "switch the new checkout off");
    await protect(w, { production: 1 });
    const audited = (await auditTypes(w)).length;
    const refused = await w.post("/ui/t/acme/ns/web/versions/1/rollback", w.writer, {
      message: "the new checkout is fine after all",
      confirm: "yes",
    });
    assertEquals(refused.status, 409, refused.text);
    assertStringIncludes(alertText(refused), "protected environment production");
    assertEquals(
      refused.doc.querySelector("#rollback-message").getAttribute("value"),
      "the new checkout is fine after all",
    );
    const button = refused.doc.querySelector('button[name="step"][value="propose"]');
    assertEquals(button.textContent.trim(), "Propose rollback for review");
    assertEquals((await versions(w)).length, 3);
    assertEquals((await auditTypes(w)).length, audited);

    const sent = pressed(refused, 'button[name="step"][value="propose"]');
    const id = requestIdOf(
      await w.post("/ui/t/acme/ns/web/versions/1/rollback", w.writer, sent),
      "opened",
    );
    const page = await w.page(`${CHANGES}/${id}`, w.tenantAdmin);
    assertStringIncludes(
      page.doc.querySelector('ul[aria-label="Values it changes"]').textContent,
      "flag new-checkout in production: enabled: false → true",
    );
    assertEquals((await record(w, id)).change_request.status, "open");
    assertEquals((await versions(w)).length, 3);
  },
);

consoleTest("a request's base is kept with it: pruning the version leaves its diff", async (w) => {
  await protect(w, { production: 1 });
  const id = await propose(w, w.writer, "stop the new checkout");
  // a description-only push lands (it affects no environment), then version 1 is pruned
  await w.push({
    ...FIXTURE,
    "flags/max-items.toml": FIXTURE["flags/max-items.toml"]!.replace(
      "schema_version = 1\n",
      'schema_version = 1\ndescription = "How many"\n',
    ),
  });
  await w.kv.delete(versionKey("acme", "web", 1));
  const page = await w.page(`${CHANGES}/${id}`, w.member);
  assertEquals(page.status, 200, page.text);
  assertStringIncludes(mainText(page), "flags/new-checkout.toml");
  assert(page.doc.querySelector(".diff") !== null, "the line diff against the pruned base");
});

consoleTest(
  "applying a request whose file changed on the head since is refused, naming the file",
  async (w) => {
    await protect(w, { production: 1 });
    const id = await propose(w, w.writer, "stop the new checkout");
    const url = `${CHANGES}/${id}`;
    assertEquals((await w.post(`${url}/approve`, w.tenantAdmin, {})).status, 303);
    // the same file changes on the head (its description only: no environment is affected)
    await w.push({
      ...FIXTURE,
      "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
        "New checkout flow",
        "The new checkout flow",
      ),
    }, "reword");
    const audited = (await auditTypes(w)).length;
    const refused = await w.post(`${url}/apply`, w.writer, {});
    assertEquals(refused.status, 409, refused.text);
    assertStringIncludes(alertText(refused), "flags/new-checkout.toml changed since its base");
    assertEquals((await record(w, id)).change_request.status, "approved");
    assertEquals((await versions(w)).length, 3, "no version made");
    assertEquals((await auditTypes(w)).length, audited);
  },
);
