/**
 * What `oauth4webapi` found wrong with an identity provider's answer, in
 * cfgtool's terms: a 403 `LoginError` whose stable `reason` says which
 * check refused the sign-in (`issuer`, `audience`, `nonce`, `expired`,
 * `state`, `code`, `provider`, `id_token`), with a message a person can
 * read. The library's own message stays in the error's `cause` (logs only).
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import { LoginError, UnavailableError } from "../errors.ts";

/** The claim an oauth4webapi check was about, if it says. */
function claimOf(err: oauth.OperationProcessingError): string | undefined {
  const cause = err.cause as { claim?: unknown } | undefined;
  return typeof cause?.claim === "string" ? cause.claim : undefined;
}

/**
 * Turns an error raised while checking the callback, the token answer or
 * the ID token into the refusal to show and audit. A `LoginError` or
 * `UnavailableError` passes through; a failed request to the provider
 * (network, time limit) becomes 503 `login_unavailable`; any other error is
 * a refusal with reason `id_token`.
 *
 * @param err what was raised
 * @returns the refusal
 *
 * @example
 * ```ts
 * import * as oauth from "oauth4webapi";
 * import { refusalOf } from "./oidc_refusals.ts";
 * const as = { issuer: "https://idp.example.com" };
 * let err: unknown;
 * try {
 *   oauth.validateAuthResponse(as, { client_id: "c" },
 *     new URLSearchParams({ code: "x", state: "s", iss: "https://evil.example" }), "s");
 * } catch (e) { err = e; }
 * const refusal = refusalOf(err);
 * if (!("reason" in refusal) || refusal.reason !== "issuer") throw new Error();
 * ```
 */
export function refusalOf(err: unknown): LoginError | UnavailableError {
  if (err instanceof LoginError || err instanceof UnavailableError) return err;
  if (err instanceof oauth.AuthorizationResponseError) {
    const what = err.error_description ? `${err.error}: ${err.error_description}` : err.error;
    return new LoginError("provider", `The identity provider did not sign you in (${what})`, {
      cause: err,
    });
  }
  if (err instanceof oauth.ResponseBodyError) {
    if (err.error === "invalid_grant") {
      return new LoginError(
        "code",
        "The identity provider refused this sign-in response (used already, or expired); start again",
        { cause: err },
      );
    }
    return new LoginError(
      "provider",
      `The identity provider refused to finish the sign-in (${err.error})`,
      { cause: err },
    );
  }
  if (err instanceof oauth.OperationProcessingError) {
    const claim = claimOf(err);
    if (err.code === oauth.JWT_CLAIM_COMPARISON) {
      if (claim === "iss") {
        return new LoginError(
          "issuer",
          "The sign-in token was issued by another identity provider than this tenant's",
          { cause: err },
        );
      }
      if (claim === "aud" || claim === "azp") {
        return new LoginError("audience", "The sign-in token was issued for another application", {
          cause: err,
        });
      }
      if (claim === "nonce") {
        return new LoginError(
          "nonce",
          "The sign-in token does not belong to the sign-in this browser started",
          { cause: err },
        );
      }
    }
    if (err.code === oauth.JWT_TIMESTAMP_CHECK) {
      return new LoginError(
        "expired",
        "The sign-in token has expired (or is not valid yet); start again, and check the clocks",
        { cause: err },
      );
    }
    if (err.code === oauth.INVALID_RESPONSE && err.message.includes('"iss"')) {
      return new LoginError(
        "issuer",
        "The sign-in response came from another identity provider than this tenant's",
        { cause: err },
      );
    }
    if (err.code === oauth.INVALID_RESPONSE && err.message.includes('"state"')) {
      return new LoginError("state", "The sign-in response does not match a sign-in in progress", {
        cause: err,
      });
    }
  }
  const network = err instanceof TypeError && !("code" in err); // fetch failed (not a usage error)
  if (network || (err instanceof DOMException && err.name === "TimeoutError")) {
    return new UnavailableError("login_unavailable", "The identity provider does not answer", {
      cause: err,
    });
  }
  return new LoginError("id_token", "The identity provider's answer could not be accepted", {
    cause: err,
  });
}
