import { assert, assertEquals } from "../assert.ts";
import { base58 } from "base";
import {
  generateToken,
  parseToken,
  TOKEN_PREFIX_LENGTH,
  tokenPrefix,
  TYPE_WORDS,
} from "../../lib/auth/token_format.ts";
import { TOKEN_TYPES } from "../../lib/store/tokens.ts";

Deno.test("generateToken() makes svc_<word>_<base58 of 32 random bytes> for every type", () => {
  const expected = {
    "namespace-read": "svc_read_",
    "namespace-write": "svc_write_",
    "namespace-client": "svc_client_",
    "tenant-admin": "svc_tenant_",
    "superadmin": "svc_admin_",
  };
  for (const type of TOKEN_TYPES) {
    const token = generateToken(type);
    assert(token.startsWith(expected[type]), token);
    assertEquals(`svc_${TYPE_WORDS[type]}_`, expected[type]);
    const payload = token.slice(expected[type].length);
    assertEquals(base58.decode(payload).length, 32);
    assertEquals(parseToken(token), { type, payload });
  }
  assert(generateToken("superadmin") !== generateToken("superadmin"));
});

Deno.test("tokenPrefix() is the first 14 characters", () => {
  const token = generateToken("namespace-read");
  assertEquals(TOKEN_PREFIX_LENGTH, 14);
  assertEquals(tokenPrefix(token), token.slice(0, 14));
  assertEquals(tokenPrefix(token).length, 14);
});

Deno.test("parseToken() refuses strings that are not service tokens", () => {
  const good = base58.encode(new Uint8Array(32).fill(9));
  for (
    const s of [
      "",
      "svc_read_",
      `svc_nope_${good}`,
      `svc_read_${good}0`, // 0 is not Base58
      `svc_read_${base58.encode(new Uint8Array(16).fill(9))}`,
      `ses_${good}`,
      `SVC_READ_${good}`,
    ]
  ) {
    assertEquals(parseToken(s), null, s);
  }
});
