/** credentialLabel() and unauthorizedError(): a credential is named by its public prefix only. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { credentialLabel, unauthorizedError } from "../../lib/client/_credential.ts";
import { generateToken, tokenPrefix } from "../../lib/auth/token_format.ts";
import { UnauthorizedError } from "../../lib/errors.ts";

Deno.test("a service token is shown by the public prefix the service stores, never whole", () => {
  for (const type of ["namespace-read", "namespace-client", "superadmin"] as const) {
    const token = generateToken(type);
    assertEquals(credentialLabel(token), `token ${tokenPrefix(token)}…`);
    assert(!credentialLabel(token).includes(token.slice(14)));
  }
});

Deno.test("a session token shows its public prefix, and a stray string only its length", () => {
  const session = `ses_${"A".repeat(43)}`;
  assertEquals(credentialLabel(session), "session ses_AAAAAAAAAA…");
  const label = credentialLabel("hunter2-secret");
  assert(!label.includes("hunter2"), label);
  assertStringIncludes(label, "credential of 14 characters, not shaped like a cfgtool token");
});

Deno.test("unauthorizedError names the server, the prefix and the server's reason", () => {
  const token = generateToken("namespace-read");
  const err = unauthorizedError("http://127.0.0.1:8080", token, "Unknown credential");
  assert(err instanceof UnauthorizedError);
  assertEquals(
    err.message,
    `http://127.0.0.1:8080 rejected the token ${tokenPrefix(token)}…: Unknown credential`,
  );
  assertEquals(err.details, {
    server: "http://127.0.0.1:8080",
    credential: `token ${tokenPrefix(token)}…`,
    reason: "Unknown credential",
  });
});
