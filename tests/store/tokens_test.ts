import { assertEquals } from "../assert.ts";
import { findTokenByDigest, TokenDigestIndex, type TokenRecord } from "../../lib/store/tokens.ts";
import { tokenByDigestKey, tokenKey } from "../../lib/store/keys.ts";

Deno.test("findTokenByDigest() remembers a found digest in the runtime's index, and reads the record fresh", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const record = { id: "tok_1", digest: "d1", status: "active" } as unknown as TokenRecord;
    await kv.set(tokenKey("tok_1"), record);
    await kv.set(tokenByDigestKey("d1"), "tok_1");
    const index = new TokenDigestIndex();
    assertEquals((await findTokenByDigest(kv, "d1", index))?.value.id, "tok_1");
    assertEquals(index.idOf("d1"), "tok_1");
    // the index key gone: the remembered id still finds the record
    await kv.delete(tokenByDigestKey("d1"));
    assertEquals((await findTokenByDigest(kv, "d1", index))?.value.id, "tok_1");
    assertEquals(await findTokenByDigest(kv, "d1"), null, "without the index, the key is read");
    // a revocation shows at once: the record is never taken from the index
    await kv.set(tokenKey("tok_1"), { ...record, status: "revoked" });
    assertEquals((await findTokenByDigest(kv, "d1", index))?.value.status, "revoked");
    // an unknown digest is not remembered
    assertEquals(await findTokenByDigest(kv, "d2", index), null);
    assertEquals(index.idOf("d2"), undefined);
  } finally {
    kv.close();
  }
});
