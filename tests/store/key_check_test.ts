import { assertEquals } from "../assert.ts";
import {
  getKeyFingerprint,
  recordKeyFingerprint,
  setKeyFingerprint,
} from "../../lib/store/key_check.ts";
import { tokenKeyCheckKey } from "../../lib/store/keys.ts";

Deno.test("recordKeyFingerprint() records the first fingerprint and never overwrites it", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    assertEquals(await getKeyFingerprint(kv), null);
    assertEquals(await recordKeyFingerprint(kv, "aa"), true);
    assertEquals(await recordKeyFingerprint(kv, "bb"), false);
    assertEquals(await getKeyFingerprint(kv), "aa");
    assertEquals((await kv.get(tokenKeyCheckKey())).value, "aa");
  } finally {
    kv.close();
  }
});

Deno.test("setKeyFingerprint() replaces whatever fingerprint was recorded", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await setKeyFingerprint(kv, "aa");
    await setKeyFingerprint(kv, "bb");
    assertEquals(await getKeyFingerprint(kv), "bb");
  } finally {
    kv.close();
  }
});
