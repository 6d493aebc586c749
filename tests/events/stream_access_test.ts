/**
 * An open stream keeps receiving a namespace only while its credential may
 * still read it: before each delivery the stream's principal is
 * authorised again from the current roles, and a stream that may no
 * longer read is closed without the version (docs/events.md, "When a
 * stream closes"). The client reconnects and is refused at open.
 */
import { assert, assertEquals } from "../assert.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import {
  createNamespace,
  deleteNamespace,
  removeNamespaceAdmin,
} from "../../lib/store/namespaces.ts";
import { revokeTokenRecord } from "../../lib/store/tokens.ts";
import { createUser } from "../../lib/store/users.ts";
import type { AuditActor } from "../../lib/store/audit.ts";
import type { ServiceSettings } from "../../lib/settings.ts";
import { readSse, type SseClient } from "./sse_client.ts";
import { flagToml, NS_TOML, ORIGIN, type World, world } from "./world.ts";

/** What the pushed version says; it must never reach a stream that lost its read right. */
const SECRET = "launch plan: do not leak";

/** A change made by another process: this one learns of it only through the KV. */
const OTHER_PROCESS: AuditActor = { id: "elsewhere", principal_type: "system", request_id: null };

/**
 * Polls so slow that only the check before a delivery can notice a change
 * another process made (the timers would take a minute).
 */
const SLOW_POLLS: Partial<ServiceSettings> = {
  credentialPollMs: 60_000,
  streamAuthCheckMs: 60_000,
};

const V1 = { "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") };
const V2 = { "namespace.toml": NS_TOML, "flags/a.toml": flagToml(SECRET) };

/** A signed-in person; with no sign-in tenants their roles come from the admin lists only. */
async function person(
  w: World,
  email: string,
  signIn: { tenants?: string[]; groups?: string[] } = {},
): Promise<{ user_id: string; secret: string }> {
  const user = await createUser(w.kv, { email });
  const { secret } = await createSession(w.kv, w.key, { user: user.id, ...signIn });
  return { user_id: user.id, secret };
}

/** A request as the superadmin that must succeed. */
async function asAdmin(w: World, method: string, path: string, body?: unknown): Promise<void> {
  const res = await w.request(method, path, w.admin, body);
  assert(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Mints a namespace token and returns its id and secret. */
async function token(w: World, body: Record<string, unknown>) {
  const res = await w.request("POST", "/api/v1/tokens", w.admin, {
    name: `t-${crypto.randomUUID().slice(0, 8)}`,
    ...body,
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
  return { id: res.body.token.id as string, secret: res.body.secret as string };
}

/** Whether the server ends the stream within `ms`. */
async function endsWithin(s: SseClient, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([s.ended.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The versions the stream's events carried. */
function versionsOf(s: SseClient): number[] {
  return s.received.filter((r) => r.kind === "event").map((r) => {
    const d = JSON.parse(r.data);
    return d.version ?? d.current_version;
  });
}

/** Every file content the stream's inline events carried, decoded. */
function contentsOf(s: SseClient): string {
  return s.received.filter((r) => r.kind === "event")
    .flatMap((r) => JSON.parse(r.data).files ?? [])
    .map((f: { content_b64?: string }) => f.content_b64 === undefined ? "" : atob(f.content_b64))
    .join("\n");
}

/** Asserts a stream closed after version 1 and never carried version 2 or its content. */
async function assertCutOff(s: SseClient, who: string): Promise<void> {
  assert(await endsWithin(s, 3000), `${who}: the stream closes`);
  assertEquals(versionsOf(s), [1], `${who}: nothing about version 2 is sent`);
  assert(!contentsOf(s).includes(SECRET), `${who}: version 2's file never reaches the client`);
}

/** Asserts that the reconnect of `credential` to `query` is refused with 403 at open. */
async function assertRefusedAtOpen(w: World, query: string, credential: string): Promise<void> {
  const res = await w.request("GET", `/api/v1/events?${query}`, credential);
  assertEquals([res.status, res.body?.code], [403, "forbidden"]);
}

Deno.test("a namespace admin removed mid-stream is cut off before the next version", async () => {
  const w = await world();
  try {
    await w.push(V1);
    const ana = await person(w, "ana@acme.test");
    await asAdmin(w, "POST", "/api/v1/tenants/acme/namespaces/web/admins", {
      user_id: ana.user_id,
    });
    const s = await w.stream("ns=acme/web:*", ana.secret);
    assertEquals(s.response.status, 200);
    await w.local().apply(await s.next()); // the first snapshot, while still an admin
    await asAdmin(w, "DELETE", `/api/v1/tenants/acme/namespaces/web/admins/${ana.user_id}`);
    await w.push(V2);
    await assertCutOff(s, "removed namespace admin");
    await assertRefusedAtOpen(w, "ns=acme/web:*", ana.secret);
  } finally {
    await w.close();
  }
});

Deno.test("a tenant admin removed mid-stream is cut off before the next version", async () => {
  const w = await world();
  try {
    await w.push(V1);
    const bo = await person(w, "bo@acme.test");
    await asAdmin(w, "POST", "/api/v1/tenants/acme/admins", { user_id: bo.user_id });
    const s = await w.stream("ns=acme/web:a", bo.secret);
    await s.next();
    await asAdmin(w, "DELETE", `/api/v1/tenants/acme/admins/${bo.user_id}`);
    await w.push(V2);
    await assertCutOff(s, "removed tenant admin");
    await assertRefusedAtOpen(w, "ns=acme/web:a", bo.secret);
  } finally {
    await w.close();
  }
});

Deno.test("streams of the removed person close; other readers of the namespace keep receiving", async () => {
  // slow polls: the only verdicts computed are those of the push's own check
  const w = await world(SLOW_POLLS, ["web", "api"]);
  try {
    await w.push(V1);
    await w.push({ "namespace.toml": NS_TOML }, "api");
    const ana = await person(w, "ana@acme.test");
    const cy = await person(w, "cy@acme.test");
    for (const [who, ns] of [[ana, "web"], [cy, "web"], [cy, "api"]] as const) {
      await asAdmin(w, "POST", `/api/v1/tenants/acme/namespaces/${ns}/admins`, {
        user_id: who.user_id,
      });
    }
    const reader = await token(w, {
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const anas = [
      await w.stream("ns=acme/web:*", ana.secret),
      await w.stream("ns=acme/web:a", ana.secret),
    ];
    const cys = await w.stream("ns=acme/web:*", cy.secret);
    const readers = [];
    for (let i = 0; i < 12; i++) readers.push(await w.stream("ns=web:*", reader.secret));
    for (const s of [...anas, cys, ...readers]) await s.next();
    await asAdmin(w, "DELETE", `/api/v1/tenants/acme/namespaces/web/admins/${ana.user_id}`);
    // cy loses another namespace, not this one
    await asAdmin(w, "DELETE", `/api/v1/tenants/acme/namespaces/api/admins/${cy.user_id}`);
    const verdicts = w.server.runtime.guard.stats.verdicts;
    await w.push(V2);
    for (const s of anas) await assertCutOff(s, "ana");
    for (const s of [cys, ...readers]) {
      const e = JSON.parse((await s.next()).data);
      assertEquals([e.version, e.delivery], [2, "inline"]);
      assert(!s.done);
    }
    assert(contentsOf(cys).includes(SECRET), "a namespace admin still reads the new version");
    // ana's two streams share one verdict, the reader's twelve another, cy one
    assertEquals(w.server.runtime.guard.stats.verdicts - verdicts, 3);
  } finally {
    await w.close();
  }
});

Deno.test("a tenant admin through a login-policy admin group keeps reading as an admitted member once the group is dropped", async () => {
  const w = await world();
  try {
    await w.push(V1);
    const policy = {
      method: "oidc",
      issuer: "https://idp.acme.test",
      client_id: "cfgtool",
      client_secret_ref: "env:ACME_SECRET",
    };
    await asAdmin(w, "PUT", "/api/v1/tenants/acme/login", {
      ...policy,
      admin_groups: ["flag-admins"],
    });
    const dee = await person(w, "dee@acme.test", { tenants: ["acme"], groups: ["flag-admins"] });
    const create = (slug: string) =>
      w.request("POST", "/api/v1/tenants/acme/namespaces", dee.secret, { slug });
    assertEquals((await create("one")).status, 201, "an admin through the group");
    const s = await w.stream("ns=acme/web:*", dee.secret);
    await s.next();
    await asAdmin(w, "PUT", "/api/v1/tenants/acme/login", policy);
    assertEquals((await create("two")).status, 403, "no longer a tenant admin");
    await w.push(V2);
    const e = await s.next();
    assertEquals(JSON.parse(e.data).version, 2, "an admitted person still reads the namespace");
    assert(!s.done);
  } finally {
    await w.close();
  }
});

Deno.test("a token revoked by another process gets no later version, even before the polls notice", async () => {
  const w = await world(SLOW_POLLS);
  try {
    await w.push(V1);
    const reader = await token(w, {
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const s = await w.stream("ns=web:*", reader.secret);
    await s.next();
    await revokeTokenRecord(w.kv, reader.id, OTHER_PROCESS, new Date());
    await w.push(V2);
    await assertCutOff(s, "revoked token");
  } finally {
    await w.close();
  }
});

Deno.test("a namespace admin removed by another process is cut off at the next version", async () => {
  const w = await world(SLOW_POLLS);
  try {
    await w.push(V1);
    const ana = await person(w, "ana@acme.test");
    await asAdmin(w, "POST", "/api/v1/tenants/acme/namespaces/web/admins", {
      user_id: ana.user_id,
    });
    const s = await w.stream("ns=acme/web:*", ana.secret);
    await s.next();
    await removeNamespaceAdmin(w.kv, "acme", "web", ana.user_id, { actor: OTHER_PROCESS });
    await w.push(V2);
    await assertCutOff(s, "admin removed elsewhere");
  } finally {
    await w.close();
  }
});

Deno.test("a token whose namespace is deleted and made again never sees the new namespace", async () => {
  const w = await world(SLOW_POLLS);
  try {
    await w.push(V1);
    const reader = await token(w, {
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const s = await w.stream("ns=web:*", reader.secret);
    await s.next();
    await deleteNamespace(w.kv, "acme", "web", OTHER_PROCESS);
    await createNamespace(w.kv, { tenant: "acme", slug: "web", created_by: "elsewhere" });
    await w.push(V2);
    assert(await endsWithin(s, 3000), "the stream closes");
    assert(!contentsOf(s).includes(SECRET));
    assertEquals(versionsOf(s), [1], "only the first snapshot, of the deleted namespace");
  } finally {
    await w.close();
  }
});

Deno.test("the OFREP event stream of a token revoked by another process announces no later version", async () => {
  const w = await world(SLOW_POLLS);
  try {
    const publicNs = NS_TOML + "[namespace.environments.staging]\npublic_evaluate = true\n";
    await w.push({ "namespace.toml": publicNs });
    const client = await token(w, {
      type: "namespace-client",
      tenant_slug: "acme",
      namespace_slug: "web",
      environment_slug: "staging",
    });
    const ac = new AbortController();
    const res = await w.server.fetch(
      new Request(`${ORIGIN}/ofrep/v1/event-stream?token=${client.secret}`, { signal: ac.signal }),
    );
    const s = readSse(res, ac);
    try {
      assertEquals((await s.next()).id, "1");
      await revokeTokenRecord(w.kv, client.id, OTHER_PROCESS, new Date());
      await w.push({ "namespace.toml": publicNs + "# v2\n" });
      assert(await endsWithin(s, 3000), "the stream closes");
      assertEquals(s.received.filter((r) => r.kind === "event").map((r) => r.id), ["1"]);
    } finally {
      s.close();
    }
  } finally {
    await w.close();
  }
});
