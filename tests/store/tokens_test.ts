import { assertEquals } from "../assert.ts";
import { listAudit, tokenAuditEntry } from "../../lib/store/audit.ts";
import {
  bootstrapCountOps,
  eachTokenRecord,
  findTokenByDigest,
  findTokenIdByDigest,
  getBootstrapCount,
  getTokenEntry,
  getTokenRecord,
  insertTokenOps,
  markRotatedOps,
  type TokenRecord,
  updateTokenIfUnchanged,
} from "../../lib/store/tokens.ts";
import { tokenByDigestKey, tokenKey } from "../../lib/store/keys.ts";

Deno.test("findTokenByDigest() finds a record through the digest index, and nothing for an unknown digest", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const record = { id: "tok_1", digest: "d1", status: "active" } as unknown as TokenRecord;
    await kv.set(tokenKey("tok_1"), record);
    await kv.set(tokenByDigestKey("d1"), "tok_1");
    assertEquals((await findTokenByDigest(kv, "d1"))?.value.id, "tok_1");
    assertEquals(await findTokenIdByDigest(kv, "d1"), "tok_1");
    await kv.set(tokenKey("tok_1"), { ...record, status: "revoked" });
    assertEquals((await findTokenByDigest(kv, "d1"))?.value.status, "revoked");
    assertEquals(await findTokenByDigest(kv, "d2"), null);
    // an index entry whose record is gone finds nothing
    await kv.delete(tokenKey("tok_1"));
    assertEquals(await findTokenByDigest(kv, "d1"), null);
  } finally {
    kv.close();
  }
});

function tokenRecord(id: string, digest: string, name = id): TokenRecord {
  return {
    id,
    type: "tenant-admin",
    name,
    description: null,
    tenant_slug: "acme",
    namespace_slug: null,
    environment_slug: null,
    allowed_origins: [],
    digest,
    status: "active",
    last_used_at: null,
    rotated_to_token_id: null,
  } as unknown as TokenRecord;
}

Deno.test("eachTokenRecord() yields every token record in id order", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const ids: string[] = [];
    for await (const t of eachTokenRecord(kv)) ids.push(t.id);
    assertEquals(ids, []);
    await insertTokenOps(kv.atomic(), tokenRecord("tok_2", "d2")).commit();
    await insertTokenOps(kv.atomic(), tokenRecord("tok_1", "d1")).commit();
    for await (const t of eachTokenRecord(kv)) ids.push(t.id);
    assertEquals(ids, ["tok_1", "tok_2"]);
  } finally {
    kv.close();
  }
});

Deno.test("updateTokenIfUnchanged() writes the record and its audit entry together, and refuses a stale read", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const t = tokenRecord("tok_1", "d1");
    await insertTokenOps(kv.atomic(), t).commit();
    const seen = (await getTokenEntry(kv, "tok_1")) as Deno.KvEntry<TokenRecord>;
    const used = { ...t, last_used_at: "2030-01-01T00:00:00.000Z" };
    const actor = { id: "tok_1", principal_type: "service" as const, request_id: "r1" };
    const audit = tokenAuditEntry("token.authenticated", used, actor, new Date());
    assertEquals(typeof await updateTokenIfUnchanged(kv, seen, used, audit), "string");
    assertEquals((await getTokenRecord(kv, "tok_1")).last_used_at, "2030-01-01T00:00:00.000Z");
    assertEquals((await listAudit(kv, { tenant: "acme" })).items.map((e) => e.type), [
      "token.authenticated",
    ]);
    const again = { ...t, last_used_at: "2030-01-02T00:00:00.000Z" };
    assertEquals(await updateTokenIfUnchanged(kv, seen, again, audit), null);
    assertEquals((await getTokenRecord(kv, "tok_1")).last_used_at, "2030-01-01T00:00:00.000Z");
  } finally {
    kv.close();
  }
});

Deno.test("markRotatedOps() sets rotated_to_token_id only if the old record did not change", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await insertTokenOps(kv.atomic(), tokenRecord("tok_1", "d1")).commit();
    const old = (await getTokenEntry(kv, "tok_1")) as Deno.KvEntry<TokenRecord>;
    assertEquals((await markRotatedOps(kv.atomic(), old, "tok_2").commit()).ok, true);
    assertEquals((await getTokenRecord(kv, "tok_1")).rotated_to_token_id, "tok_2");
    assertEquals((await markRotatedOps(kv.atomic(), old, "tok_3").commit()).ok, false);
    assertEquals((await getTokenRecord(kv, "tok_1")).rotated_to_token_id, "tok_2");
  } finally {
    kv.close();
  }
});

Deno.test("the bootstrap counter starts at 0 and moves only from the count as read", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const first = await getBootstrapCount(kv);
    assertEquals(first, { count: 0, versionstamp: null });
    assertEquals((await bootstrapCountOps(kv.atomic(), first, 1).commit()).ok, true);
    const second = await getBootstrapCount(kv);
    assertEquals(second.count, 1);
    assertEquals((await bootstrapCountOps(kv.atomic(), first, 2).commit()).ok, false);
    // a check only (a given name): passes while unchanged, writes nothing
    assertEquals((await bootstrapCountOps(kv.atomic(), second, null).commit()).ok, true);
    assertEquals((await getBootstrapCount(kv)).count, 1);
  } finally {
    kv.close();
  }
});
