import { assert, assertEquals, assertRejects } from "../assert.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  createSession,
  findSession,
  listSessions,
  revokeSession,
} from "../../lib/auth/sessions.ts";
import { createUser, deleteUser } from "../../lib/store/users.ts";

Deno.test("listSessions() shows live sessions without digests, all or of one user", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = await randomTokenKey();
    const ana = await createUser(kv, { email: "ana@example.com" });
    const bo = await createUser(kv, { email: "bo@example.com" });
    const a = await createSession(kv, key, { user: ana.id });
    const b = await createSession(kv, key, { user: bo.id, ttl: 60_000 });
    const all = await listSessions(kv);
    assertEquals(all.map((s) => s.id).sort(), [a.session.id, b.session.id].sort());
    for (const s of all) assert(!("digest" in s), "no digest in a listing");
    const text = JSON.stringify(all);
    assert(!text.includes(a.secret) && !text.includes(a.session.digest));
    assertEquals((await listSessions(kv, { user: "bo@example.com" })).map((s) => s.id), [
      b.session.id,
    ]);
    // an hour later bo's one-minute session has ended and is not listed
    const later = () => new Date(Date.now() + 3_600_000);
    assertEquals((await listSessions(kv, { now: later })).map((s) => s.id), [a.session.id]);
    await assertRejects(() => listSessions(kv, { user: "nobody@example.com" }), NotFoundError);
  } finally {
    kv.close();
  }
});

Deno.test("revokeSession() makes the session token unknown at once; an unknown id is 404", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = await randomTokenKey();
    const ana = await createUser(kv, { email: "ana@example.com" });
    const a = await createSession(kv, key, { user: ana.id });
    const kept = await createSession(kv, key, { user: ana.id });
    const revoked = await revokeSession(kv, a.session.id);
    assertEquals(revoked.id, a.session.id);
    assert(!("digest" in revoked));
    assertEquals(await findSession(kv, key, a.secret, new Date()), null);
    assert(await findSession(kv, key, kept.secret, new Date()) !== null);
    const err = await assertRejects(() => revokeSession(kv, a.session.id), NotFoundError);
    assertEquals(err.code, "session_not_found");
  } finally {
    kv.close();
  }
});

Deno.test("createSession() for a deleted user is 404 and stores nothing", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const key = await randomTokenKey();
    const ana = await createUser(kv, { email: "ana@example.com" });
    await deleteUser(kv, ana.id);
    const err = await assertRejects(() => createSession(kv, key, { user: ana.id }), NotFoundError);
    assertEquals(err.code, "user_not_found");
    assertEquals(await listSessions(kv), []);
  } finally {
    kv.close();
  }
});
