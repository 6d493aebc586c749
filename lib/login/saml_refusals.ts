/**
 * What `@node-saml/node-saml` found wrong with an identity provider's
 * response, in cfgtool's terms: a 403 `LoginError` whose stable `reason`
 * says which check refused the sign-in (`unsolicited`, `in_response_to`,
 * `signature`, `expired`, `audience`, `provider`, `assertion`), with a
 * message a person can read. The library's own message stays in the
 * error's `cause` (logs only).
 *
 * @module
 */
import { LoginError, UnavailableError } from "../errors.ts";

/** The library's messages, by the refusal they mean (first match wins). */
const RULES: [RegExp, string, string][] = [
  [
    /decryption|EncryptedAssertion/i,
    "assertion",
    "The identity provider encrypted the assertion, which cfgtool does not support; " +
    "turn assertion encryption off for this application at the identity provider",
  ],
  [
    /InResponseTo is missing/i,
    "unsolicited",
    "The identity provider sent a sign-in this server did not ask for; start the sign-in from cfgtool",
  ],
  [
    /InResponseTo/i,
    "in_response_to",
    "This sign-in response answers another sign-in than the one in progress; start again",
  ],
  [
    /signature|signed data|verif/i,
    "signature",
    "The sign-in response is not signed by this tenant's identity provider",
  ],
  [
    // The library says "No valid subject confirmation" when every bearer
    // confirmation's NotOnOrAfter has passed (it checks those first).
    /expired|not yet valid|NotBefore|NotOnOrAfter|too old|No valid subject confirmation/i,
    "expired",
    "The sign-in response has expired (or is not valid yet); start again, and check the clocks",
  ],
  [
    /audience/i,
    "audience",
    "The sign-in response was issued for another application than this tenant's cfgtool",
  ],
];

/**
 * Turns an error raised while checking a SAML response into the refusal
 * to show and audit. A `LoginError` or `UnavailableError` passes through;
 * a status other than Success from the identity provider is `provider`;
 * anything not recognised is `assertion`.
 *
 * @param err what was raised
 * @returns the refusal
 *
 * @example
 * ```ts
 * import { samlRefusalOf } from "./saml_refusals.ts";
 * const reason = (e: unknown) => (samlRefusalOf(e) as { reason?: string }).reason;
 * if (reason(new Error("Invalid signature")) !== "signature") throw new Error();
 * if (reason(new Error("InResponseTo is not valid")) !== "in_response_to") throw new Error();
 * if (reason(new TypeError("x of undefined")) !== "assertion") throw new Error();
 * ```
 */
export function samlRefusalOf(err: unknown): LoginError | UnavailableError {
  if (err instanceof LoginError || err instanceof UnavailableError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/SAML provider returned/.test(message)) {
    // Only the top-level status code: a status response is not signed and
    // anyone can post one, so its text stays in the log (the error's cause).
    const what = /SAML provider returned (\w+) error/.exec(message)?.[1] ?? "an error";
    return new LoginError("provider", `The identity provider did not sign you in (${what})`, {
      cause: err,
    });
  }
  for (const [pattern, reason, says] of RULES) {
    if (pattern.test(message)) return new LoginError(reason, says, { cause: err });
  }
  return new LoginError("assertion", "The identity provider's answer could not be accepted", {
    cause: err,
  });
}
