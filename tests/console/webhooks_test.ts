/**
 * A tenant's webhooks in the console (lib/console/webhooks.tsx): a tenant
 * admin creates one and sees its secret once, a refused form comes back
 * with the problem and the input kept, the test button says how the
 * delivery went, deletion needs its confirmation, and members and
 * namespace admins are refused as the API refuses them.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { createWebhook } from "../../lib/services/webhooks.ts";
import { consoleTest, type ConsoleWorld } from "./world.ts";

/** A JSON answer, its body read loosely. */
// deno-lint-ignore no-explicit-any
type Loose = { status: number; body: any };

/** A JSON request of the world. */
function api(w: ConsoleWorld, ...args: Parameters<ConsoleWorld["json"]>): Promise<Loose> {
  return w.json(...args);
}

const HOOKS = "/ui/t/acme/webhooks";
const PUBLIC = "https://93.184.216.34/hooks/cfgtool";

/** A webhook made through the service, private destinations allowed (the console's are not). */
async function loopbackWebhook(w: ConsoleWorld): Promise<string> {
  const { webhook } = await createWebhook(
    { kv: w.kv, key: w.key, runtime: undefined as never, settings: { webhookAllowPrivate: true } },
    {
      kind: "session",
      user_id: "usr_op",
      session_id: "ssn_op",
      tenants: [],
      groups: [],
      since: "",
      superadmin: true,
    },
    "acme",
    { url: "http://127.0.0.1:9/in", events: ["*"] },
    { requestId: "test" },
  );
  return webhook.id;
}

consoleTest(
  "a tenant admin creates a webhook and sees its secret once; the list never shows it",
  async (w) => {
    const empty = await w.page(HOOKS, w.tenantAdmin);
    assertEquals(empty.status, 200, empty.text);
    assert(empty.doc.querySelector("#no-webhooks") !== null);
    const nav = empty.doc.querySelector('nav[aria-label="Sections"] a[aria-current="page"]');
    assertEquals([nav?.textContent, nav?.getAttribute("href")], ["Webhooks", HOOKS]);
    assert(empty.doc.querySelector("#create-webhook") !== null, "the create form");
    assertStringIncludes(empty.doc.querySelector("#webhook-namespaces-hint").textContent, "web");

    const made = await w.post(HOOKS, w.tenantAdmin, {
      url: PUBLIC,
      events: "manifest.*, token.created",
      namespaces: "web",
      format: "slack",
      description: "ops channel",
    });
    assertEquals(made.status, 201, made.text);
    assertEquals(made.headers.get("cache-control"), "no-store");
    const secret = made.doc.querySelector("#webhook-secret").textContent.trim();
    assert(secret.startsWith("whsec_"), secret);
    assertStringIncludes(made.text, "You will not see it again");
    assertEquals(
      made.doc.querySelector('button[data-copy="webhook-secret"]')?.getAttribute("type"),
      "button",
    );

    const list = await w.page(HOOKS, w.tenantAdmin);
    assert(!list.text.includes(secret), "the list shows no secret");
    const rows = list.doc.querySelectorAll("#webhook-table tbody tr");
    assertEquals(rows.length, 1);
    assertStringIncludes(rows[0].textContent, "manifest.*, token.created");
    const link = rows[0].querySelector("a").getAttribute("href") as string;
    const page = await w.page(link, w.tenantAdmin);
    assertEquals(page.status, 200, page.text);
    assert(!page.text.includes(secret));
    assertStringIncludes(page.text, "ops channel");
    assertStringIncludes(page.text, "No deliveries yet.");
    const listed = await api(w, "GET", "/api/v1/tenants/acme/webhooks", { bearer: w.admin });
    const [hook] = listed.body.webhooks as {
      events: string[];
      namespaces: string[];
      format: string;
    }[];
    assertEquals(hook!.events, ["manifest.*", "token.created"]);
    assertEquals(hook!.namespaces, ["web"]);
    assertEquals(hook!.format, "slack");
  },
);

consoleTest(
  "a refused form is shown again with the problem, the field marked and the input kept",
  async (w) => {
    const bad = await w.post(HOOKS, w.tenantAdmin, {
      url: "http://127.0.0.1:8080/in",
      events: "manifest.*",
      namespaces: "",
      format: "standard",
    });
    assertEquals(bad.status, 400, bad.text);
    assertStringIncludes(bad.doc.querySelector("#webhook-error").textContent, "loopback address");
    assertEquals(bad.doc.querySelector("#webhook-url").getAttribute("aria-invalid"), "true");
    assertEquals(
      bad.doc.querySelector("#webhook-url").getAttribute("value"),
      "http://127.0.0.1:8080/in",
    );
    assertEquals(bad.doc.querySelector("#webhook-events").getAttribute("value"), "manifest.*");
    const typo = await w.post(HOOKS, w.tenantAdmin, { url: PUBLIC, events: "manifest.push" });
    assertEquals(typo.status, 400);
    assertStringIncludes(typo.doc.querySelector("#webhook-error").textContent, "manifest.pushed");
    assertEquals(typo.doc.querySelector("#webhook-events").getAttribute("aria-invalid"), "true");
    const listed = await api(w, "GET", "/api/v1/tenants/acme/webhooks", { bearer: w.admin });
    assertEquals(listed.body.webhooks, []);
  },
);

consoleTest(
  "the test button sends now and says how it went; a delivery to a private address is refused",
  async (w) => {
    const id = await loopbackWebhook(w);
    const tested = await w.post(`${HOOKS}/${id}/test`, w.tenantAdmin, {});
    assertEquals(tested.status, 200, tested.text);
    assertStringIncludes(
      tested.doc.querySelector("#webhook-notice").textContent,
      "The test event was not delivered: refused: 127.0.0.1 is a loopback address",
    );
    const rows = tested.doc.querySelectorAll("#delivery-table tbody tr");
    assertEquals(rows.length, 1);
    assertStringIncludes(rows[0].textContent, "webhook.test");
    assertStringIncludes(rows[0].querySelector(".badge").textContent, "failed");
  },
);

consoleTest("deleting needs the confirmation; confirmed, the webhook is gone", async (w) => {
  const made = await api(w, "POST", "/api/v1/tenants/acme/webhooks", {
    bearer: w.admin,
    json: { url: PUBLIC, events: ["*"] },
  });
  const id = (made.body.webhook as { id: string }).id;
  const page = await w.page(`${HOOKS}/${id}`, w.tenantAdmin);
  assert(page.doc.querySelector("#delete-confirm[required]") !== null, "a required checkbox");
  const unconfirmed = await w.post(`${HOOKS}/${id}/delete`, w.tenantAdmin, {});
  assertEquals(unconfirmed.status, 400, unconfirmed.text);
  assertStringIncludes(
    unconfirmed.doc.querySelector("#webhook-notice").textContent,
    "confirmation",
  );
  const gone = await w.post(`${HOOKS}/${id}/delete`, w.tenantAdmin, { confirm: "yes" });
  assertEquals(gone.status, 303);
  assertEquals(gone.headers.get("location"), HOOKS);
  const listed = await api(w, "GET", "/api/v1/tenants/acme/webhooks", { bearer: w.admin });
  assertEquals(listed.body.webhooks, []);
  assertEquals((await w.page(`${HOOKS}/${id}`, w.tenantAdmin)).status, 404);
});

consoleTest("members and namespace admins are refused every webhook page and form", async (w) => {
  const made = await api(w, "POST", "/api/v1/tenants/acme/webhooks", {
    bearer: w.admin,
    json: { url: PUBLIC, events: ["*"] },
  });
  const id = (made.body.webhook as { id: string }).id;
  for (const who of [w.member, w.writer]) {
    assertEquals((await w.page(HOOKS, who)).status, 403);
    assertEquals((await w.page(`${HOOKS}/${id}`, who)).status, 403);
    assertEquals((await w.post(HOOKS, who, { url: PUBLIC, events: "*" })).status, 403);
    assertEquals((await w.post(`${HOOKS}/${id}/test`, who, {})).status, 403);
    assertEquals((await w.post(`${HOOKS}/${id}/delete`, who, { confirm: "yes" })).status, 403);
  }
  const listed = await api(w, "GET", "/api/v1/tenants/acme/webhooks", { bearer: w.admin });
  assertEquals((listed.body.webhooks as { id: string }[]).map((h) => h.id), [id]);
});
