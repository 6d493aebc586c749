/**
 * The wire rules of the command-line sign-in (lib/protocol/cli_sign_in.ts):
 * the PKCE S256 challenge of RFC 7636, the loopback redirect rule that
 * guards against open redirects, and user codes.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  isLoopbackRedirect,
  isPkceValue,
  normalizeUserCode,
  pkceChallenge,
  randomUserCode,
  USER_CODE_ALPHABET,
} from "../../lib/protocol/cli_sign_in.ts";

Deno.test("the S256 challenge is base64url(SHA-256(verifier)) without padding (RFC 7636 B)", async () => {
  assertEquals(
    await pkceChallenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
    "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
  );
  assert(isPkceValue("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
  assert(!isPkceValue("a".repeat(129)));
});

Deno.test("only http://127.0.0.1:<port>/… and http://localhost:<port>/… are loopback redirects", () => {
  for (
    const ok of [
      "http://127.0.0.1:53682/callback",
      "http://localhost:1/",
      "http://127.0.0.1:65535/a?b=c",
      "http://127.0.0.1:8080",
    ]
  ) assert(isLoopbackRedirect(ok), ok);
  for (
    const bad of [
      "http://127.0.0.1/callback",
      "http://127.0.0.1:0/callback",
      "http://127.0.0.1:65536/callback",
      "https://127.0.0.1:53682/callback",
      "http://127.0.0.2:53682/callback",
      "http://LOCALHOST:53682/callback",
      "http://user@127.0.0.1:53682/callback",
      "http://127.0.0.1:53682@evil.example/callback",
      "http://127.0.0.1:53682\\@evil.example/",
      "http://127.0.0.1:53682/callback#frag",
      "http://[::1]:53682/callback",
      "http://localhost.evil.example:53682/",
      " http://127.0.0.1:53682/callback",
      "//127.0.0.1:53682/callback",
      "",
      null,
    ]
  ) assert(!isLoopbackRedirect(bad), String(bad));
});

Deno.test("user codes have 8 letters of a vowel-free alphabet and are read leniently", () => {
  for (let i = 0; i < 200; i++) {
    const code = randomUserCode();
    assertEquals(code.length, 8);
    for (const ch of code) assert(USER_CODE_ALPHABET.includes(ch), code);
  }
  assertEquals(normalizeUserCode("bcdf ghjk"), "BCDFGHJK");
  assertEquals(normalizeUserCode("BCDF-GHJ"), null);
  assertEquals(normalizeUserCode("BCDF-GHJ0"), null);
  assertEquals(normalizeUserCode(undefined), null);
});
