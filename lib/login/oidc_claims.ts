/**
 * From a checked ID token to a person the tenant admits: the email must be
 * there, a plain ASCII address, and verified by the identity provider (`email_verified` true) and,
 * when the policy lists `allowed_email_domains`, in one of them; the groups
 * come from the policy's `groups_claim` (default `groups`); the assurance
 * from `amr` and `acr`. Anything else is a refused sign-in (`LoginError`
 * with reason `email_missing`, `email_unverified` or `email_domain`).
 *
 * @module
 */
import { LoginError } from "../errors.ts";
import { assertAdmittedDomain, assertPlainEmail } from "./email_rules.ts";
import type { OidcLoginPolicy } from "../protocol/login_policy.ts";
import type { VerifiedIdentity } from "./sign_in.ts";

/**
 * The groups an ID token lists under `claim`: an array's strings, or a lone
 * string as one group; nothing else.
 *
 * @param claims the ID token claims
 * @param claim the claim name (default `groups`)
 * @returns the groups
 *
 * @example
 * ```ts
 * import { groupsOf } from "./oidc_claims.ts";
 * if (groupsOf({ groups: ["eng", 7, "ops"] }).join() !== "eng,ops") throw new Error();
 * if (groupsOf({ roles: "admin" }, "roles").join() !== "admin") throw new Error();
 * if (groupsOf({}).length !== 0) throw new Error();
 * ```
 */
export function groupsOf(claims: Record<string, unknown>, claim = "groups"): string[] {
  const value = claims[claim];
  if (typeof value === "string") return value === "" ? [] : [value];
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string");
  return [];
}

/**
 * Reads the person an ID token names, as `policy` admits them to `tenant`.
 * Throws 403 `LoginError` when the token has no email (`email_missing`),
 * the email is not verified (`email_unverified`) or not in the allowed
 * domains (`email_domain`).
 *
 * @param tenant the tenant signing in
 * @param policy its OIDC policy
 * @param claims the verified ID token claims
 * @returns the identity to sign in
 *
 * @example
 * ```ts
 * import { identityFromClaims } from "./oidc_claims.ts";
 * const policy = {
 *   method: "oidc" as const, issuer: "https://idp.example.com", client_id: "c",
 *   client_secret_ref: "env:S", allowed_email_domains: ["acme.com"],
 * };
 * const id = identityFromClaims("acme", policy, {
 *   email: "ada@acme.com", email_verified: true, groups: ["eng"], amr: ["pwd"],
 * });
 * if (id.email !== "ada@acme.com" || id.groups[0] !== "eng" || id.assurance[0] !== "pwd") throw new Error();
 * let reason = "";
 * try { identityFromClaims("acme", policy, { email: "eve@evil.com", email_verified: true }); }
 * catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "email_domain") throw new Error(reason);
 * ```
 */
export function identityFromClaims(
  tenant: string,
  policy: OidcLoginPolicy,
  claims: Record<string, unknown>,
): VerifiedIdentity {
  const email = claims.email;
  if (typeof email !== "string" || email === "") {
    throw new LoginError(
      "email_missing",
      "The identity provider did not share your email address, so cfgtool cannot sign you in",
    );
  }
  assertPlainEmail(email);
  if (!emailVerified(claims)) {
    throw new LoginError(
      "email_unverified",
      `The identity provider has not verified the email address ${email}; verify it there, then sign in again`,
    );
  }
  assertAdmittedDomain(tenant, email, policy.allowed_email_domains);
  const assurance: string[] = [];
  if (Array.isArray(claims.amr)) {
    for (const v of claims.amr) if (typeof v === "string") assurance.push(v);
  }
  if (typeof claims.acr === "string" && claims.acr !== "") assurance.push(claims.acr);
  return {
    tenant,
    email,
    method: "oidc",
    assurance,
    groups: groupsOf(claims, policy.groups_claim),
  };
}

/**
 * Whether the provider vouches for the email: `email_verified` true (or
 * the string `"true"`), or, when a provider sends no `email_verified` at
 * all, Microsoft Entra ID's optional `xms_edov` claim ("email domain owner
 * verified", added when the app registration asks for it) set to true. A
 * provider that says `email_verified: false` is never overruled.
 */
function emailVerified(claims: Record<string, unknown>): boolean {
  const verified = claims.email_verified;
  if (verified !== undefined) return verified === true || verified === "true";
  const edov = claims.xms_edov;
  return edov === true || edov === "true" || edov === 1 || edov === "1";
}
