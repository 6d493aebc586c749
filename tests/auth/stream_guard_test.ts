import { assertEquals } from "../assert.ts";
import { StreamGuard } from "../../lib/auth/stream_guard.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { revokeTokenRecord } from "../../lib/store/tokens.ts";
import { openKv } from "../../lib/store/kv.ts";
import { createUser } from "../../lib/store/users.ts";
import type { AuditActor } from "../../lib/store/audit.ts";

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
