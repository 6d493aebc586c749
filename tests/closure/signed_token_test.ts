import { assertEquals, assertNotEquals } from "../assert.ts";
import { tamper } from "../tamper.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import {
  signClosureToken,
  SIGNED_TOKEN_TTL_MS,
  verifyClosureToken,
} from "../../lib/closure/signed_token.ts";

const tuple = { tenant: "acme", namespace: "web", version: 7, subscription: "YSxi" };
const T0 = new Date("2030-01-01T00:00:00Z");

Deno.test("signClosureToken() round-trips through verifyClosureToken() to the principal", async () => {
  const key = await randomTokenKey();
  const token = await signClosureToken(key, "tok_01ABC", tuple, T0);
  assertEquals(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/.test(token), true);
  assertEquals(await verifyClosureToken(key, token, tuple, T0), "tok_01ABC");
});

Deno.test("verifyClosureToken() refuses every other tuple, tenant included", async () => {
  const key = await randomTokenKey();
  const token = await signClosureToken(key, "tok_1", tuple, T0);
  for (
    const other of [
      { ...tuple, tenant: "other" },
      { ...tuple, namespace: "api" },
      { ...tuple, version: 8 },
      { ...tuple, subscription: "Kg" },
    ]
  ) {
    assertEquals(await verifyClosureToken(key, token, other, T0), null, JSON.stringify(other));
  }
});

Deno.test("verifyClosureToken() refuses tokens after 60 s", async () => {
  const key = await randomTokenKey();
  const token = await signClosureToken(key, "tok_1", tuple, T0);
  const later = (ms: number) => new Date(T0.getTime() + ms);
  assertEquals(await verifyClosureToken(key, token, tuple, later(59_000)), "tok_1");
  assertEquals(await verifyClosureToken(key, token, tuple, later(SIGNED_TOKEN_TTL_MS)), null);
});

Deno.test("verifyClosureToken() refuses tampered, foreign-key and malformed tokens", async () => {
  const key = await randomTokenKey();
  const token = await signClosureToken(key, "tok_1", tuple, T0);
  const [payload, mac] = token.split(".") as [string, string];
  // another principal or expiry in the payload breaks the MAC
  const forged = btoa("tok_2\n9999999999").replace(/=+$/, "").replace(/\+/g, "-").replace(
    /\//g,
    "_",
  );
  assertEquals(await verifyClosureToken(key, `${forged}.${mac}`, tuple, T0), null);
  const flipped = tamper(mac, -2);
  assertNotEquals(flipped, mac);
  assertEquals(await verifyClosureToken(key, `${payload}.${flipped}`, tuple, T0), null);
  assertEquals(await verifyClosureToken(await randomTokenKey(), token, tuple, T0), null);
  for (const bad of ["", "x", "a.b", `${payload}.${mac}.x`, `${payload}`, "!!.!!"]) {
    assertEquals(await verifyClosureToken(key, bad, tuple, T0), null, bad);
  }
});
