/**
 * SAML 2.0 web sign-in of a tenant, as a service provider built on
 * `@node-saml/node-saml`: SP-initiated, the request over the HTTP-Redirect
 * binding (signed with the installation's key, lib/login/saml_sp_key.ts),
 * the response over HTTP-POST, assertions signed by a certificate of the
 * identity provider's metadata.
 *
 * A sign-in has three steps, because the identity provider's POST to the
 * assertion consumer service is a cross-site request that carries no
 * SameSite=Lax cookie:
 * 1. {@linkcode startSamlFlow}: keeps the request id, the endpoints and
 *    where to go next under a random `state` (sent as `RelayState`, and
 *    bound to the browser by the caller's cookie), and gives the URL.
 * 2. {@linkcode acceptSamlResponse} (the POST): redeems the state named by
 *    `RelayState` (single use: a second post of the same response is
 *    `replayed`), checks the response (library: signature with the
 *    metadata's certificates and signed assertions required, `InResponseTo`
 *    equal to this sign-in's request, `NotBefore`/`NotOnOrAfter` with
 *    {@linkcode SAML_CLOCK_SKEW_MS}, audience; cfgtool: no DTD or comments,
 *    `Destination`, `Recipient`, `Issuer`, the assertion id never seen
 *    before), makes the identity, and keeps it under a new single-use
 *    `handle` for step 3.
 * 3. {@linkcode finishSamlFlow} (the redirect to `/auth/saml/finish`, a
 *    top-level GET that carries the browser's cookie): the handle's sign-in
 *    must be the one this browser started (a response posted into another
 *    browser — login CSRF — is `state`).
 *
 * Every refusal is a `LoginError` with a stable reason; the caller audits
 * it with the facts this module fills in as it learns them.
 *
 * @module
 */
// @ts-types="./node_saml.d.ts"
import { SAML } from "@node-saml/node-saml";
import { base64urlnopad } from "base";
import { toHex } from "../bytes.ts";
import { LoginError } from "../errors.ts";
import type { SamlLoginPolicy } from "../protocol/login_policy.ts";
import { findLoginPolicy } from "../store/login_policies.ts";
import { peekOneTime, putOneTime, takeOneTime } from "../store/one_time.ts";
import { type AuthDeps, clock } from "../auth/deps.ts";
import { digestsEqual, hmacHex } from "../auth/digest.ts";
import { identityFromProfile } from "./saml_assertion.ts";
import {
  checkSamlResponse,
  SAML_CLOCK_SKEW_MS,
  type SamlCheckInput,
  samlConfig,
  type SamlEndpoints,
} from "./saml_check.ts";
import type { SamlChecker } from "./saml_checker.ts";
import { idpMetadataOf } from "./saml_metadata.ts";
import { samlRefusalOf } from "./saml_refusals.ts";
import { rememberAssertion } from "./saml_replay.ts";
import { samlSigningPair } from "./saml_sp_key.ts";
import type { VerifiedIdentity } from "./sign_in.ts";

/** How long a person has to come back from the identity provider, ms. */
export const SAML_FLOW_TTL_MS = 10 * 60_000;
/** How long an accepted response waits for the browser's redirect, ms. */
const DONE_TTL_MS = 2 * 60_000;

/** One-time record kinds. */
const FLOW = "saml_state";
const USED = "saml_used";
const DONE = "saml_done";

/**
 * The SP entity id and consumer URL of `tenant` on the server at `origin`.
 * The entity id is the metadata URL, so an identity provider can read it.
 *
 * @param origin the server's public origin
 * @param tenant the tenant
 * @returns the entity id and the consumer URL
 *
 * @example
 * ```ts
 * import { samlEndpoints } from "./saml_flow.ts";
 * const e = samlEndpoints("https://flags.example.com", "acme");
 * if (e.entityId !== "https://flags.example.com/auth/saml/metadata?tenant=acme") throw new Error();
 * if (e.acsUrl !== "https://flags.example.com/auth/saml/acs") throw new Error();
 * ```
 */
export function samlEndpoints(origin: string, tenant: string): SamlEndpoints {
  return {
    entityId: `${origin}/auth/saml/metadata?tenant=${encodeURIComponent(tenant)}`,
    acsUrl: `${origin}/auth/saml/acs`,
  };
}

/** What a sign-in in progress keeps for the consumer service. */
interface SamlFlow {
  tenant: string;
  request_id: string;
  idp_entity_id: string;
  sp_entity_id: string;
  acs_url: string;
  next: string;
}

/** What an accepted response keeps for the browser's redirect. */
interface SamlDone {
  /** Digest of the state the browser's cookie must hold. */
  state_digest: string;
  identity: VerifiedIdentity;
  next: string;
}

/** What a refused step is audited with, filled in as the flow learns it. */
export interface SamlFacts {
  tenant?: string | null;
  method: "saml";
  email?: string;
}

/**
 * Starts a sign-in to `tenant` through its SAML `policy`: reads the
 * identity provider's metadata (503 `login_unavailable` when it cannot be
 * read), stores the flow under a new `state` for {@linkcode SAML_FLOW_TTL_MS},
 * and returns the signed HTTP-Redirect URL (with `RelayState` = state) and
 * the state (for the caller to bind to the browser).
 *
 * @param deps store, key, clock
 * @param tenant the tenant
 * @param policy its SAML policy
 * @param options the server's public origin, and where to go once signed in
 * @returns where to send the person, and the state
 *
 * @example
 * ```ts ignore
 * const { url, state } = await startSamlFlow(deps, "acme", policy, {
 *   origin: "https://flags.example.com", next: "/auth/signed-in",
 * });
 * assertEquals(url.searchParams.get("RelayState"), state);
 * ```
 */
export async function startSamlFlow(
  deps: AuthDeps,
  tenant: string,
  policy: SamlLoginPolicy,
  options: { origin: string; next: string },
): Promise<{ url: URL; state: string }> {
  const idp = await idpMetadataOf(policy);
  const pair = await samlSigningPair(deps);
  const endpoints = samlEndpoints(options.origin, tenant);
  // An xsd:ID (NCName): `_` and hex digits.
  const requestId = `_${toHex(crypto.getRandomValues(new Uint8Array(20)))}`;
  const now = clock(deps).getTime();
  const flow: SamlFlow = {
    tenant,
    request_id: requestId,
    idp_entity_id: idp.entityId,
    sp_entity_id: endpoints.entityId,
    acs_url: endpoints.acsUrl,
    next: options.next,
  };
  let state = "";
  for (let stored = false; !stored;) {
    state = base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await hmacHex(deps.key, `${FLOW}:${state}`);
    stored = await putOneTime(deps.kv, FLOW, digest, flow, SAML_FLOW_TTL_MS, now);
  }
  const saml = new SAML({
    ...samlConfig(endpoints, idp, pair.privateKey, policy),
    generateUniqueId: () => requestId,
  });
  const url = new URL(await saml.getAuthorizeUrlAsync(state, undefined, {}));
  return { url, state };
}

/**
 * Checks a response posted to the consumer service (its form fields
 * `SAMLResponse` and `RelayState`) and keeps the identity it proves for
 * the browser's redirect. Refusals are 403 `LoginError`s (400 for a post
 * without a response) with reason `unsolicited`, `replayed`,
 * `in_response_to`, `policy`, `signature`, `issuer`, `audience`,
 * `recipient`, `destination`, `expired`, `provider`, `assertion`,
 * `email_missing` or `email_domain`; unusable metadata is 503
 * `login_unavailable`. `facts` receives the tenant and email as they are
 * learnt, for the audit entry of a refusal.
 *
 * @param deps store, key, clock, and the server's SAML checker (a worker;
 *   without one the response is checked in place)
 * @param form the posted `SAMLResponse` and `RelayState`
 * @param facts filled in for the caller's audit
 * @returns the handle the browser's redirect redeems
 *
 * @example
 * ```ts ignore
 * const { handle } = await acceptSamlResponse(deps, { SAMLResponse, RelayState }, facts);
 * return c.redirect(`/auth/saml/finish?handle=${handle}`, 303);
 * ```
 */
export async function acceptSamlResponse(
  deps: AuthDeps & { samlChecker?: SamlChecker },
  form: { SAMLResponse?: string | null; RelayState?: string | null },
  facts: SamlFacts,
): Promise<{ handle: string }> {
  const encoded = form.SAMLResponse ?? "";
  const relay = form.RelayState ?? "";
  if (encoded === "") {
    facts.tenant = await samlTenantOfState(deps, relay); // for the audit; the flow stays usable
    throw new LoginError("assertion", "The sign-in post carries no SAML response; start again", {
      status: 400,
    });
  }
  const now = clock(deps).getTime();
  const flow = await takeFlow(deps, relay, facts, now);
  const record = await findLoginPolicy(deps.kv, flow.tenant);
  const policy = record?.policy;
  if (policy?.method !== "saml") throw policyChanged(flow.tenant);
  const idp = await idpMetadataOf(policy);
  if (idp.entityId !== flow.idp_entity_id) throw policyChanged(flow.tenant);
  const input: SamlCheckInput = {
    encoded,
    endpoints: { entityId: flow.sp_entity_id, acsUrl: flow.acs_url },
    idp,
    privateKey: (await samlSigningPair(deps)).privateKey,
    policy,
    requestId: flow.request_id,
    requestedAt: now,
  };
  // On the checker's worker when the server has one: the XML work never holds this thread.
  const { profile, assertion } = await (deps.samlChecker?.check(input) ?? checkSamlResponse(input));
  if (profile.nameID !== undefined && profile.nameID.includes("@")) facts.email = profile.nameID;
  if (assertion.id === "") throw samlRefusalOf(new Error("assertion without ID"));
  const until = (assertion.notOnOrAfter ?? now + SAML_FLOW_TTL_MS) + SAML_CLOCK_SKEW_MS;
  if (!await rememberAssertion(deps, idp.entityId, assertion.id, until, now)) {
    throw new LoginError("replayed", "This sign-in assertion was used already; start again");
  }
  const identity = identityFromProfile(flow.tenant, policy, profile, assertion.contexts);
  facts.email = identity.email;
  const handle = base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
  const done: SamlDone = {
    state_digest: await hmacHex(deps.key, `${FLOW}:${relay}`),
    identity,
    next: flow.next,
  };
  await putOneTime(
    deps.kv,
    DONE,
    await hmacHex(deps.key, `${DONE}:${handle}`),
    done,
    DONE_TTL_MS,
    now,
  );
  return { handle };
}

/**
 * Finishes a sign-in in the browser that started it: redeems `handle`
 * (single use) and checks that `boundState` (the state the browser's
 * cookie holds) is the sign-in's. Refusal: 403 `LoginError` `state`.
 *
 * @param deps store, key, clock
 * @param handle the handle of the accepted response
 * @param boundState the state bound to this browser, if any
 * @param facts filled in for the caller's audit
 * @returns the identity to sign in, and where to go next
 *
 * @example
 * ```ts ignore
 * const { identity, next } = await finishSamlFlow(deps, handle, cookieState, facts);
 * ```
 */
export async function finishSamlFlow(
  deps: AuthDeps,
  handle: string | null | undefined,
  boundState: string | undefined,
  facts: SamlFacts,
): Promise<{ identity: VerifiedIdentity; next: string }> {
  const now = clock(deps).getTime();
  const done = handle === null || handle === undefined || handle === ""
    ? null
    : await takeOneTime<SamlDone>(deps.kv, DONE, await hmacHex(deps.key, `${DONE}:${handle}`), now);
  if (done === null) {
    throw new LoginError(
      "state",
      "This sign-in is not waiting to finish (it may have expired, or finished already); start again",
    );
  }
  facts.tenant = done.identity.tenant;
  facts.email = done.identity.email;
  const bound = boundState === undefined || boundState === ""
    ? ""
    : await hmacHex(deps.key, `${FLOW}:${boundState}`);
  if (!digestsEqual(bound, done.state_digest)) {
    throw new LoginError("state", "This sign-in was not started in this browser; start again");
  }
  return { identity: done.identity, next: done.next };
}

/**
 * The tenant a browser's bound state started a sign-in to, while that
 * sign-in is in progress (for the audit of a refusal before the response
 * names it), or null.
 *
 * @param deps store and key
 * @param state the state from the browser's cookie
 * @returns the tenant, or null
 *
 * @example
 * ```ts ignore
 * facts.tenant = await samlTenantOfState(deps, cookieState);
 * ```
 */
export async function samlTenantOfState(
  deps: AuthDeps,
  state: string | undefined,
): Promise<string | null> {
  if (state === undefined || state === "") return null;
  const digest = await hmacHex(deps.key, `${FLOW}:${state}`);
  const now = clock(deps).getTime();
  return (await peekOneTime<SamlFlow>(deps.kv, FLOW, digest, now))?.tenant ??
    (await peekOneTime<{ tenant: string }>(deps.kv, USED, digest, now))?.tenant ?? null;
}

/** Redeems the flow `relay` names (single use); tells a replay from an unknown state. */
async function takeFlow(
  deps: AuthDeps,
  relay: string,
  facts: SamlFacts,
  now: number,
): Promise<SamlFlow> {
  if (relay === "" || relay.length > 200) {
    throw new LoginError(
      "unsolicited",
      "The identity provider sent a sign-in this server did not ask for; start the sign-in from cfgtool",
    );
  }
  const digest = await hmacHex(deps.key, `${FLOW}:${relay}`);
  const flow = await takeOneTime<SamlFlow>(deps.kv, FLOW, digest, now);
  if (flow === null) {
    const used = await peekOneTime<{ tenant: string }>(deps.kv, USED, digest, now);
    if (used !== null) {
      facts.tenant = used.tenant;
      throw new LoginError("replayed", "This sign-in response was used already; start again");
    }
    throw new LoginError(
      "unsolicited",
      "This sign-in response does not match a sign-in in progress (it may have expired); start again",
    );
  }
  facts.tenant = flow.tenant;
  await putOneTime(deps.kv, USED, digest, { tenant: flow.tenant }, SAML_FLOW_TTL_MS, now);
  return flow;
}

/** The tenant's policy changed while the person was at the identity provider. */
function policyChanged(tenant: string): LoginError {
  return new LoginError(
    "policy",
    `Tenant ${tenant} changed how its people sign in during this sign-in; start again`,
  );
}
