import { assertEquals } from "../assert.ts";
import { StreamGuard } from "../../lib/auth/stream_guard.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { revokeTokenRecord } from "../../lib/store/tokens.ts";
import { openKv } from "../../lib/store/kv.ts";
import { createUser } from "../../lib/store/users.ts";
import type { AuditActor } from "../../lib/store/audit.ts";
import { CredentialCache } from "../../lib/auth/credential_cache.ts";
import { bumpCredentialEpoch } from "../../lib/store/credential_epoch.ts";
import {
  addNamespaceAdmin,
  createNamespace,
  removeNamespaceAdmin,
} from "../../lib/store/namespaces.ts";
import { createTenant } from "../../lib/store/tenants.ts";

const actor: AuditActor = { id: "test", principal_type: "system", request_id: null };

Deno.test("StreamGuard closes the streams of a revoked token and keeps the others", async () => {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const guard = new StreamGuard(kv, { intervalMs: 60_000 });
  try {
    const a = await bootstrapSuperadmin(kv, key);
    const b = await bootstrapSuperadmin(kv, key);
    const closed: string[] = [];
    guard.register(a.token.id, () => closed.push("a1"));
    guard.register(a.token.id, () => closed.push("a2"));
    guard.register(b.token.id, () => closed.push("b"));
    await guard.recheck();
    assertEquals(closed, [], "active tokens keep their streams");
    await revokeTokenRecord(kv, a.token.id, actor, new Date());
    await guard.recheck();
    assertEquals(closed.sort(), ["a1", "a2"]);
    assertEquals(guard.size, 1);
  } finally {
    guard.close();
    kv.close();
  }
});

Deno.test("StreamGuard closes streams of an expired token or session, on its own timer", async () => {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  let now = new Date("2030-01-01T00:00:00Z");
  const guard = new StreamGuard(kv, { intervalMs: 20, now: () => now });
  try {
    const user = await createUser(kv, { email: "ana@example.com" });
    const { session } = await createSession(kv, key, {
      user: user.id,
      ttl: 60_000,
      now: () => now,
    });
    const closed: string[] = [];
    const unregister = guard.register(session.id, () => closed.push("session"));
    guard.register("tok_never_existed", () => closed.push("unknown"));
    await new Promise((r) => setTimeout(r, 80));
    assertEquals(
      closed,
      ["unknown"],
      "an unknown credential's stream ends; the live session stays",
    );
    now = new Date(now.getTime() + 120_000);
    await new Promise((r) => setTimeout(r, 80));
    assertEquals(closed, ["unknown", "session"]);
    unregister(); // a no-op once closed
    assertEquals(guard.size, 0);
  } finally {
    guard.close();
    kv.close();
  }
});

Deno.test("StreamGuard sees a revocation made by another process on the same KV file", async () => {
  const dir = await Deno.makeTempDir();
  const kvA = await openKv(`${dir}/kv.sqlite3`);
  const kvB = await openKv(`${dir}/kv.sqlite3`);
  const guard = new StreamGuard(kvA, { intervalMs: 20 });
  try {
    const key = await randomTokenKey();
    const t = await bootstrapSuperadmin(kvA, key);
    let closed = false;
    guard.register(t.token.id, () => (closed = true));
    await revokeTokenRecord(kvB, t.token.id, actor, new Date());
    const end = Date.now() + 2000;
    while (!closed && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    assertEquals(closed, true);
  } finally {
    guard.close();
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("StreamGuard closes the stream of a session left idle past its limit", async () => {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  let now = new Date("2030-01-01T00:00:00Z");
  const guard = new StreamGuard(kv, { intervalMs: 60_000, now: () => now });
  try {
    const user = await createUser(kv, { email: "ops@example.com" });
    const { session } = await createSession(kv, key, {
      user: user.id,
      ttl: 8 * 3600_000,
      idle: 30 * 60_000,
      now: () => now,
    });
    const closed: string[] = [];
    guard.register(session.id, () => closed.push("idle"));
    now = new Date(now.getTime() + 29 * 60_000);
    await guard.recheck();
    assertEquals(closed, [], "within its idle limit the session keeps its stream");
    now = new Date(now.getTime() + 2 * 60_000); // 31 minutes without a request
    await guard.recheck();
    assertEquals(closed, ["idle"]);
  } finally {
    guard.close();
    kv.close();
  }
});

/** A guard over a store with tenant acme, namespace web, and a namespace admin signed in. */
async function accessWorld(options: { now?: () => Date; withCache?: boolean } = {}) {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const credentials = new CredentialCache(kv, { pollMs: 60_000 });
  await credentials.start();
  const guard = new StreamGuard(kv, {
    intervalMs: 60_000,
    ...(options.withCache === false ? {} : { credentials }),
    ...(options.now ? { now: options.now } : {}),
  });
  await createTenant(kv, { slug: "acme", created_by: "test" });
  await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "test" });
  const user = await createUser(kv, { email: "ana@example.com" });
  await addNamespaceAdmin(kv, {
    tenant: "acme",
    namespace: "web",
    user_id: user.id,
    added_by: "t",
  });
  const { session } = await createSession(kv, key, {
    user: user.id,
    ...(options.now ? { now: options.now } : {}),
  });
  return {
    kv,
    key,
    guard,
    credentials,
    user,
    session,
    [Symbol.dispose]() {
      guard.close();
      credentials.close();
      kv.close();
    },
  };
}

const READ_WEB = { action: "manifest.read" as const, target: { tenant: "acme", namespace: "web" } };

Deno.test("check() keeps a stream that may still read and closes one whose admin role was removed", async () => {
  using w = await accessWorld();
  const closed: string[] = [];
  const a = w.guard.watch(w.session.id, () => closed.push("a"), [READ_WEB]);
  const b = w.guard.watch(w.session.id, () => closed.push("b"), [READ_WEB]);
  const grant = a.grants[0]!;
  assertEquals(b.grants[0], grant, "the streams of one credential share the verdict");
  await w.guard.sync();
  await w.guard.check([grant, grant]);
  assertEquals([grant.allowed, closed], [true, []]);
  await removeNamespaceAdmin(w.kv, "acme", "web", w.user.id);
  await w.guard.check([grant]);
  // made through this process's store handle: the cache's generation moved at once
  assertEquals([grant.allowed, closed.sort()], [false, ["a", "b"]], "seen before the slow poll");
  closed.length = 0;
  await w.guard.sync();
  await w.guard.check([grant, grant]);
  assertEquals([grant.allowed, closed.sort()], [false, ["a", "b"]]);
});

Deno.test("check() computes a verdict once per credential and read, and again only after a change", async () => {
  using w = await accessWorld();
  const reads = [READ_WEB, { ...READ_WEB, target: { tenant: "acme", namespace: "api" } }];
  const streams = Array.from({ length: 50 }, () => w.guard.watch(w.session.id, () => {}, reads));
  const grants = streams.flatMap((s) => s.grants);
  await w.guard.sync();
  await w.guard.check(grants);
  assertEquals(w.guard.stats.verdicts, 2, "one per (credential, namespace), not per stream");
  await w.guard.sync();
  await w.guard.check(grants);
  assertEquals(w.guard.stats.verdicts, 2, "nothing changed: every verdict stands");
  await bumpCredentialEpoch(w.kv.atomic()).commit(); // a change elsewhere, to any credential
  await w.guard.sync();
  await w.guard.check(grants);
  assertEquals(w.guard.stats.verdicts, 4);
  assertEquals(grants.map((g) => g.allowed).slice(0, 2), [true, false], "not an admin of api");
  for (const s of streams) s.release();
  assertEquals(w.guard.stats, { streams: 0, credentials: 0, verdicts: 4 });
});

Deno.test("check() closes every stream of a session that ended, and a verdict expires with the session", async () => {
  let now = new Date("2030-01-01T00:00:00Z");
  using w = await accessWorld({ now: () => now });
  const closed: string[] = [];
  const s = w.guard.watch(w.session.id, () => closed.push("web"), [READ_WEB]);
  w.guard.register(w.session.id, () => closed.push("plain"));
  await w.guard.check(s.grants);
  assertEquals(closed, []);
  now = new Date(now.getTime() + 13 * 3600_000); // past the 12 h session, with no write at all
  await w.guard.check(s.grants);
  assertEquals(closed.sort(), ["plain", "web"]);
});

Deno.test("without a credential cache every check computes the verdicts again", async () => {
  using w = await accessWorld({ withCache: false });
  const s = w.guard.watch(w.session.id, () => {}, [READ_WEB]);
  await w.guard.check(s.grants);
  await w.guard.check(s.grants);
  assertEquals(w.guard.stats.verdicts, 2);
  assertEquals(s.grants[0]!.allowed, true);
});

Deno.test("a grant of a revoked token is refused and its streams closed", async () => {
  using w = await accessWorld();
  const t = await bootstrapSuperadmin(w.kv, w.key);
  let closed = 0;
  const s = w.guard.watch(t.token.id, () => closed++, [READ_WEB]);
  await w.guard.check(s.grants);
  assertEquals([s.grants[0]!.allowed, closed], [true, 0]);
  await revokeTokenRecord(w.kv, t.token.id, actor, new Date());
  await w.guard.sync();
  await w.guard.check(s.grants);
  assertEquals([s.grants[0]!.allowed, closed], [false, 1]);
});

Deno.test("when the store cannot be read, check() closes the streams rather than deliver on an unchecked right", async () => {
  const kv = await Deno.openKv(":memory:");
  const guard = new StreamGuard(kv, { intervalMs: 60_000 });
  try {
    let closed = 0;
    const s = guard.watch("ssn_1", () => closed++, [READ_WEB]);
    kv.close(); // a store that fails every read
    await guard.check(s.grants);
    assertEquals([s.grants[0]!.allowed, closed], [false, 1]);
  } finally {
    guard.close();
  }
});
