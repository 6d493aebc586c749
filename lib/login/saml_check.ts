/**
 * The CPU-bound half of accepting a SAML response: decode it, check its
 * raw shape and form (lib/login/saml_assertion.ts), verify it with
 * `@node-saml/node-saml` (signature with the identity provider's
 * certificates, signed assertions required, `InResponseTo`, times,
 * audience), and read the verified assertion. It touches no store and no
 * clock but the one it is given, so it runs as well on a worker
 * (lib/login/saml_checker.ts runs it there, with a deadline: the XML
 * libraries' time grows faster than the response's size on some shapes)
 * as in place (tests, a library caller).
 *
 * Refusals are `LoginError`s with the reasons of lib/login/saml_refusals.ts.
 *
 * @module
 */
// @ts-types="./node_saml.d.ts"
import { SAML, type SamlConfig } from "@node-saml/node-saml";
import { base64 } from "base";
import { LoginError } from "../errors.ts";
import type { SamlLoginPolicy } from "../protocol/login_policy.ts";
import {
  type AssertionFacts,
  inspectAssertion,
  inspectResponse,
  type SamlProfileLike,
} from "./saml_assertion.ts";
import { samlRefusalOf } from "./saml_refusals.ts";

/** How far the identity provider's clock may be off, ms. */
export const SAML_CLOCK_SKEW_MS = 2 * 60_000;
/** Largest decoded response accepted, bytes. */
export const SAML_RESPONSE_MAX_BYTES = 256 * 1024;

/** The service provider's two addresses for a tenant. */
export interface SamlEndpoints {
  /** The SP entity id: the tenant's metadata URL. */
  entityId: string;
  /** The assertion consumer service URL. */
  acsUrl: string;
}

/** What the check needs of the identity provider's metadata. */
export interface SamlIdpFacts {
  entityId: string;
  ssoUrl: string;
  certificates: string[];
}

/**
 * The library's settings shared by the request and the response.
 *
 * @param endpoints this server's addresses for the tenant
 * @param idp the identity provider's sign-on URL and certificates
 * @param privateKey the installation's SAML signing key (PEM)
 * @param policy the tenant's SAML policy
 * @returns the node-saml configuration
 *
 * @example
 * ```ts
 * import { samlConfig } from "./saml_check.ts";
 * const c = samlConfig({ entityId: "https://f.test/md", acsUrl: "https://f.test/acs" },
 *   { ssoUrl: "https://idp.test/sso", certificates: ["MII…"] }, "-----BEGIN PRIVATE KEY-----", { method: "saml" });
 * if (c.audience !== "https://f.test/md" || c.wantAssertionsSigned !== true) throw new Error();
 * ```
 */
export function samlConfig(
  endpoints: SamlEndpoints,
  idp: { ssoUrl: string; certificates: string[] },
  privateKey: string,
  policy: SamlLoginPolicy,
): SamlConfig {
  return {
    callbackUrl: endpoints.acsUrl,
    entryPoint: idp.ssoUrl,
    issuer: endpoints.entityId,
    audience: endpoints.entityId,
    idpCert: idp.certificates,
    privateKey,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "sha256",
    wantAssertionsSigned: true,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: SAML_CLOCK_SKEW_MS,
    // The NameID is the email unless the policy reads it from an attribute.
    identifierFormat: policy.email_attribute === undefined
      ? "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"
      : null,
    disableRequestedAuthnContext: true,
  };
}

/** One response to check, and everything the check compares it with. */
export interface SamlCheckInput {
  /** The posted `SAMLResponse` (base64). */
  encoded: string;
  /** This server's addresses for the tenant, as the sign-in started with them. */
  endpoints: SamlEndpoints;
  /** The tenant's identity provider. */
  idp: SamlIdpFacts;
  /** The installation's SAML key (PEM). */
  privateKey: string;
  /** The tenant's SAML policy. */
  policy: SamlLoginPolicy;
  /** The id of the request this sign-in sent. */
  requestId: string;
  /** When the request was made (epoch ms): the library's `InResponseTo` cache says so. */
  requestedAt: number;
}

/** What a verified response says: the person's NameID and attributes, and the assertion's facts. */
export interface SamlChecked {
  profile: SamlProfileLike;
  assertion: AssertionFacts;
}

/**
 * Checks one response (see the module documentation).
 *
 * @param input the response and what it is checked against
 * @returns the profile and the assertion's facts
 *
 * @example
 * ```ts
 * import { checkSamlResponse } from "./saml_check.ts";
 * let reason = "";
 * try {
 *   await checkSamlResponse({
 *     encoded: btoa("<a".repeat(1000)), endpoints: { entityId: "https://f.test/md", acsUrl: "https://f.test/acs" },
 *     idp: { entityId: "https://idp.test", ssoUrl: "https://idp.test/sso", certificates: [] },
 *     privateKey: "", policy: { method: "saml" }, requestId: "_r1", requestedAt: Date.now(),
 *   });
 * } catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "assertion") throw new Error(reason);
 * ```
 */
export async function checkSamlResponse(input: SamlCheckInput): Promise<SamlChecked> {
  let xml: string;
  try {
    const bytes = base64.decode(input.encoded.replace(/\s+/g, ""));
    if (bytes.length > SAML_RESPONSE_MAX_BYTES) throw new RangeError("response too large");
    xml = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (err) {
    throw new LoginError("assertion", "The identity provider's answer could not be read", {
      cause: err,
    });
  }
  const { endpoints, idp, requestId } = input;
  inspectResponse(xml, endpoints.acsUrl);
  const saml = new SAML({
    ...samlConfig(endpoints, idp, input.privateKey, input.policy),
    validateInResponseTo: "always",
    cacheProvider: {
      saveAsync: () => Promise.resolve(null),
      // The library reads the value as the request's creation time.
      getAsync: (id: string) =>
        Promise.resolve(id === requestId ? new Date(input.requestedAt).toISOString() : null),
      removeAsync: () => Promise.resolve(null),
    },
  });
  let checked;
  try {
    checked = await saml.validatePostResponseAsync({ SAMLResponse: input.encoded });
  } catch (err) {
    throw samlRefusalOf(err);
  }
  const profile = checked.profile;
  if (profile === null) throw samlRefusalOf(new Error("no assertion"));
  const assertionXml = profile.getAssertionXml?.();
  if (assertionXml === undefined) throw samlRefusalOf(new Error("no assertion"));
  const assertion = inspectAssertion(assertionXml, idp.entityId, endpoints.acsUrl, requestId);
  return {
    profile: {
      ...(profile.nameID === undefined ? {} : { nameID: profile.nameID }),
      ...(profile.nameIDFormat === undefined ? {} : { nameIDFormat: profile.nameIDFormat }),
      ...(profile.attributes === undefined ? {} : { attributes: plain(profile.attributes) }),
    },
    assertion,
  };
}

/** The attributes as plain data (they cross to another thread). */
function plain(attributes: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(attributes));
}
