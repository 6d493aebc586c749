/**
 * A tenant's webhooks (lib/services/webhooks.ts), in-process: who may
 * manage them (every refusal a 403 that writes nothing), what a body must
 * be (400 naming the field, never a 5xx), the 20-webhook limit, unknown
 * ids, the destination rule at creation, and the queue handlers that
 * deliver: one delivery per (entry, webhook) however often the queue hands
 * the entry over, signed so the `standardwebhooks` library verifies it,
 * retried after a failure until the retries run out, refused at delivery
 * when the destination is not public, failing clearly when the secret no
 * longer opens.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "../../lib/errors.ts";
import type { Principal, SessionPrincipal } from "../../lib/auth/principal.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  handleAuditMessage,
  handleDeliverMessage,
  listWebhookDeliveries,
  listWebhooks,
  testWebhook,
  type WebhookDeps,
} from "../../lib/services/webhooks.ts";
import { type AuditEntry, eventAuditEntry, listAudit } from "../../lib/store/audit.ts";
import { addTenantAdmin, deleteTenant } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { listDeliveries, liveWebhooks } from "../../lib/store/webhooks.ts";
import { startReceiver, verified } from "../e2e/webhook_receiver.ts";
import { serviceTest, type ServiceWorld } from "./world.ts";

const ctx = { requestId: "req-test" };
/** A public address no test ever connects to (deliveries to it are never attempted here). */
const PUBLIC = "https://93.184.216.34/hooks/cfgtool";

/** A person's principal: host-made (no tenants: their admin lists decide) or signed in to `tenants`. */
function person(userId: string, tenants: string[] = []): SessionPrincipal {
  return {
    kind: "session",
    user_id: userId,
    session_id: `ssn_${userId}`,
    tenants,
    groups: [],
    since: new Date(Date.now() + 1000).toISOString(),
  };
}

/** Every kind of caller of the world. */
async function callers(w: ServiceWorld) {
  const ada = await createUser(w.kv, { email: "ada@acme.test" });
  await addTenantAdmin(w.kv, { tenant: "acme", user_id: ada.id, added_by: "test" });
  const olga = await createUser(w.kv, { email: "olga@other.test" });
  await addTenantAdmin(w.kv, { tenant: "other", user_id: olga.id, added_by: "test" });
  const ana = await createUser(w.kv, { email: "ana@acme.test" });
  return {
    superadmin: w.superadmin,
    tenantToken: await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" }),
    tenantPerson: person(ada.id) as Principal,
    writer: await w.asWeb("namespace-write"),
    reader: await w.asWeb("namespace-read"),
    member: person(ana.id, ["acme"]) as Principal,
    otherToken: await w.as({ type: "tenant-admin", name: "to", tenant_slug: "other" }),
    otherPerson: person(olga.id) as Principal,
  };
}

function depsOf(w: ServiceWorld, extra: Partial<WebhookDeps> = {}): WebhookDeps {
  return { ...w.services, ...extra };
}

/** acme's audit entries, oldest first. */
async function auditOf(w: ServiceWorld): Promise<AuditEntry[]> {
  return (await listAudit(w.kv, { tenant: "acme", limit: 500 })).items.reverse();
}

serviceTest(
  "tenant admins (a person or a token) and superadmins manage webhooks; the secret is shown once and stored sealed",
  async (w) => {
    const who = await callers(w);
    const deps = depsOf(w);
    const made: Awaited<ReturnType<typeof createWebhook>>[] = [];
    for (const p of [who.tenantToken, who.tenantPerson, who.superadmin]) {
      made.push(
        await createWebhook(deps, p, "acme", {
          url: `${PUBLIC}?n=${made.length}`,
          events: ["manifest.*", "token.created"],
          namespaces: ["web"],
          format: made.length === 2 ? "slack" : "standard",
          description: "ops",
        }, ctx),
      );
    }
    for (const m of made) {
      assert(/^whsec_[A-Za-z0-9+/]{43}=$/.test(m.secret), m.secret);
      assert(/^whk_[0-9A-Z]{26}$/.test(m.webhook.id), m.webhook.id);
      assertEquals(m.webhook.events, ["manifest.*", "token.created"]);
      assertEquals(m.webhook.namespaces, ["web"]);
    }
    assertEquals(
      made[0]!.webhook.created_by,
      who.tenantToken.kind === "token" ? who.tenantToken.token.id : "",
    );
    assertEquals(made[2]!.webhook.format, "slack");
    for (const p of [who.tenantToken, who.tenantPerson, who.superadmin]) {
      const list = await listWebhooks(deps, p, "acme");
      assertEquals(list.map((h) => h.id), made.map((m) => m.webhook.id));
      assert(list.every((h) => !JSON.stringify(h).includes("whsec_") && !("sealed_secret" in h)));
      assertEquals(await getWebhook(deps, p, "acme", made[1]!.webhook.id), made[1]!.webhook);
    }
    // the store keeps a sealed copy only
    const stored = JSON.stringify((await liveWebhooks(w.kv, "acme")).webhooks);
    for (const m of made) assert(!stored.includes(m.secret.slice(6)), "secret stored in the clear");
    // audited, naming the URL's origin only (its path may be a secret)
    const created = (await auditOf(w)).filter((e) => e.type === "webhook.created");
    assertEquals(created.length, 3);
    assertEquals(created[0]!.details.url_origin, "https://93.184.216.34");
    assert(!JSON.stringify(created).includes("/hooks/cfgtool"));

    const gone = await deleteWebhook(deps, who.tenantPerson, "acme", made[0]!.webhook.id, ctx);
    assertEquals(gone.id, made[0]!.webhook.id);
    assertEquals((await listWebhooks(deps, who.superadmin, "acme")).length, 2);
    const deleted = (await auditOf(w)).filter((e) => e.type === "webhook.deleted");
    assertEquals(deleted.map((e) => e.details.webhook_id), [made[0]!.webhook.id]);
    await assertRejects(
      () => getWebhook(deps, who.superadmin, "acme", made[0]!.webhook.id),
      NotFoundError,
    );
  },
);

serviceTest(
  "every refusal is a 403 that reads no body and writes nothing: namespace tokens, members, another tenant's admins",
  async (w) => {
    const who = await callers(w);
    const deps = depsOf(w);
    const hook = await createWebhook(deps, who.superadmin, "acme", {
      url: PUBLIC,
      events: ["*"],
    }, ctx);
    const before = await auditOf(w);
    const body = () => {
      throw new Error("the body was read before the caller was authorised");
    };
    const refused = [who.writer, who.reader, who.member, who.otherToken, who.otherPerson];
    for (const p of refused) {
      const name = p.kind === "token" ? p.token.type : p.tenants.join() || "host session";
      const id = hook.webhook.id;
      const calls: [string, () => Promise<unknown>][] = [
        ["create", () => createWebhook(deps, p, "acme", body, ctx)],
        ["list", () => listWebhooks(deps, p, "acme")],
        ["get", () => getWebhook(deps, p, "acme", id)],
        ["delete", () => deleteWebhook(deps, p, "acme", id, ctx)],
        ["test", () => testWebhook(deps, p, "acme", id, ctx)],
        ["deliveries", () => listWebhookDeliveries(deps, p, "acme", id)],
        // an unknown id gets the same refusal: nothing is looked up first
        ["get unknown", () => getWebhook(deps, p, "acme", "whk_01J00000000000000000000000")],
      ];
      for (const [what, call] of calls) {
        const err = await call().then(() => null, (e) => e);
        assert(err instanceof ForbiddenError, `${name} ${what}: ${err}`);
        assertEquals(err.status, 403);
      }
    }
    assertEquals(await auditOf(w), before);
    assertEquals((await listWebhooks(deps, who.superadmin, "acme")).map((h) => h.id), [
      hook.webhook.id,
    ]);
    assertEquals(await listDeliveries(w.kv, "acme", hook.webhook.id), []);
    // the other tenant's admin manages its own tenant's webhooks
    const own = await createWebhook(
      deps,
      who.otherToken,
      "other",
      { url: PUBLIC, events: ["*"] },
      ctx,
    );
    assertEquals((await listWebhooks(deps, who.otherPerson, "other"))[0]!.id, own.webhook.id);
  },
);

serviceTest("a bad body is a 400 naming the field, and writes nothing", async (w) => {
  const deps = depsOf(w);
  const before = await auditOf(w);
  const cases: [unknown, string, string][] = [
    [[], "", "a JSON object"],
    [{ events: ["*"] }, "url", "url is required"],
    [{ url: "ftp://files.example.com/x", events: ["*"] }, "url", "not ftp:"],
    [{ url: "not a url", events: ["*"] }, "url", "absolute"],
    [{ url: "https://u:p@93.184.216.34/x", events: ["*"] }, "url", "user name or password"],
    [{ url: "https://93.184.216.34/x#frag", events: ["*"] }, "url", "fragment"],
    [{ url: `https://93.184.216.34/${"x".repeat(2100)}`, events: ["*"] }, "url", "limit is 2048"],
    [{ url: PUBLIC }, "events", "events is required"],
    [{ url: PUBLIC, events: [] }, "events", "events is required"],
    [{ url: PUBLIC, events: "manifest.*" }, "events", "events is required"],
    [{ url: PUBLIC, events: ["Manifest.Pushed"] }, "events", "not an event type"],
    [{ url: PUBLIC, events: [42] }, "events", "not an event type"],
    [{ url: PUBLIC, events: ["manifest.push"] }, "events", 'did you mean "manifest.pushed"'],
    [{ url: PUBLIC, events: ["token.authenticated"] }, "events", "never sent"],
    [{ url: PUBLIC, events: Array.from({ length: 51 }, () => "*") }, "events", "limit is 50"],
    [{ url: PUBLIC, events: ["*"], namespaces: ["webb"] }, "namespaces", 'did you mean "web"'],
    [{ url: PUBLIC, events: ["*"], namespaces: ["app"] }, "namespaces", "no namespace app"],
    [{ url: PUBLIC, events: ["*"], namespaces: [] }, "namespaces", "non-empty"],
    [{ url: PUBLIC, events: ["*"], format: "teams" }, "format", "standard, slack"],
    [{ url: PUBLIC, events: ["*"], description: "x".repeat(1025) }, "description", "limit is 1024"],
    [{ url: PUBLIC, events: ["*"], secret: "mine" }, "secret", "Unknown field"],
  ];
  for (const [body, field, words] of cases) {
    const err = await createWebhook(deps, w.superadmin, "acme", body, ctx).then(
      () => null,
      (e) => e,
    );
    assert(err instanceof InvalidRequestError, `${JSON.stringify(body).slice(0, 80)}: ${err}`);
    assert(err.message.includes(words), `${err.message} (wanted ${words})`);
    if (field !== "") assertEquals(err.details?.field, field, err.message);
  }
  assertEquals(await auditOf(w), before);
  assertEquals(await listWebhooks(deps, w.superadmin, "acme"), []);
  // an unknown tenant is a 404
  await assertRejects(
    () => createWebhook(deps, w.superadmin, "nope", { url: PUBLIC, events: ["*"] }, ctx),
    NotFoundError,
  );
});

serviceTest("a tenant has at most 20 webhooks: the 21st is a 400 and writes nothing", async (w) => {
  const deps = depsOf(w);
  for (let i = 0; i < 20; i++) {
    await createWebhook(deps, w.superadmin, "acme", { url: `${PUBLIC}/${i}`, events: ["*"] }, ctx);
  }
  const before = await auditOf(w);
  const err = await createWebhook(deps, w.superadmin, "acme", { url: PUBLIC, events: ["*"] }, ctx)
    .then(() => null, (e) => e);
  assert(err instanceof InvalidRequestError, String(err));
  assertEquals(err.message, "Tenant acme has 20 webhooks, the most it may have: delete one first");
  assertEquals(await auditOf(w), before);
  assertEquals((await listWebhooks(deps, w.superadmin, "acme")).length, 20);
  // another tenant counts its own
  await createWebhook(deps, w.superadmin, "other", { url: PUBLIC, events: ["*"] }, ctx);
});

serviceTest(
  "an unknown, malformed or other tenant's webhook id is 404 webhook_not_found",
  async (w) => {
    const deps = depsOf(w);
    const theirs = await createWebhook(
      deps,
      w.superadmin,
      "other",
      { url: PUBLIC, events: ["*"] },
      ctx,
    );
    for (
      const id of ["whk_01J00000000000000000000000", "whk_x", "x".repeat(3000), theirs.webhook.id]
    ) {
      for (
        const call of [
          () => getWebhook(deps, w.superadmin, "acme", id),
          () => deleteWebhook(deps, w.superadmin, "acme", id, ctx),
          () => testWebhook(deps, w.superadmin, "acme", id, ctx),
          () => listWebhookDeliveries(deps, w.superadmin, "acme", id),
        ]
      ) {
        const err = await call().then(() => null, (e) => e);
        assert(err instanceof NotFoundError, String(err));
        assertEquals(err.code, "webhook_not_found");
        assert(err.message.length < 100, err.message);
      }
    }
    assertEquals((await listWebhooks(deps, w.superadmin, "other")).length, 1);
  },
);

serviceTest(
  "a destination that is not public is refused at creation, naming why, unless private ones are allowed",
  async (w) => {
    const resolve = (name: string) =>
      Promise.resolve(
        name === "intranet.example.com"
          ? ["93.184.216.34", "10.0.0.7"]
          : name === "rebind.example.com"
          ? ["169.254.169.254"]
          : ["93.184.216.34"],
      );
    const deps = depsOf(w, { webhookNet: { resolve } });
    const cases: [string, string][] = [
      ["http://127.0.0.1:8080/hook", "127.0.0.1 is a loopback address"],
      ["http://localhost/hook", "localhost is a loopback name"],
      ["http://[::1]/hook", "::1 is a loopback address"],
      ["http://[::ffff:10.1.2.3]/hook", "a private (RFC 1918) address (IPv4 10.1.2.3)"],
      ["http://192.168.1.20/hook", "a private (RFC 1918) address"],
      ["http://169.254.169.254/latest/meta-data", "a cloud metadata address"],
      ["http://0x7f000001/hook", "127.0.0.1 is a loopback address"],
      ["https://intranet.example.com/hook", "intranet.example.com resolves to 10.0.0.7"],
      ["https://rebind.example.com/hook", "a cloud metadata address"],
    ];
    for (const [url, why] of cases) {
      const err = await createWebhook(deps, w.superadmin, "acme", { url, events: ["*"] }, ctx)
        .then(() => null, (e) => e);
      assert(err instanceof InvalidRequestError, `${url}: ${err}`);
      assert(err.message.includes(why), err.message);
      assert(err.message.includes("--webhook-allow-private"), err.message);
      assertEquals(err.details, { field: "url", reason: "private_address" });
    }
    assertEquals(await listWebhooks(deps, w.superadmin, "acme"), []);
    await createWebhook(deps, w.superadmin, "acme", {
      url: "https://hooks.example.com/x",
      events: ["*"],
    }, ctx);
    const allowed = depsOf(w, { settings: { webhookAllowPrivate: true } });
    await createWebhook(allowed, w.superadmin, "acme", {
      url: "http://127.0.0.1:9/hook",
      events: ["*"],
    }, ctx);
    assertEquals((await listWebhooks(deps, w.superadmin, "acme")).length, 2);
  },
);

/** An audit entry of acme as a change would write it. */
function entry(type: string, namespace: string | null, details: Record<string, unknown> = {}) {
  return eventAuditEntry(
    type,
    { id: "tok_ci", principal_type: "service", request_id: "r9" },
    new Date(),
    {
      tenant_slug: "acme",
      namespace_slug: namespace,
      details,
    },
  );
}

serviceTest(
  "an entry reaches each matching webhook once, signed: handed over twice it makes one delivery, and a repeated attempt posts nothing",
  async (w) => {
    const receiver = await startReceiver();
    try {
      const deps = depsOf(w, {
        settings: { webhookAllowPrivate: true },
        publicUrl: "https://flags.example.com",
      });
      const hook = await createWebhook(deps, w.superadmin, "acme", {
        url: `${receiver.origin}/in?x=1`,
        events: ["manifest.*"],
        namespaces: ["web"],
      }, ctx);
      const other = await createWebhook(deps, w.superadmin, "acme", {
        url: `${receiver.origin}/other`,
        events: ["token.*"],
      }, ctx);
      const pushed = entry("manifest.pushed", "web", { version: 3, message: "more" });
      const message = { kind: "audit", entry: pushed };
      await handleAuditMessage(deps, message);
      await handleAuditMessage(deps, message); // the queue may hand it over again
      await handleAuditMessage(deps, { kind: "audit", entry: entry("manifest.pushed", "api") });
      await handleAuditMessage(deps, { kind: "audit", entry: entry("namespace.created", "web") });
      const [delivery, ...more] = await listDeliveries(w.kv, "acme", hook.webhook.id);
      assertEquals(more, []);
      assertEquals(await listDeliveries(w.kv, "acme", other.webhook.id), []);
      assertEquals([delivery!.status, delivery!.event_id, delivery!.attempts], [
        "pending",
        pushed.id,
        [],
      ]);
      const deliver = {
        kind: "webhook.deliver",
        tenant: "acme",
        webhook_id: hook.webhook.id,
        delivery_id: delivery!.id,
        attempt: 1,
      };
      await handleDeliverMessage(deps, deliver);
      await handleDeliverMessage(deps, deliver); // handed over again: already made
      assertEquals(receiver.requests.length, 1);
      const got = receiver.requests[0]!;
      assertEquals([got.method, got.path, got.headers["content-type"]], [
        "POST",
        "/in",
        "application/json",
      ]);
      assertEquals(got.headers["webhook-id"], delivery!.id);
      const payload = verified(hook.secret, got);
      assertEquals(payload.type, "manifest.pushed");
      assertEquals(payload.data.tenant, "acme");
      assertEquals(payload.data.namespace, "web");
      assertEquals(payload.data.console_url, "https://flags.example.com/ui/t/acme/ns/web");
      assertEquals(payload.data.entry, JSON.parse(JSON.stringify(pushed)));
      const [shown] = await listWebhookDeliveries(deps, w.superadmin, "acme", hook.webhook.id);
      assertEquals([shown!.status, shown!.attempt, shown!.response_code], ["delivered", 1, 204]);
      assertEquals(shown!.next_attempt_at, null);
    } finally {
      await receiver.close();
    }
  },
);

serviceTest(
  "a failed attempt is recorded and the next one queued, until the retries run out: then failed",
  async (w) => {
    const receiver = await startReceiver(() => 500);
    try {
      const deps = depsOf(w, {
        settings: { webhookAllowPrivate: true, webhookRetryBaseMs: 1000 },
      });
      const hook = await createWebhook(deps, w.superadmin, "acme", {
        url: `${receiver.origin}/in`,
        events: ["*"],
        format: "slack",
      }, ctx);
      await handleAuditMessage(deps, { kind: "audit", entry: entry("manifest.pushed", "web") });
      const [d] = await listDeliveries(w.kv, "acme", hook.webhook.id);
      const message = (attempt: number) => ({
        kind: "webhook.deliver",
        tenant: "acme",
        webhook_id: hook.webhook.id,
        delivery_id: d!.id,
        attempt,
      });
      const start = Date.now();
      await handleDeliverMessage(deps, message(1));
      let [shown] = await listWebhookDeliveries(deps, w.superadmin, "acme", hook.webhook.id);
      assertEquals([shown!.status, shown!.attempt, shown!.response_code], ["pending", 1, 500]);
      assertEquals(shown!.error, "the receiver answered 500");
      const next = Date.parse(shown!.next_attempt_at!);
      assert(next >= start + 1000 && next < Date.now() + 1100, shown!.next_attempt_at!);
      for (let n = 2; n <= 7; n++) await handleDeliverMessage(deps, message(n));
      await handleDeliverMessage(deps, message(8)); // none is queued past the last: nothing
      [shown] = await listWebhookDeliveries(deps, w.superadmin, "acme", hook.webhook.id);
      assertEquals([shown!.status, shown!.attempt, shown!.next_attempt_at], ["failed", 7, null]);
      assertEquals(shown!.attempts.map((a) => a.response_code), [
        500,
        500,
        500,
        500,
        500,
        500,
        500,
      ]);
      assertEquals(receiver.requests.length, 7);
      // each attempt carries the same webhook-id; a slack webhook posts {text}
      assertEquals(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size, 1);
      const text = verified(hook.secret, receiver.requests[0]!).text as string;
      assertEquals(text, "acme/web: manifest.pushed by tok_ci");
    } finally {
      await receiver.close();
    }
  },
);

serviceTest(
  "a destination that is not public is refused at delivery without connecting, and fails at once",
  async (w) => {
    const receiver = await startReceiver();
    try {
      const allowed = depsOf(w, { settings: { webhookAllowPrivate: true } });
      const hook = await createWebhook(allowed, w.superadmin, "acme", {
        url: `${receiver.origin}/in`,
        events: ["*"],
      }, ctx);
      const strict = depsOf(w, { settings: { webhookAllowPrivate: false } });
      await handleAuditMessage(strict, { kind: "audit", entry: entry("manifest.pushed", "web") });
      const [d] = await listDeliveries(w.kv, "acme", hook.webhook.id);
      await handleDeliverMessage(strict, {
        kind: "webhook.deliver",
        tenant: "acme",
        webhook_id: hook.webhook.id,
        delivery_id: d!.id,
        attempt: 1,
      });
      const [shown] = await listWebhookDeliveries(strict, w.superadmin, "acme", hook.webhook.id);
      assertEquals([shown!.status, shown!.next_attempt_at, shown!.response_code], [
        "failed",
        null,
        null,
      ]);
      assertEquals(
        shown!.error,
        "refused: 127.0.0.1 is a loopback address (webhooks deliver only to public addresses)",
      );
      assertEquals(receiver.requests.length, 0);
      // the test button says the same
      const tested = await testWebhook(strict, w.superadmin, "acme", hook.webhook.id, ctx);
      assertEquals(tested.status, "failed");
      assertEquals(receiver.requests.length, 0);
    } finally {
      await receiver.close();
    }
  },
);

serviceTest(
  "a test event is sent now, signed, and shows in the deliveries; a secret that no longer opens fails clearly",
  async (w) => {
    const receiver = await startReceiver();
    try {
      const deps = depsOf(w, { settings: { webhookAllowPrivate: true } });
      const hook = await createWebhook(deps, w.superadmin, "acme", {
        url: `${receiver.origin}/in`,
        events: ["manifest.pushed"],
      }, ctx);
      const tested = await testWebhook(deps, w.superadmin, "acme", hook.webhook.id, ctx);
      assertEquals([tested.status, tested.event_type, tested.response_code], [
        "delivered",
        "webhook.test",
        204,
      ]);
      const payload = verified(hook.secret, receiver.requests[0]!);
      assertEquals([payload.type, payload.data.entry.details.webhook_id], [
        "webhook.test",
        hook.webhook.id,
      ]);
      assertEquals(payload.data.console_url, null); // no public URL: no console link
      const shown = await listWebhookDeliveries(deps, w.superadmin, "acme", hook.webhook.id);
      assertEquals(shown.map((d) => d.id), [tested.id]);
      // a process with another token key (rekeyed without the old key file) cannot sign
      const rekeyed = { ...deps, key: await randomTokenKey() };
      const failed = await testWebhook(rekeyed, w.superadmin, "acme", hook.webhook.id, ctx);
      assertEquals(failed.status, "failed");
      assert(failed.error!.includes("sealed with another token key"), failed.error!);
      assert(failed.error!.includes("create it again"), failed.error!);
      assertEquals(receiver.requests.length, 1);
    } finally {
      await receiver.close();
    }
  },
);

serviceTest(
  "deleting a webhook deletes its deliveries; a deleted tenant's webhooks go with it",
  async (w) => {
    const deps = depsOf(w);
    const hook = await createWebhook(
      deps,
      w.superadmin,
      "acme",
      { url: PUBLIC, events: ["*"] },
      ctx,
    );
    for (let i = 0; i < 3; i++) {
      await handleAuditMessage(deps, { kind: "audit", entry: entry("manifest.pushed", "web") });
    }
    assertEquals((await listDeliveries(w.kv, "acme", hook.webhook.id)).length, 3);
    await deleteWebhook(deps, w.superadmin, "acme", hook.webhook.id, ctx);
    assertEquals(await listDeliveries(w.kv, "acme", hook.webhook.id), []);

    const kept = await createWebhook(
      deps,
      w.superadmin,
      "acme",
      { url: PUBLIC, events: ["*"] },
      ctx,
    );
    const system = { id: "system", principal_type: "system" as const, request_id: null };
    await deleteTenant(w.kv, "acme", system);
    const deletion = (await listAudit(w.kv, { tenant: "acme", type: "tenant.deleted" })).items[0]!;
    await handleAuditMessage(deps, { kind: "audit", entry: deletion });
    assertEquals((await liveWebhooks(w.kv, "acme")).webhooks, []);
    assertEquals(await listDeliveries(w.kv, "acme", kept.webhook.id), []);
  },
);

serviceTest("a webhook keeps its newest 100 deliveries", async (w) => {
  const deps = depsOf(w);
  const hook = await createWebhook(deps, w.superadmin, "acme", { url: PUBLIC, events: ["*"] }, ctx);
  const entries = Array.from({ length: 120 }, () => entry("manifest.pushed", "web"));
  for (const e of entries) await handleAuditMessage(deps, { kind: "audit", entry: e });
  const all = await listDeliveries(w.kv, "acme", hook.webhook.id, 1000);
  assertEquals(all.length, 100);
  assertEquals(all.map((d) => d.event_id), entries.slice(20).map((e) => e.id).reverse());
  const shown = await listWebhookDeliveries(deps, w.superadmin, "acme", hook.webhook.id);
  assertEquals(shown.length, 100);
});
