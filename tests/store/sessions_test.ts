import { assertEquals } from "../assert.ts";
import { sessionByDigestKey, sessionKey } from "../../lib/store/keys.ts";
import {
  deleteAllSessions,
  deleteSessionRecord,
  findSessionByDigest,
  insertSession,
  listSessionRecords,
  normalizeSession,
  type SessionRecord,
} from "../../lib/store/sessions.ts";
import { createUser, deleteUser } from "../../lib/store/users.ts";

function session(id: string, userId: string, digest: string): SessionRecord {
  return normalizeSession({
    id,
    user_id: userId,
    prefix: "ses_abcdefghij",
    digest,
    created_at: "2030-01-01T00:00:00.000Z",
    expires_at: "2030-01-02T00:00:00.000Z",
  });
}

Deno.test("insertSession() stores the record and its digest index, found again by digest", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const user = await createUser(kv, { email: "ana@example.com" });
    const s = session("ssn_1", user.id, "d1");
    assertEquals(await insertSession(kv, s, 60_000), "created");
    assertEquals((await kv.get(sessionKey("ssn_1"))).value, s);
    assertEquals((await kv.get(sessionByDigestKey("d1"))).value, "ssn_1");
    assertEquals(await findSessionByDigest(kv, "d1"), s);
    assertEquals(await findSessionByDigest(kv, "d2"), null);
  } finally {
    kv.close();
  }
});

Deno.test("insertSession() writes nothing for a user that does not exist (or was deleted)", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const user = await createUser(kv, { email: "ana@example.com" });
    await deleteUser(kv, user.id);
    assertEquals(await insertSession(kv, session("ssn_1", user.id, "d1"), 60_000), "no_user");
    assertEquals(await listSessionRecords(kv), []);
    assertEquals((await kv.get(sessionByDigestKey("d1"))).value, null);
  } finally {
    kv.close();
  }
});

Deno.test("deleteSessionRecord() removes the record and its index in one go, and returns what it removed", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const user = await createUser(kv, { email: "ana@example.com" });
    const s = session("ssn_1", user.id, "d1");
    await insertSession(kv, s, 60_000);
    assertEquals(await deleteSessionRecord(kv, "ssn_1"), s);
    assertEquals(await findSessionByDigest(kv, "d1"), null);
    assertEquals((await kv.get(sessionByDigestKey("d1"))).value, null);
    assertEquals(await deleteSessionRecord(kv, "ssn_1"), null);
  } finally {
    kv.close();
  }
});

Deno.test("listSessionRecords() lists every session in id order; deleteAllSessions() empties both key spaces", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const user = await createUser(kv, { email: "ana@example.com" });
    const a = session("ssn_1", user.id, "d1");
    const b = session("ssn_2", user.id, "d2");
    await insertSession(kv, b, 60_000);
    await insertSession(kv, a, 60_000);
    assertEquals(await listSessionRecords(kv), [a, b]);
    assertEquals(await deleteAllSessions(kv), 2);
    assertEquals(await listSessionRecords(kv), []);
    assertEquals((await kv.get(sessionByDigestKey("d1"))).value, null);
    assertEquals((await kv.get(sessionByDigestKey("d2"))).value, null);
    assertEquals(await deleteAllSessions(kv), 0);
  } finally {
    kv.close();
  }
});
