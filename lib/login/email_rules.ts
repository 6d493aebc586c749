/**
 * The two rules every sign-in method applies to the email an identity
 * provider vouches for: it is a plain ASCII address (a Unicode look-alike
 * such as `\u212Aate@…` for `kate@…` must never pass for someone else, in
 * lists or in mail), and it is in the tenant's admitted domains when the
 * policy lists them. Refusals are 403 `LoginError`s (`email_missing`,
 * `email_domain`).
 *
 * @module
 */
import { LoginError } from "../errors.ts";
import { emailInDomains, isPlainEmail } from "../protocol/login_policy.ts";

/**
 * Refuses an address that is not plain ASCII (`email_missing`).
 *
 * @param email the address the provider sent
 * @returns nothing
 *
 * @example
 * ```ts
 * import { assertPlainEmail } from "./email_rules.ts";
 * assertPlainEmail("kate@acme.com");
 * let reason = "";
 * try { assertPlainEmail("\u212Aate@acme.com"); } catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "email_missing") throw new Error(reason);
 * ```
 */
export function assertPlainEmail(email: string): void {
  if (isPlainEmail(email)) return;
  throw new LoginError(
    "email_missing",
    "The identity provider sent an email address cfgtool cannot use (only plain ASCII " +
      "addresses are accepted), so cfgtool cannot sign you in",
  );
}

/**
 * Refuses an address outside the tenant's admitted domains
 * (`email_domain`, naming them); an absent list admits every address.
 *
 * @param tenant the tenant signing in
 * @param email the address
 * @param domains the policy's admitted domains, if any
 * @returns nothing
 *
 * @example
 * ```ts
 * import { assertAdmittedDomain } from "./email_rules.ts";
 * assertAdmittedDomain("acme", "ana@acme.com", ["acme.com"]);
 * let reason = "";
 * try { assertAdmittedDomain("acme", "eve@evil.com", ["acme.com"]); }
 * catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "email_domain") throw new Error(reason);
 * ```
 */
export function assertAdmittedDomain(
  tenant: string,
  email: string,
  domains: readonly string[] | undefined,
): void {
  if (emailInDomains(email, domains)) return;
  throw new LoginError(
    "email_domain",
    `Tenant ${tenant} does not admit ${email}: sign in with an address in ${
      (domains ?? []).join(", ")
    }`,
  );
}
