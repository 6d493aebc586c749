/**
 * Replay refusal of SAML assertions (lib/login/saml_replay.ts): an
 * identity provider's assertion id is accepted once, whichever sign-in
 * carries it.
 */
import { assertEquals } from "../assert.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { rememberAssertion } from "../../lib/login/saml_replay.ts";

const IDP = "https://idp.acme.test/realms/acme";

/** A fresh store and token key, closed after the test. */
async function store() {
  const kv = await Deno.openKv(":memory:");
  return { kv, key: await randomTokenKey(), [Symbol.dispose]: () => kv.close() };
}

Deno.test("an identity provider's assertion is accepted once: the second time it is a replay", async () => {
  using deps = await store();
  const now = Date.now();
  assertEquals(await rememberAssertion(deps, IDP, "_a1", now + 300_000, now), true);
  assertEquals(await rememberAssertion(deps, IDP, "_a1", now + 300_000, now + 1_000), false);
  assertEquals(
    await rememberAssertion(deps, IDP, "_a1", now + 900_000, now + 2_000),
    false,
    "claiming a longer lifetime does not make it new",
  );
});

Deno.test("the same id from another identity provider, or another id, is another assertion", async () => {
  using deps = await store();
  const now = Date.now();
  assertEquals(await rememberAssertion(deps, IDP, "_a1", now + 300_000, now), true);
  assertEquals(
    await rememberAssertion(deps, "https://idp.other.test", "_a1", now + 300_000, now),
    true,
  );
  assertEquals(await rememberAssertion(deps, IDP, "_a2", now + 300_000, now), true);
  assertEquals(await rememberAssertion(deps, "https://idp.other.test", "_a1", now, now), false);
});

Deno.test("an assertion is remembered whatever lifetime it claims, even one already over", async () => {
  using deps = await store();
  const now = Date.now();
  assertEquals(await rememberAssertion(deps, IDP, "_past", now - 3_600_000, now), true);
  assertEquals(await rememberAssertion(deps, IDP, "_past", now - 3_600_000, now), false);
  assertEquals(await rememberAssertion(deps, IDP, "_years", now + 3 * 365 * 86_400_000, now), true);
  assertEquals(await rememberAssertion(deps, IDP, "_years", now, now + 1_000), false);
});
