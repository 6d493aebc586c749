/**
 * The OpenID Connect sign-in of a tenant, as a relying party built on
 * `oauth4webapi`: the authorization code flow with PKCE (S256), `state` and
 * `nonce`. {@linkcode startOidcFlow} keeps what the callback will need (PKCE
 * verifier, nonce, redirect URI, where to go next) in a single-use record
 * keyed by a digest of the `state`, and gives the URL to send the person
 * to. {@linkcode completeOidcFlow} takes the provider's redirect back: the
 * state must be one in progress, started in this browser (the caller passes
 * the state its cookie bound), and used once; then the code is redeemed at
 * the token endpoint with the client secret, and the ID token checked
 * (issuer, audience, nonce, expiry, signature against the issuer's JWKS)
 * before the claims make the person ({@linkcode identityFromClaims}).
 *
 * Every refusal is a `LoginError` with a stable reason; the caller audits
 * it with the facts this module fills in as it learns them (tenant, email).
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import { LoginError, UnavailableError } from "../errors.ts";
import type { OidcLoginPolicy } from "../protocol/login_policy.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import { peekOneTime, putOneTime, takeOneTime } from "../store/one_time.ts";
import { type AuthDeps, clock } from "../auth/deps.ts";
import { hmacHex } from "../auth/digest.ts";
import { readClientSecret } from "./policy.ts";
import { identityFromClaims } from "./oidc_claims.ts";
import { clientAuthentication, discoverIssuer, issuerRequestOptions } from "./oidc_metadata.ts";
import { refusalOf } from "./oidc_refusals.ts";
import type { VerifiedIdentity } from "./sign_in.ts";

/** How long a person has to come back from the identity provider, ms. */
export const OIDC_FLOW_TTL_MS = 10 * 60_000;

/** One-time record kind of a sign-in in progress (by state digest). */
const FLOW = "oidc_state";
/** One-time record kind marking a state already used (replays are told apart from unknowns). */
const USED = "oidc_used";

/** What a sign-in in progress keeps for its callback. */
export interface OidcFlow {
  tenant: string;
  issuer: string;
  client_id: string;
  redirect_uri: string;
  /** PKCE code verifier. */
  verifier: string;
  nonce: string;
  /** Where to go once signed in (a same-origin path). */
  next: string;
}

/** What a refused callback is audited with, filled in as the flow learns it. */
export interface OidcFacts {
  tenant?: string | null;
  method: "oidc";
  email?: string;
}

/**
 * Starts a sign-in to `tenant` through its OIDC `policy`: reads the
 * issuer's metadata (503 `login_unavailable` when it does not answer, or
 * the client secret is missing), stores the flow under its new `state` for
 * {@linkcode OIDC_FLOW_TTL_MS}, and returns the authorization URL and the
 * state (for the caller to bind to the browser).
 *
 * @param deps store, key, clock
 * @param tenant the tenant
 * @param policy its OIDC policy
 * @param options the callback URL and where to go once signed in
 * @returns where to send the person, and the state
 *
 * @example
 * ```ts ignore
 * const { url, state } = await startOidcFlow(deps, "acme", policy, {
 *   redirectUri: "https://flags.example.com/auth/oidc/callback", next: "/auth/signed-in",
 * });
 * assertEquals(url.searchParams.get("state"), state);
 * ```
 */
export async function startOidcFlow(
  deps: AuthDeps,
  tenant: string,
  policy: OidcLoginPolicy,
  options: { redirectUri: string; next: string },
): Promise<{ url: URL; state: string }> {
  await readClientSecret(policy.client_secret_ref); // missing: 503 now, not after the provider
  const as = await discoverIssuer(policy.issuer);
  const verifier = oauth.generateRandomCodeVerifier();
  const nonce = oauth.generateRandomNonce();
  const flow: OidcFlow = {
    tenant,
    issuer: policy.issuer,
    client_id: policy.client_id,
    redirect_uri: options.redirectUri,
    verifier,
    nonce,
    next: options.next,
  };
  let state = "";
  for (let stored = false; !stored;) {
    state = oauth.generateRandomState();
    const digest = await hmacHex(deps.key, `${FLOW}:${state}`);
    stored = await putOneTime(deps.kv, FLOW, digest, flow, OIDC_FLOW_TTL_MS, clock(deps).getTime());
  }
  const scopes = ["openid", "email", "profile"];
  if (as.scopes_supported?.includes("groups")) scopes.push("groups");
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set("client_id", policy.client_id);
  url.searchParams.set("redirect_uri", options.redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", scopes.join(" "));
  url.searchParams.set("state", state);
  url.searchParams.set("nonce", nonce);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  return { url, state };
}

/**
 * Finishes a sign-in from the provider's redirect back (its query
 * `params`). `boundState` is the state the browser's cookie holds: a
 * response whose state differs was not started in this browser. Refusals
 * are 403 `LoginError`s (400 for a response without state) with reason
 * `state`, `code` (a replayed response, or a code the provider refuses),
 * `policy`, `provider`, `issuer`, `audience`, `nonce`, `expired`,
 * `signature`, `id_token`, `email_missing`, `email_unverified` or
 * `email_domain`; an unreachable provider or missing client secret is 503
 * `login_unavailable`. `facts` receives the tenant and email as they are
 * learnt, for the audit entry of a refusal.
 *
 * @param deps store, key, clock
 * @param params the callback's query parameters
 * @param boundState the state bound to this browser, if any
 * @param facts filled in for the caller's audit
 * @returns the flow and the identity to sign in
 *
 * @example
 * ```ts ignore
 * const facts: OidcFacts = { method: "oidc" };
 * try {
 *   const { flow, identity } = await completeOidcFlow(deps, url.searchParams, cookieState, facts);
 * } catch (err) { await recordLoginFailure(deps, { ...facts, reason: err.reason }, ctx); }
 * ```
 */
export async function completeOidcFlow(
  deps: AuthDeps,
  params: URLSearchParams,
  boundState: string | undefined,
  facts: OidcFacts,
): Promise<{ flow: OidcFlow; identity: VerifiedIdentity }> {
  const now = clock(deps).getTime();
  const flow = await takeFlow(deps, params.get("state"), boundState, facts, now);
  const record = await findLoginPolicy(deps.kv, flow.tenant);
  const policy = record?.policy;
  if (
    policy?.method !== "oidc" || policy.issuer !== flow.issuer ||
    policy.client_id !== flow.client_id
  ) {
    throw new LoginError(
      "policy",
      `Tenant ${flow.tenant} changed how its people sign in during this sign-in; start again`,
    );
  }
  const as = await discoverIssuer(policy.issuer);
  const client: oauth.Client = { client_id: policy.client_id };
  const options = issuerRequestOptions(policy.issuer);
  try {
    const callback = oauth.validateAuthResponse(as, client, params, params.get("state")!);
    const secret = await readClientSecret(policy.client_secret_ref);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuthentication(as, secret),
      callback,
      flow.redirect_uri,
      flow.verifier,
      options,
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: flow.nonce,
      requireIdToken: true,
    });
    await checkSignature(as, response, options);
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    if (typeof claims.email === "string") facts.email = claims.email;
    return { flow, identity: identityFromClaims(flow.tenant, policy, claims) };
  } catch (err) {
    throw refusalOf(err);
  }
}

/**
 * Redeems the flow of `state` (single use) and checks it was started in
 * this browser; tells a replay (`code`) from an unknown state (`state`).
 */
async function takeFlow(
  deps: AuthDeps,
  state: string | null,
  boundState: string | undefined,
  facts: OidcFacts,
  now: number,
): Promise<OidcFlow> {
  const boundTenant = async () => {
    if (boundState === undefined || boundState === "") return null;
    const digest = await hmacHex(deps.key, `${FLOW}:${boundState}`);
    return (await peekOneTime<OidcFlow>(deps.kv, FLOW, digest, now))?.tenant ?? null;
  };
  if (state === null || state === "") {
    facts.tenant = await boundTenant();
    throw new LoginError("state", "The sign-in response carries no state; start again", {
      status: 400,
    });
  }
  const digest = await hmacHex(deps.key, `${FLOW}:${state}`);
  const flow = await takeOneTime<OidcFlow>(deps.kv, FLOW, digest, now);
  if (flow === null) {
    const used = await peekOneTime<{ tenant: string }>(deps.kv, USED, digest, now);
    if (used !== null) {
      facts.tenant = used.tenant;
      throw new LoginError("code", "This sign-in response was used already; start again");
    }
    facts.tenant = await boundTenant();
    throw new LoginError(
      "state",
      "This sign-in response does not match a sign-in in progress (it may have expired); start again",
    );
  }
  facts.tenant = flow.tenant;
  await putOneTime(deps.kv, USED, digest, { tenant: flow.tenant }, OIDC_FLOW_TTL_MS, now);
  if (boundState !== state) {
    throw new LoginError("state", "This sign-in was not started in this browser; start again");
  }
  return flow;
}

/** Checks the ID token's signature with the issuer's JWKS (`signature` refusal). */
async function checkSignature(
  as: oauth.AuthorizationServer,
  response: Response,
  options: oauth.ValidateSignatureOptions,
): Promise<void> {
  try {
    await oauth.validateApplicationLevelSignature(as, response, options);
  } catch (err) {
    const refusal = refusalOf(err);
    if (refusal instanceof UnavailableError) throw refusal;
    throw new LoginError(
      "signature",
      "The sign-in token is not signed by this tenant's identity provider",
      { cause: err },
    );
  }
}
