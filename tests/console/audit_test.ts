/**
 * A tenant's audit log (lib/console/audit.tsx): the entries the API
 * gives, newest first, with emails and token names; the filters (type,
 * namespace, actor, a UTC time window) and paging that keeps them; and
 * who may read it.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { consoleTest, type ConsoleWorld, type LoadedPage } from "./world.ts";

interface Row {
  time: string;
  type: string;
  actor: string;
  target: string;
  details: string;
}

// deno-lint-ignore no-explicit-any
function text(node: any): string {
  return node === null ? "" : node.textContent.replace(/\s+/g, " ").trim();
}

function rows(page: LoadedPage): Row[] {
  // deno-lint-ignore no-explicit-any
  return [...page.doc.querySelectorAll("table.audit tbody tr")].map((r: any) => {
    const td = r.querySelectorAll("td");
    return {
      time: td[0].querySelector("time").getAttribute("datetime"),
      type: text(td[1].querySelector("code")),
      actor: text(td[2]),
      target: text(td[3]),
      details: text(td[4].querySelector("div")),
    };
  });
}

/** Issues a token of acme through the API as the superadmin. */
async function issue(
  w: ConsoleWorld,
  name: string,
  binding: { type: string; namespace_slug?: string } = {
    type: "namespace-read",
    namespace_slug: "web",
  },
): Promise<string> {
  const res = await w.json("POST", "/api/v1/tokens", {
    bearer: w.admin,
    json: { ...binding, name, tenant_slug: "acme" },
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return (res.body.token as { id: string }).id;
}

/** Every entry of acme's log as the API lists them, newest first. */
async function apiEntries(w: ConsoleWorld): Promise<{ id: string; timestamp: string }[]> {
  const res = await w.json("GET", "/api/v1/audit?tenant=acme&limit=500", { bearer: w.admin });
  return res.body.entries as { id: string; timestamp: string }[];
}

/** A `datetime-local` value in UTC. */
function utcField(ms: number): string {
  return new Date(ms).toISOString().slice(0, 16);
}

consoleTest(
  "a token made through the API is the newest entry, by the token, about it",
  async (w) => {
    const id = await issue(w, "ci-reader");
    const page = await w.page("/ui/t/acme/audit", w.tenantAdmin);
    assertEquals(page.status, 200, page.text);
    const list = rows(page);
    assertEquals(list[0]!.type, "token.created");
    assertStringIncludes(list[0]!.target, "namespace web");
    assertStringIncludes(list[0]!.target, "token ci-reader (namespace-read)");
    assertEquals(
      page.doc.querySelector(`table.audit a[href="/ui/t/acme/tokens/${id}"]`) !== null,
      true,
    );
    assertStringIncludes(list[0]!.actor, "tok_"); // the superadmin's token: not acme's to name
    // the sign-ins of the world's three people, by email
    const logins = list.filter((r) => r.type === "login.succeeded").map((r) => r.actor);
    assertEquals(logins, ["ada@acme.test", "nia@acme.test", "ana@acme.test"]);
    assertStringIncludes(list.find((r) => r.type === "login.succeeded")!.details, "method: oidc");
    const times = list.map((r) => r.time);
    assertEquals([...times].sort().reverse(), times, "newest first");
    assertStringIncludes(page.text, "Entry as JSON");
    assertStringIncludes(text(page.doc.querySelector('label[for="audit-from"]')), "UTC");
  },
);

consoleTest("a member reads the log but not the names of tokens they may not read", async (w) => {
  await issue(w, "ci-reader");
  const page = await w.page("/ui/t/acme/audit", w.member);
  assertEquals(page.status, 200, page.text);
  const first = rows(page)[0]!;
  assertEquals(first.type, "token.created");
  assert(!first.target.includes("ci-reader"), first.target);
  assertStringIncludes(first.target, "token svc_read_"); // its public prefix, as the API gives it
});

consoleTest("the log filters by type, namespace and actor", async (w) => {
  await issue(w, "ci-reader");
  await issue(w, "ops", { type: "tenant-admin" });
  const byType = rows(await w.page("/ui/t/acme/audit?type=token.created", w.tenantAdmin));
  assertEquals(byType.map((r) => r.type), ["token.created", "token.created"]);
  const byNs = rows(await w.page("/ui/t/acme/audit?namespace=web", w.tenantAdmin));
  // web's creation, first push and namespace admin (the world's), then the token
  assertEquals(byNs.map((r) => r.type), [
    "token.created",
    "admin.added",
    "manifest.pushed",
    "namespace.created",
  ]);
  assertStringIncludes(byNs[0]!.target, "ci-reader");
  assertStringIncludes(byNs[1]!.target, "namespace admin nia@acme.test");
  assertEquals(byNs[2]!.details, "version: 1 · message: first flags · files: 7");
  const byEmail = await w.page("/ui/t/acme/audit?actor=Nia%40acme.test", w.tenantAdmin);
  assertEquals(rows(byEmail).map((r) => `${r.type} ${r.actor}`), [
    "login.succeeded nia@acme.test",
  ]);
  assertEquals(byEmail.doc.querySelector("#audit-actor").getAttribute("value"), "Nia@acme.test");
  const byId = rows(await w.page(`/ui/t/acme/audit?actor=${w.member.user_id}`, w.tenantAdmin));
  assertEquals(byId.map((r) => r.actor), ["ana@acme.test"]);
  const nobody = await w.page("/ui/t/acme/audit?actor=nobody%40acme.test", w.tenantAdmin);
  assertEquals(rows(nobody), []);
  assertStringIncludes(nobody.text, "No entry matches.");
  // the type field suggests the known types; the namespace field lists the namespaces
  assertEquals(nobody.doc.querySelectorAll("#audit-types option").length >= 9, true);
  assertEquals(
    // deno-lint-ignore no-explicit-any
    [...nobody.doc.querySelectorAll("#audit-namespace option")].map((o: any) => o.textContent),
    ["any", "web"],
  );
});

consoleTest("the log filters by a time window in UTC", async (w) => {
  const start = Date.now();
  await issue(w, "early");
  w.advance(70 * 60_000); // within the browser session's idle limit
  await issue(w, "late");
  const mid = utcField(start + 35 * 60_000);
  const after = rows(await w.page(`/ui/t/acme/audit?from=${mid}`, w.tenantAdmin));
  assertEquals(after.map((r) => r.target.match(/token (\S+) /)?.[1]), ["late"]);
  const before = rows(await w.page(`/ui/t/acme/audit?to=${mid}`, w.tenantAdmin));
  assertEquals(before[0]!.target.match(/token (\S+) /)?.[1], "early");
  assertEquals(before.some((r) => r.target.includes("late")), false);
  assertEquals(before.filter((r) => r.type === "login.succeeded").length, 3);
  // "to" takes in the whole minute it names
  const lateAt = Date.parse(rows(await w.page("/ui/t/acme/audit?limit=1", w.tenantAdmin))[0]!.time);
  const minute = rows(await w.page(`/ui/t/acme/audit?to=${utcField(lateAt)}`, w.tenantAdmin));
  assertStringIncludes(minute[0]!.target, "late");
  const window = await w.page(
    `/ui/t/acme/audit?from=${utcField(start - 60_000)}&to=${mid}&type=token.created`,
    w.tenantAdmin,
  );
  assertEquals(rows(window).length, 1);
  assertEquals(window.doc.querySelector("#audit-to").getAttribute("value"), mid);
});

consoleTest("Older pages on through the whole log and keeps the filters", async (w) => {
  for (let i = 0; i < 4; i++) await issue(w, `t${i}`);
  // 4 tokens, 3 sign-ins, and the world's tenant, namespace, push and two admins
  const all = (await apiEntries(w)).map((e) => e.id);
  assertEquals(all.length, 12);
  const seen: string[] = [];
  let path: string | null = "/ui/t/acme/audit?limit=2";
  let pages = 0;
  while (path !== null) {
    const page: LoadedPage = await w.page(path, w.tenantAdmin);
    assertEquals(page.status, 200, page.text);
    // each entry's JSON names its id
    const json: { textContent: string }[] = [
      ...page.doc.querySelectorAll("details.audit-json pre"),
    ];
    seen.push(...json.map((p) => JSON.parse(p.textContent).id as string));
    const older = page.doc.querySelector('nav.pager a[rel="next"]');
    path = older === null ? null : older.getAttribute("href");
    if (path !== null) assertStringIncludes(path, "limit=2");
    pages++;
  }
  assertEquals(seen, all);
  assertEquals(pages, 6);

  // with a time window (filtered here, not by the store) the cursor moves on just as well
  const tokens: string[] = [];
  path = "/ui/t/acme/audit?limit=1&type=token.created&from=2000-01-01T00%3A00";
  while (path !== null) {
    const page: LoadedPage = await w.page(path, w.tenantAdmin);
    tokens.push(...rows(page).map((r) => r.target.match(/token (\S+) /)![1]!));
    const older = page.doc.querySelector('nav.pager a[rel="next"]');
    path = older === null ? null : older.getAttribute("href");
    if (path !== null) {
      assertStringIncludes(path, "type=token.created");
      assertStringIncludes(path, "from=2000-01-01T00%3A00");
    }
  }
  assertEquals(tokens, ["t3", "t2", "t1", "t0"]);
});

consoleTest("filters that cannot be used are shown with the input kept", async (w) => {
  const page = await w.page(
    "/ui/t/acme/audit?limit=0&from=tomorrow&type=token.created",
    w.tenantAdmin,
  );
  assertEquals(page.status, 400);
  assertEquals(page.doc.querySelector("#audit-limit").getAttribute("aria-invalid"), "true");
  assertEquals(page.doc.querySelector("#audit-from").getAttribute("value"), "tomorrow");
  assertEquals(page.doc.querySelector("#audit-type").getAttribute("value"), "token.created");
  assertStringIncludes(page.text, "Show 1 to 100 entries a page");
  const reversed = await w.page(
    "/ui/t/acme/audit?from=2030-01-02T00:00&to=2030-01-01T00:00",
    w.tenantAdmin,
  );
  assertEquals(reversed.status, 400);
  assertStringIncludes(reversed.text, "must come after its start");
});

consoleTest("a person of another tenant is refused the audit log", async (w) => {
  const outsider = await w.person("eve@other.test", "other");
  const res = await w.page("/ui/t/acme/audit", outsider);
  assertEquals(res.status, 403);
  assertStringIncludes(res.text, "Not allowed");
  const own = await w.page("/ui/t/other/audit", outsider);
  assertEquals(own.status, 200);
  // only other's entries: eve's sign-in and the tenant's creation
  assertEquals(rows(own).map((r) => r.type), ["login.succeeded", "tenant.created"]);
  assertEquals(rows(own)[0]!.actor, "eve@other.test");
  assertStringIncludes(rows(own)[1]!.target, "tenant other");
});

consoleTest(
  "changes made in the console are audited as the person, with the request's id",
  async (w) => {
    const bea = await w.person("bea@acme.test", "acme");
    const added = await w.post("/ui/t/acme/people/add", w.tenantAdmin, {
      email: "bea@acme.test",
      namespace: "web",
    });
    assertEquals(added.status, 303, added.text);
    const api = await w.json("GET", "/api/v1/audit?tenant=acme&type=admin.added&namespace=web", {
      bearer: w.admin,
    });
    // deno-lint-ignore no-explicit-any
    const entry = (api.body.entries as any[]).find((e) => e.details.user_id === bea.user_id);
    assertEquals(entry.actor_id, w.tenantAdmin.user_id);
    assertEquals(entry.principal_type, "user");
    assertEquals(entry.request_id, added.headers.get("x-request-id"));
    assertEquals(entry.details, {
      user_id: bea.user_id,
      email: "bea@acme.test",
      scope: "namespace",
    });
    // the log shows who was made an admin of what
    const list = rows(await w.page("/ui/t/acme/audit?type=admin.added", w.tenantAdmin));
    assertStringIncludes(list[0]!.target, "namespace web");
    assertStringIncludes(list[0]!.target, "namespace admin bea@acme.test");
    assertEquals(list[0]!.actor, "ada@acme.test");

    const back = await w.post("/ui/t/acme/ns/web/versions/0/rollback", w.writer, {
      message: "start over",
      confirm: "yes",
    });
    assertEquals(back.status, 303, back.text);
    const rolled = rows(await w.page("/ui/t/acme/audit?type=manifest.rolled_back", w.tenantAdmin));
    assertEquals(rolled.length, 1);
    assertEquals(rolled[0]!.actor, "nia@acme.test");
    assertEquals(
      rolled[0]!.details,
      "version: 2 · rolled back to: 0 · message: start over · files: 0",
    );
  },
);
