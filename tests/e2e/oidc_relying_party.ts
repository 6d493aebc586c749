/**
 * Test helper: a minimal OpenID relying party built on `oauth4webapi`, to
 * drive a test provider without cfgtool: discovery, an authorization request
 * (code flow, PKCE S256, `state`, `nonce`), the code redemption, and a whole
 * sign-in that hands back the raw ID token (for a test that needs a genuinely
 * signed token to deliver somewhere else).
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import { signInAtProvider, WebClient } from "./web_client.ts";

/** oauth4webapi's permission to talk to a plain-HTTP (loopback) provider. */
export const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** The client a test relying party is. */
export interface RelyingParty {
  client_id: string;
  client_secret: string;
  redirect_uri: string;
}

/** The pieces of one authorization request. */
export interface AuthRequest {
  url: URL;
  state: string;
  nonce: string;
  verifier: string;
}

/**
 * Reads the provider metadata of `issuer` (which must name itself `issuer`).
 * With `at`, reads it from the provider listening there instead, taking
 * whatever issuer it names (a provider set to claim another's issuer).
 *
 * @example
 * ```ts ignore
 * const as = await discover(op.issuer);
 * assertEquals(as.issuer, op.issuer);
 * ```
 */
export async function discover(issuer: string, at?: string): Promise<oauth.AuthorizationServer> {
  if (at !== undefined) {
    const res = await fetch(new URL("/.well-known/openid-configuration", at));
    return await res.json();
  }
  const url = new URL(issuer);
  return oauth.processDiscoveryResponse(url, await oauth.discoveryRequest(url, INSECURE));
}

/**
 * Builds an authorization request for `rp` at `as` (code flow, PKCE S256,
 * fresh `state`; fresh `nonce` unless given).
 *
 * @example
 * ```ts
 * import { authRequest } from "./oidc_relying_party.ts";
 * const as = { issuer: "http://127.0.0.1:1", authorization_endpoint: "http://127.0.0.1:1/auth" };
 * const rp = { client_id: "app", client_secret: "s", redirect_uri: "http://127.0.0.1:2/cb" };
 * const req = await authRequest(as, rp, { nonce: "n-1" });
 * if (req.url.searchParams.get("nonce") !== "n-1") throw new Error();
 * if (req.url.searchParams.get("code_challenge_method") !== "S256") throw new Error();
 * if (req.url.searchParams.get("state") !== req.state) throw new Error();
 * ```
 */
export async function authRequest(
  as: oauth.AuthorizationServer,
  rp: RelyingParty,
  options: { scope?: string; nonce?: string } = {},
): Promise<AuthRequest> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = options.nonce ?? oauth.generateRandomNonce();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    client_id: rp.client_id,
    redirect_uri: rp.redirect_uri,
    response_type: "code",
    scope: options.scope ?? "openid email",
    state,
    nonce,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  return { url, state, nonce, verifier };
}

/**
 * Checks the redirect `back` against `request` and redeems its code at the
 * token endpoint; returns the raw answer (for oauth4webapi's processing).
 *
 * @example
 * ```ts ignore
 * const response = await redeem(as, rp, request, back);
 * const result = await oauth.processAuthorizationCodeResponse(as, { client_id: rp.client_id }, response);
 * ```
 */
export function redeem(
  as: oauth.AuthorizationServer,
  rp: RelyingParty,
  request: AuthRequest,
  back: URL,
): Promise<Response> {
  const client = { client_id: rp.client_id };
  const params = oauth.validateAuthResponse(as, client, back, request.state);
  return oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(rp.client_secret),
    params,
    rp.redirect_uri,
    request.verifier,
    INSECURE,
  );
}

/**
 * Signs `credentials` in at `issuer` as `rp` (a fresh browser, the provider's
 * own forms) and returns the raw ID token the token endpoint gives, unchecked.
 * `nonce` sets the nonce the token will carry; `at` reaches a provider that
 * claims `issuer` but listens elsewhere (see {@linkcode discover}).
 *
 * @example
 * ```ts ignore
 * const idToken = await obtainIdToken(other.issuer, rp, { login: "ada@acme.com", password: "pw" }, "n-1");
 * assertEquals(decodeJwtPayload(idToken).nonce, "n-1");
 * ```
 */
export async function obtainIdToken(
  issuer: string,
  rp: RelyingParty,
  credentials: { login: string; password: string },
  nonce?: string,
  at?: string,
): Promise<string> {
  const as = await discover(issuer, at);
  const request = await authRequest(as, rp, nonce === undefined ? {} : { nonce });
  const back = await signInAtProvider(new WebClient(), request.url, credentials);
  const response = await redeem(as, rp, request, back);
  const body = await response.json();
  if (typeof body.id_token !== "string") {
    throw new Error(`no ID token from ${issuer}: ${JSON.stringify(body)}`);
  }
  return body.id_token;
}

/**
 * Decodes a JWT's payload without checking anything.
 *
 * @example
 * ```ts
 * import { decodeJwtPayload } from "./oidc_relying_party.ts";
 * const jwt = `e30.${btoa(JSON.stringify({ sub: "ada" })).replace(/=+$/, "")}.sig`;
 * if (decodeJwtPayload(jwt).sub !== "ada") throw new Error();
 * ```
 */
export function decodeJwtPayload(jwt: string): Record<string, unknown> {
  const part = jwt.split(".")[1]!.replaceAll("-", "+").replaceAll("_", "/");
  return JSON.parse(atob(part + "=".repeat((4 - part.length % 4) % 4)));
}
