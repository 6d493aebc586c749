import * as oauth from "oauth4webapi";
import { assert, assertEquals } from "../assert.ts";
import { LoginError, UnavailableError } from "../../lib/errors.ts";
import { refusalOf } from "../../lib/login/oidc_refusals.ts";

const AS: oauth.AuthorizationServer = { issuer: "https://idp.example.com" };

/** The reason of a refusal that must be a LoginError. */
function reasonOf(err: unknown): string {
  const refusal = refusalOf(err);
  assert(refusal instanceof LoginError, String(refusal));
  assertEquals(refusal.status, 403);
  return refusal.reason;
}

/** What `fn` throws. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
}

const ope = (code: string, claim?: string) =>
  new oauth.OperationProcessingError("x", { code, cause: claim === undefined ? {} : { claim } });

Deno.test("ID token claim mismatches map to issuer, audience and nonce", () => {
  assertEquals(reasonOf(ope(oauth.JWT_CLAIM_COMPARISON, "iss")), "issuer");
  assertEquals(reasonOf(ope(oauth.JWT_CLAIM_COMPARISON, "aud")), "audience");
  assertEquals(reasonOf(ope(oauth.JWT_CLAIM_COMPARISON, "azp")), "audience");
  assertEquals(reasonOf(ope(oauth.JWT_CLAIM_COMPARISON, "nonce")), "nonce");
  assertEquals(reasonOf(ope(oauth.JWT_CLAIM_COMPARISON, "c_hash")), "id_token");
});

Deno.test("a timestamp check maps to expired", () => {
  assertEquals(reasonOf(ope(oauth.JWT_TIMESTAMP_CHECK, "exp")), "expired");
  assertEquals(reasonOf(ope(oauth.JWT_TIMESTAMP_CHECK, "iat")), "expired");
});

Deno.test("a callback from another issuer (RFC 9207 iss) or with another state is refused as such", () => {
  const otherIss = thrown(() =>
    oauth.validateAuthResponse(
      AS,
      { client_id: "c" },
      new URLSearchParams({ code: "x", state: "s", iss: "https://evil.example" }),
      "s",
    )
  );
  assertEquals(reasonOf(otherIss), "issuer");
  const otherState = thrown(() =>
    oauth.validateAuthResponse(
      AS,
      { client_id: "c" },
      new URLSearchParams({ code: "x", state: "t" }),
      "s",
    )
  );
  assertEquals(reasonOf(otherState), "state");
});

Deno.test("the provider's error redirect is a provider refusal that names its error", () => {
  const err = thrown(() =>
    oauth.validateAuthResponse(
      AS,
      { client_id: "c" },
      new URLSearchParams({
        error: "access_denied",
        error_description: "End-User aborted",
        state: "s",
      }),
      "s",
    )
  );
  const refusal = refusalOf(err);
  assert(refusal instanceof LoginError);
  assertEquals(refusal.reason, "provider");
  assert(refusal.message.includes("access_denied: End-User aborted"), refusal.message);
});

Deno.test("invalid_grant at the token endpoint is a code refusal; other token errors are provider refusals", async () => {
  const tokenError = (error: string) =>
    oauth.processAuthorizationCodeResponse(
      AS,
      { client_id: "c" },
      Response.json({ error }, { status: 400 }),
    ).then(() => null, (e) => e);
  assertEquals(reasonOf(await tokenError("invalid_grant")), "code");
  assertEquals(reasonOf(await tokenError("invalid_client")), "provider");
});

Deno.test("a failed request to the provider is 503 login_unavailable; refusals pass through", () => {
  const network = refusalOf(new TypeError("error sending request"));
  assert(network instanceof UnavailableError);
  assertEquals(network.status, 503);
  const timeout = refusalOf(new DOMException("timed out", "TimeoutError"));
  assert(timeout instanceof UnavailableError);
  const mine = new LoginError("state", "x");
  assertEquals(refusalOf(mine), mine);
  assertEquals(reasonOf(new Error("anything else")), "id_token");
});
