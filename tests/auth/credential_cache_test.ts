import { assert, assertEquals } from "../assert.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { CredentialCache } from "../../lib/auth/credential_cache.ts";
import { hmacHex } from "../../lib/auth/digest.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { authenticate } from "../../lib/auth/principal.ts";
import { bumpCredentialEpoch } from "../../lib/store/credential_epoch.ts";
import { tokenKey } from "../../lib/store/keys.ts";
import { getTokenRecord, revokeTokenRecord, type TokenRecord } from "../../lib/store/tokens.ts";

const system = { id: "system", principal_type: "system" as const, request_id: null };

/** A store with a superadmin, and a cache started on it. */
async function world(
  options: { pollMs?: number; staleAfterMs?: number; now?: () => number; path?: string } = {},
) {
  const kv = await Deno.openKv(options.path ?? ":memory:");
  const key = await randomTokenKey();
  const boot = await bootstrapSuperadmin(kv, key);
  const digest = await hmacHex(key, boot.secret);
  const cache = new CredentialCache(kv, {
    pollMs: options.pollMs ?? 10,
    ...(options.staleAfterMs ? { staleAfterMs: options.staleAfterMs } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  await cache.start();
  return {
    kv,
    key,
    boot,
    digest,
    cache,
    [Symbol.dispose]() {
      cache.close();
      kv.close();
    },
  };
}

/** Changes a record behind every cache's back: no epoch bump. */
async function overwriteSilently(kv: Deno.Kv, record: TokenRecord): Promise<void> {
  await kv.set(tokenKey(record.id), record);
}

Deno.test("a known token is answered from the cache: a silent change of its record goes unseen", async () => {
  using w = await world();
  const first = await w.cache.find(w.digest);
  assertEquals(first?.value.id, w.boot.token.id);
  const record = await getTokenRecord(w.kv, w.boot.token.id);
  await overwriteSilently(w.kv, { ...record, name: "renamed" });
  assertEquals((await w.cache.find(w.digest))?.value.name, record.name);
  assertEquals(w.cache.hits, 1);
});

Deno.test("a bump of the credential epoch makes every cached record stale within the poll interval", async () => {
  using w = await world({ pollMs: 10 });
  await w.cache.find(w.digest);
  const record = await getTokenRecord(w.kv, w.boot.token.id);
  await overwriteSilently(w.kv, { ...record, name: "renamed" });
  await bumpCredentialEpoch(w.kv.atomic()).commit();
  await new Promise((r) => setTimeout(r, 60));
  assertEquals((await w.cache.find(w.digest))?.value.name, "renamed");
});

Deno.test("a revocation through another handle on the same KV file is seen within the poll interval", async () => {
  const dir = await Deno.makeTempDir();
  try {
    using a = await world({ path: `${dir}/kv.sqlite3`, pollMs: 10 });
    const other = await Deno.openKv(`${dir}/kv.sqlite3`);
    try {
      assertEquals((await a.cache.find(a.digest))?.value.status, "active");
      await revokeTokenRecord(other, a.boot.token.id, system, new Date());
      const start = performance.now();
      let status = (await a.cache.find(a.digest))?.value.status;
      while (status === "active" && performance.now() - start < 2000) {
        await new Promise((r) => setTimeout(r, 2));
        status = (await a.cache.find(a.digest))?.value.status;
      }
      assertEquals(status, "revoked");
    } finally {
      other.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("changed() makes the very next lookup read the store", async () => {
  using w = await world({ pollMs: 60_000 });
  await w.cache.find(w.digest);
  await revokeTokenRecord(w.kv, w.boot.token.id, system, new Date());
  w.cache.changed();
  assertEquals((await w.cache.find(w.digest))?.value.status, "revoked");
});

Deno.test("a record read while a change is made through this process is not kept", async () => {
  using w = await world({ pollMs: 60_000 });
  await w.cache.find(w.digest); // the digest's id is known from now on
  w.cache.changed();
  const reading = w.cache.find(w.digest); // reads the record again…
  w.cache.changed(); // …and a change lands while the read is in flight
  await reading;
  const record = await getTokenRecord(w.kv, w.boot.token.id);
  await overwriteSilently(w.kv, { ...record, name: "renamed" });
  assertEquals((await w.cache.find(w.digest))?.value.name, "renamed");
});

Deno.test("when the epoch poll has not succeeded for staleAfterMs, records are read from the store", async () => {
  let now = 0;
  using w = await world({ pollMs: 60_000, staleAfterMs: 1000, now: () => now });
  await w.cache.find(w.digest);
  const record = await getTokenRecord(w.kv, w.boot.token.id);
  await overwriteSilently(w.kv, { ...record, name: "renamed" });
  now = 999; // within 1 s of the last poll: still trusted
  assertEquals((await w.cache.find(w.digest))?.value.name, record.name);
  now = 1001;
  assertEquals((await w.cache.find(w.digest))?.value.name, "renamed");
});

Deno.test("an unknown digest is never cached: a token created later works at once", async () => {
  using w = await world();
  assertEquals(await w.cache.find("00"), null);
  assertEquals(await w.cache.find("00"), null);
  assertEquals(w.cache.hits, 0);
});

Deno.test("before start() and after close(), every lookup reads the store", async () => {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const boot = await bootstrapSuperadmin(kv, key);
  const digest = await hmacHex(key, boot.secret);
  const cache = new CredentialCache(kv);
  try {
    await cache.find(digest);
    await cache.find(digest);
    assertEquals(cache.hits, 0);
    await cache.start();
    await cache.find(digest);
    await cache.find(digest);
    assertEquals(cache.hits, 1);
    cache.close();
    await cache.find(digest);
    assertEquals(cache.hits, 1);
  } finally {
    cache.close();
    kv.close();
  }
});

Deno.test("authentication through the cache refuses a token past expires_at with no change in the store", async () => {
  using w = await world({ pollMs: 60_000 });
  const record = await getTokenRecord(w.kv, w.boot.token.id);
  const expiresAt = new Date(Date.now() + 60_000);
  await w.kv.set(tokenKey(record.id), { ...record, expires_at: expiresAt.toISOString() });
  let now = new Date();
  const deps = { kv: w.kv, key: w.key, credentials: w.cache, now: () => now };
  await authenticate(deps, `Bearer ${w.boot.secret}`, { requestId: "r1" });
  await authenticate(deps, `Bearer ${w.boot.secret}`, { requestId: "r2" });
  assert(w.cache.hits >= 1);
  now = new Date(expiresAt.getTime() + 1);
  let status = 0;
  try {
    await authenticate(deps, `Bearer ${w.boot.secret}`, { requestId: "r3" });
  } catch (e) {
    status = (e as { status: number }).status;
  }
  assertEquals(status, 401);
});

Deno.test("authentication through the cache writes last_used_at after answering, once per interval", async () => {
  using w = await world({ pollMs: 60_000 });
  const { kv, boot } = w;
  const deps = { kv, key: w.key, credentials: w.cache };
  for (let i = 0; i < 5; i++) {
    await authenticate(deps, `Bearer ${boot.secret}`, { requestId: `r${i}` });
  }
  let used: string | null = null;
  for (let i = 0; i < 100 && used === null; i++) {
    await new Promise((r) => setTimeout(r, 5));
    used = (await getTokenRecord(kv, boot.token.id)).last_used_at;
  }
  assert(used !== null, "last_used_at is written in the background");
  let authenticated = 0;
  for await (const e of kv.list<{ type: string }>({ prefix: ["audit_by_time"] })) {
    if (e.value.type === "token.authenticated") authenticated++;
  }
  assertEquals(authenticated, 1);
});

Deno.test("digest() computes a credential's HMAC once per process, and each credential its own", async () => {
  using w = await world();
  let computed = 0;
  const hmac = (c: string) => {
    computed++;
    return hmacHex(w.key, c);
  };
  const a1 = await w.cache.digest(w.boot.secret, hmac);
  const a2 = await w.cache.digest(w.boot.secret, hmac);
  const other = await w.cache.digest(`${w.boot.secret}x`, hmac);
  assertEquals(a1, w.digest);
  assertEquals(a2, w.digest);
  assertEquals(other, await hmacHex(w.key, `${w.boot.secret}x`));
  assertEquals(computed, 2);
});

Deno.test("generation stays while nothing changes, and moves with the epoch, changed() and sync()", async () => {
  let now = 0;
  using w = await world({ pollMs: 60_000, staleAfterMs: 1000, now: () => now });
  const g0 = w.cache.generation;
  assert(g0 !== null, "a started cache knows its generation");
  await w.cache.find(w.digest);
  assertEquals(w.cache.generation, g0, "reading records changes nothing");
  assertEquals(await w.cache.sync(), g0, "an unmoved epoch keeps the generation");
  await revokeTokenRecord(w.kv, w.boot.token.id, system, new Date()); // bumps the epoch
  assertEquals(w.cache.generation, g0, "the slow poll has not seen it yet");
  const g1 = await w.cache.sync();
  assert(g1 !== null && g1 !== g0, "sync() reads the epoch at once");
  assertEquals((await w.cache.find(w.digest))?.value.status, "revoked", "and drops the records");
  w.cache.changed();
  assert(w.cache.generation !== g1, "a change through this process moves it");
  now = 5000; // no poll for 5 s: the cache cannot tell any more
  assertEquals(w.cache.generation, null);
  assert(await w.cache.sync() !== null, "a successful read counts as a poll");
  w.cache.close();
  assertEquals(w.cache.generation, null);
  assertEquals(await w.cache.sync(), null);
});

Deno.test("sync() tells the change listeners when it sees the epoch move", async () => {
  using w = await world({ pollMs: 60_000 });
  let told = 0;
  w.cache.onChange(() => told++);
  await w.cache.sync();
  assertEquals(told, 0);
  await bumpCredentialEpoch(w.kv.atomic()).commit();
  await w.cache.sync();
  assertEquals(told, 1);
});
