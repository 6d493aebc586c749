/**
 * Sealed secrets (lib/auth/sealing.ts): they open with the key and label
 * they were sealed with and with nothing else, never hold the secret in
 * the clear, and move to a new token key when the old one is at hand.
 */
import { assert, assertEquals, assertNotEquals, assertRejects } from "../assert.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  reseal,
  seal,
  SealError,
  sealingKey,
  unseal,
  WEBHOOK_SECRET_SEAL,
} from "../../lib/auth/sealing.ts";

Deno.test("a sealed secret opens with its token key and label, and with no other", async () => {
  const tokenKey = await randomTokenKey();
  const key = await sealingKey(tokenKey, WEBHOOK_SECRET_SEAL);
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const sealed = await seal(key, secret);
  assert(!sealed.includes(secret) && !sealed.includes(secret.slice(6)));
  assertNotEquals(await seal(key, secret), sealed, "a new IV each time");
  assertEquals(await unseal(key, sealed), secret);
  assertEquals(await unseal(await sealingKey(tokenKey, WEBHOOK_SECRET_SEAL), sealed), secret);
  const otherLabel = await sealingKey(tokenKey, "cfgtool saml sp key seal v1");
  await assertRejects(() => unseal(otherLabel, sealed), SealError);
  const otherKey = await sealingKey(await randomTokenKey(), WEBHOOK_SECRET_SEAL);
  await assertRejects(() => unseal(otherKey, sealed), SealError);
  await assertRejects(() => unseal(key, sealed.slice(0, -4) + "AAAA"), SealError);
  await assertRejects(() => unseal(key, "not base64!"), SealError);
});

Deno.test("reseal moves a secret from the old token key to the new one", async () => {
  const before = await sealingKey(await randomTokenKey(), WEBHOOK_SECRET_SEAL);
  const after = await sealingKey(await randomTokenKey(), WEBHOOK_SECRET_SEAL);
  const moved = await reseal(before, after, await seal(before, "whsec_x"));
  assertEquals(await unseal(after, moved), "whsec_x");
  await assertRejects(() => unseal(before, moved), SealError);
  const sealedBefore = await seal(before, "y");
  await assertRejects(() => reseal(after, before, sealedBefore), SealError);
});
