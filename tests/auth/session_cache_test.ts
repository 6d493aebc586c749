/**
 * Sessions through the server's credential cache (lib/auth/credential_cache.ts,
 * `findLiveSession` of lib/auth/sessions.ts): a session this process already
 * checked costs no KV read, and it stops authenticating exactly when an
 * uncached check would refuse it: at once after an end through this
 * process, within the poll interval after an end or a user deletion through
 * another, at its expiry or idle limit by the clock.
 */
import { assert, assertEquals } from "../assert.ts";
import { CredentialCache } from "../../lib/auth/credential_cache.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { authenticateCredential } from "../../lib/auth/principal.ts";
import { createSession, endSession, findSession } from "../../lib/auth/sessions.ts";
import { sessionKey } from "../../lib/store/keys.ts";
import { findSessionRecord, type SessionRecord, touchSession } from "../../lib/store/sessions.ts";
import { createUser, deleteUser } from "../../lib/store/users.ts";

const system = { id: "system", principal_type: "system" as const, request_id: null };

/** A store with a user and a session, and a cache started on it. */
async function world(
  options: { pollMs?: number; path?: string; idle?: number; ttl?: number } = {},
) {
  const kv = await Deno.openKv(options.path ?? ":memory:");
  const key = await randomTokenKey();
  const user = await createUser(kv, { email: "ana@acme.test" });
  const made = await createSession(kv, key, {
    user: user.id,
    ...(options.idle ? { idle: options.idle } : {}),
    ...(options.ttl ? { ttl: options.ttl } : {}),
  });
  const cache = new CredentialCache(kv, { pollMs: options.pollMs ?? 10 });
  await cache.start();
  let now = new Date();
  const deps = { kv, key, credentials: cache, now: () => now };
  /** The status of authenticating the session's secret: 200 or the error's. */
  const status = async () => {
    try {
      const p = await authenticateCredential(deps, made.secret, { requestId: "r" });
      return p.kind === "session" && p.session_id === made.session.id ? 200 : 500;
    } catch (e) {
      return (e as { status?: number }).status ?? 500;
    }
  };
  return {
    kv,
    key,
    user,
    made,
    cache,
    deps,
    status,
    setNow: (d: Date) => void (now = d),
    [Symbol.dispose]() {
      cache.close();
      kv.close();
    },
  };
}

/** Changes a session record behind every cache's back: no epoch bump. */
async function overwriteSilently(kv: Deno.Kv, record: SessionRecord): Promise<void> {
  await kv.set(sessionKey(record.id), record);
}

/** Counts the KV reads made while `fn` runs. */
async function kvReads(fn: () => Promise<unknown>): Promise<number> {
  // deno-lint-ignore no-explicit-any
  const proto = Deno.Kv.prototype as any;
  const saved = { get: proto.get, getMany: proto.getMany, list: proto.list };
  let reads = 0;
  for (const m of ["get", "getMany", "list"] as const) {
    proto[m] = function (this: Deno.Kv, ...args: unknown[]) {
      reads++;
      return saved[m].apply(this, args);
    };
  }
  try {
    await fn();
  } finally {
    Object.assign(proto, saved);
  }
  return reads;
}

Deno.test("a known session is answered from the cache: no KV read, a silent change goes unseen", async () => {
  using w = await world({ pollMs: 60_000 });
  assertEquals(await w.status(), 200);
  assertEquals(await kvReads(() => w.status()), 0);
  assertEquals(w.cache.sessionHits, 1);
  const record = (await findSessionRecord(w.kv, w.made.session.id))!;
  await overwriteSilently(w.kv, { ...record, groups: ["renamed"] });
  const p = await authenticateCredential(w.deps, w.made.secret, { requestId: "r" });
  assertEquals(p.kind === "session" && p.groups, []);
  assertEquals(w.cache.misses, 0, "the token metric counts tokens only");
});

Deno.test("a session ended through this process is refused by the very next request", async () => {
  using w = await world({ pollMs: 60_000 });
  assertEquals(await w.status(), 200);
  await endSession(w.deps, w.made.session.id, system, "revoked");
  assertEquals(await w.status(), 401);
});

Deno.test("a session ended or a user deleted through another process is refused within the poll interval", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const change of ["end", "delete user"] as const) {
      using w = await world({ path: `${dir}/${change}.sqlite3`, pollMs: 10 });
      const other = await Deno.openKv(`${dir}/${change}.sqlite3`);
      try {
        assertEquals(await w.status(), 200);
        assertEquals(await w.status(), 200);
        if (change === "end") {
          await endSession({ kv: other, key: w.key }, w.made.session.id, system, "revoked");
        } else await deleteUser(other, w.user.id);
        const start = performance.now();
        let status = await w.status();
        while (status === 200 && performance.now() - start < 2000) {
          await new Promise((r) => setTimeout(r, 2));
          status = await w.status();
        }
        assertEquals(status, 401, change);
        assert(w.cache.sessionHits >= 1, "it was cached before the change");
      } finally {
        other.close();
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a cached session is refused at its expiry by the clock alone", async () => {
  using w = await world({ pollMs: 60_000, ttl: 60_000 });
  assertEquals(await w.status(), 200);
  w.setNow(new Date(Date.parse(w.made.session.expires_at) - 1));
  assertEquals(await w.status(), 200);
  w.setNow(new Date(Date.parse(w.made.session.expires_at)));
  assertEquals(await w.status(), 401);
  assertEquals(
    await findSession(w.kv, w.key, w.made.secret, new Date(Date.parse(w.made.session.expires_at))),
    null,
  );
});

Deno.test("a session idle by the cache but used through another process since is read again, not refused", async () => {
  using w = await world({ pollMs: 60_000, idle: 120_000 });
  const start = Date.parse(w.made.session.created_at);
  assertEquals(await w.status(), 200); // cached with last_seen_at = created_at
  // another process records a use at +100 s (no epoch bump: it changes nothing the session may do)
  await touchSession(w.kv, w.made.session, new Date(start + 100_000));
  w.setNow(new Date(start + 150_000)); // idle by the cached record, not by the store
  assertEquals(await w.status(), 200);
  w.setNow(new Date(start + 220_001)); // idle by the store too
  assertEquals(await w.status(), 401);
});

Deno.test("last_seen_at is written after the answer, at most once a minute per session", async () => {
  using w = await world({ pollMs: 60_000 });
  const start = Date.parse(w.made.session.created_at);
  w.setNow(new Date(start + 61_000));
  for (let i = 0; i < 5; i++) assertEquals(await w.status(), 200);
  let seen = w.made.session.last_seen_at;
  for (let i = 0; i < 100 && seen === w.made.session.last_seen_at; i++) {
    await new Promise((r) => setTimeout(r, 5));
    seen = (await findSessionRecord(w.kv, w.made.session.id))!.last_seen_at;
  }
  assertEquals(seen, new Date(start + 61_000).toISOString());
  const entry = await w.kv.get(sessionKey(w.made.session.id));
  w.setNow(new Date(start + 90_000));
  assertEquals(await w.status(), 200);
  await new Promise((r) => setTimeout(r, 20));
  assertEquals((await w.kv.get(sessionKey(w.made.session.id))).versionstamp, entry.versionstamp);
});
