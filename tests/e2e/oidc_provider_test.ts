/**
 * The OpenID provider harness (tests/e2e/oidc_provider.ts and web_client.ts)
 * is a real provider: discovery answers, the authorization code flow with
 * PKCE goes through its own login and consent forms and yields an ID token a
 * certified client library (`oauth4webapi`) accepts, and the clock-offset
 * variant issues ID tokens that are already expired.
 */
import * as oauth from "oauth4webapi";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  generateSigningJwks,
  type OidcProviderOptions,
  startOidcProvider,
} from "./oidc_provider.ts";
import { startIssuerProxy } from "./oidc_proxy.ts";
import {
  authRequest as rpAuthRequest,
  decodeJwtPayload,
  discover,
  INSECURE,
  obtainIdToken,
  redeem as rpRedeem,
  type RelyingParty,
} from "./oidc_relying_party.ts";
import { ProviderPageError, signInAtProvider, WebClient } from "./web_client.ts";

const REDIRECT_URI = "http://127.0.0.1:9/callback"; // never requested: the flow stops before it
const CLIENT = {
  client_id: "cfgtool",
  client_secret: "s3cret-for-tests",
  redirect_uris: [REDIRECT_URI],
};
const RP: RelyingParty = { ...CLIENT, redirect_uri: REDIRECT_URI };
const ADA = {
  sub: "ada",
  email: "ada@acme.com",
  groups: ["eng", "flag-admins"],
  password: "correct horse",
};
const OPTIONS: OidcProviderOptions = { clients: [CLIENT], users: [ADA] };

const authRequest = (as: oauth.AuthorizationServer) => rpAuthRequest(as, RP);
const redeem = (
  as: oauth.AuthorizationServer,
  request: Awaited<ReturnType<typeof authRequest>>,
  back: URL,
) => rpRedeem(as, RP, request, back);

Deno.test("discovery names the issuer, PKCE S256 and a JWKS holding only public keys", async () => {
  await using op = await startOidcProvider(OPTIONS);
  assertEquals(op.issuer, op.url);
  const as = await discover(op.issuer);
  assertEquals(as.issuer, op.issuer);
  assertEquals(as.code_challenge_methods_supported, ["S256"]);
  assert(as.claims_supported?.includes("groups"), JSON.stringify(as.claims_supported));
  assert(as.claims_supported?.includes("email_verified"));
  const jwks = await (await fetch(as.jwks_uri!)).json();
  assertEquals(jwks.keys.length, 1);
  assertEquals(jwks.keys[0].kid, op.jwks.keys[0]!.kid);
  assertEquals(jwks.keys[0].d, undefined);
});

Deno.test("code flow with PKCE through the provider's own forms yields a signed ID token with email and groups", async () => {
  await using op = await startOidcProvider(OPTIONS);
  const as = await discover(op.issuer);
  const request = await authRequest(as);
  const web = new WebClient();
  const back = await signInAtProvider(web, request.url, {
    login: ADA.email,
    password: ADA.password,
  });
  assertEquals(`${back.origin}${back.pathname}`, REDIRECT_URI);
  assertEquals(back.searchParams.get("state"), request.state);
  assertEquals(back.searchParams.get("iss"), op.issuer);
  const response = await redeem(as, request, back);
  const result = await oauth.processAuthorizationCodeResponse(
    as,
    { client_id: CLIENT.client_id },
    response,
    { expectedNonce: request.nonce, requireIdToken: true },
  );
  await oauth.validateApplicationLevelSignature(as, response, INSECURE);
  const claims = oauth.getValidatedIdTokenClaims(result)!;
  assertEquals(claims.iss, op.issuer);
  assertEquals(claims.aud, CLIENT.client_id);
  assertEquals(claims.sub, ADA.sub);
  assertEquals(claims.nonce, request.nonce);
  assertEquals(claims.email, ADA.email);
  assertEquals(claims.email_verified, true);
  assertEquals(claims.groups, ADA.groups);
});

Deno.test("a code is redeemed once: the second redemption is invalid_grant", async () => {
  await using op = await startOidcProvider(OPTIONS);
  const as = await discover(op.issuer);
  const request = await authRequest(as);
  const back = await signInAtProvider(new WebClient(), request.url, {
    login: ADA.sub,
    password: ADA.password,
  });
  await (await redeem(as, request, back)).body?.cancel();
  const again = await redeem(as, request, back);
  assertEquals(again.status, 400);
  assertEquals((await again.json()).error, "invalid_grant");
});

Deno.test("a wrong password is refused on the provider's login page", async () => {
  await using op = await startOidcProvider(OPTIONS);
  const request = await authRequest(await discover(op.issuer));
  const err = await assertRejects(
    () => signInAtProvider(new WebClient(), request.url, { login: ADA.email, password: "wrong" }),
    ProviderPageError,
  );
  assertEquals(err.response.status, 401);
  assert(err.response.text.includes("Invalid login or password"));
});

Deno.test("an authorization request without PKCE is sent back with invalid_request", async () => {
  await using op = await startOidcProvider(OPTIONS);
  const request = await authRequest(await discover(op.issuer));
  request.url.searchParams.delete("code_challenge");
  request.url.searchParams.delete("code_challenge_method");
  const back = await signInAtProvider(new WebClient(), request.url, {
    login: ADA.email,
    password: ADA.password,
  });
  assertEquals(back.searchParams.get("error"), "invalid_request");
  assert(back.searchParams.get("error_description")?.includes("PKCE"));
});

Deno.test("unverified email and a custom groups claim reach the ID token as configured", async () => {
  await using op = await startOidcProvider({
    clients: [CLIENT],
    users: [{ ...ADA, email_verified: false }],
    groupsClaim: "roles",
  });
  const as = await discover(op.issuer);
  const request = await authRequest(as);
  const back = await signInAtProvider(new WebClient(), request.url, {
    login: ADA.email,
    password: ADA.password,
  });
  const result = await oauth.processAuthorizationCodeResponse(
    as,
    { client_id: CLIENT.client_id },
    await redeem(as, request, back),
    { expectedNonce: request.nonce, requireIdToken: true },
  );
  const claims = oauth.getValidatedIdTokenClaims(result)!;
  assertEquals(claims.email_verified, false);
  assertEquals(claims.roles, ADA.groups);
  assertEquals(claims.groups, undefined);
});

Deno.test("the clock-offset provider issues an ID token that is already expired", async () => {
  await using op = await startOidcProvider({ ...OPTIONS, clockOffsetMs: -2 * 3600_000 });
  const as = await discover(op.issuer);
  const request = await authRequest(as);
  const back = await signInAtProvider(new WebClient(), request.url, {
    login: ADA.email,
    password: ADA.password,
  });
  const response = await redeem(as, request, back);
  const body = await response.clone().json();
  const exp = decodeJwtPayload(body.id_token).exp as number;
  assert(exp < Date.now() / 1000 - 3000, `exp ${exp} is not an hour in the past`);
  const err = await assertRejects(
    () =>
      oauth.processAuthorizationCodeResponse(as, { client_id: CLIENT.client_id }, response, {
        expectedNonce: request.nonce,
        requireIdToken: true,
      }),
    oauth.OperationProcessingError,
  );
  assertEquals(err.code, oauth.JWT_TIMESTAMP_CHECK);
  assert(err.message.includes("exp"), err.message);
});

Deno.test("two providers given one JWKS sign with the same key under different issuers", async () => {
  const jwks = await generateSigningJwks();
  await using first = await startOidcProvider({ ...OPTIONS, jwks });
  await using second = await startOidcProvider({ ...OPTIONS, jwks });
  assert(first.issuer !== second.issuer);
  const keysOf = async (issuer: string) =>
    (await (await fetch((await discover(issuer)).jwks_uri!)).json()).keys;
  const [a, b] = [await keysOf(first.issuer), await keysOf(second.issuer)];
  assertEquals(a, b);
  assertEquals(a[0].kid, jwks.keys[0]!.kid);
});

Deno.test("the issuer can be set apart from the listening URL; endpoints follow the request's host", async () => {
  await using op = await startOidcProvider({ ...OPTIONS, issuer: "https://idp.example.test" });
  assertEquals(op.issuer, "https://idp.example.test");
  const res = await fetch(`${op.url}/.well-known/openid-configuration`);
  const meta = await res.json();
  assertEquals(meta.issuer, "https://idp.example.test");
  assertEquals(meta.authorization_endpoint, `${op.url}/auth`);
});

Deno.test("behind the issuer proxy, the flow runs through the proxy and an ID token can be swapped", async () => {
  const jwks = await generateSigningJwks();
  await using proxy = await startIssuerProxy();
  await using op = await startOidcProvider({ ...OPTIONS, jwks, issuer: proxy.url });
  proxy.forwardTo(op.url);
  await using other = await startOidcProvider({ ...OPTIONS, jwks });
  const as = await discover(proxy.url);
  assertEquals(new URL(as.token_endpoint!).origin, proxy.url);
  const request = await authRequest(as);
  const foreign = await obtainIdToken(other.issuer, RP, {
    login: ADA.email,
    password: ADA.password,
  }, request.nonce);
  assertEquals(decodeJwtPayload(foreign).iss, other.issuer);
  const back = await signInAtProvider(new WebClient(), request.url, {
    login: ADA.email,
    password: ADA.password,
  });
  proxy.substituteNextIdToken(foreign);
  const response = await redeem(as, request, back);
  assertEquals(proxy.substitutions(), 1);
  const err = await assertRejects(
    () =>
      oauth.processAuthorizationCodeResponse(as, { client_id: CLIENT.client_id }, response, {
        expectedNonce: request.nonce,
        requireIdToken: true,
      }),
    oauth.OperationProcessingError,
  );
  assertEquals(err.code, oauth.JWT_CLAIM_COMPARISON);
  assert(err.message.includes("iss"), err.message);
});
