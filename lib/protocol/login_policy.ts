/**
 * A tenant's login policy, as `PUT /api/v1/tenants/{t}/login` takes it and
 * `GET` returns it: how the tenant's people sign in. One record per tenant,
 * tagged by `method`: `oidc` (OpenID Connect), `email` (a one-time link or
 * code sent to an address in the tenant's domains) or `saml` (SAML 2.0 web
 * sign-in through one identity provider, described by its metadata).
 * Secrets are never part of a policy: `client_secret_ref` names where the
 * server reads the OIDC client secret (`env:NAME` or `file:/path`).
 *
 * @module
 */
import { asciiLower, asciiTrim, isPrintableAscii } from "../ascii.ts";

/** OpenID Connect sign-in through one issuer. */
export interface OidcLoginPolicy {
  /** The method tag. */
  method: "oidc";
  /** Issuer URL; discovery reads `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  /** The client id registered at the issuer. */
  client_id: string;
  /** Where the client secret is read: `env:NAME` or `file:/absolute/path`. */
  client_secret_ref: string;
  /** Admitted email domains (lower case); absent: every verified email. */
  allowed_email_domains?: string[];
  /** ID-token claim that lists the user's groups (default `groups`). */
  groups_claim?: string;
  /** Members of any of these groups are tenant admins while signed in. */
  admin_groups?: string[];
}

/** Verified-email sign-in for addresses in some domains. */
export interface EmailLoginPolicy {
  /** The method tag. */
  method: "email";
  /** Admitted email domains (lower case), at least one. */
  domains: string[];
}

/**
 * SAML 2.0 web sign-in through one identity provider: exactly one of
 * `idp_metadata_xml` and `idp_metadata_url` says who it is (entity id,
 * single sign-on URL, signing certificates).
 */
export interface SamlLoginPolicy {
  /** The method tag. */
  method: "saml";
  /** The identity provider's metadata document. */
  idp_metadata_xml?: string;
  /** …or where to fetch it (`https://`, or `http://` on a loopback host). */
  idp_metadata_url?: string;
  /** Admitted email domains (lower case); absent: every email. */
  allowed_email_domains?: string[];
  /** Attribute holding the email; absent: the assertion's NameID. */
  email_attribute?: string;
  /** Attribute that lists the user's groups (default `groups`). */
  groups_attribute?: string;
  /** Members of any of these groups are tenant admins while signed in. */
  admin_groups?: string[];
}

/** Any login policy. */
export type LoginPolicy = OidcLoginPolicy | EmailLoginPolicy | SamlLoginPolicy;

/** The sign-in methods a policy can name. */
export type LoginMethod = LoginPolicy["method"];

/** A stored policy as the API returns it: the policy and who set it when. */
export interface LoginPolicyRecord {
  /** The tenant. */
  tenant_slug: string;
  /** How its people sign in. */
  policy: LoginPolicy;
  /** When the policy was last set (RFC 3339). */
  updated_at: string;
  /** The token or user id that set it. */
  updated_by: string;
}

/**
 * The domain of an email address with its ASCII letters lower-cased (the
 * part after the last `@`), or null when the text has no `@` with something
 * on both sides. Only ASCII is folded: `\u212Aacme.com` is not `kacme.com`.
 *
 * @param email the address
 * @returns its domain, or null
 *
 * @example
 * ```ts
 * import { emailDomain } from "./login_policy.ts";
 * if (emailDomain("Ana@Acme.COM") !== "acme.com") throw new Error();
 * if (emailDomain("nobody") !== null) throw new Error();
 * if (emailDomain("eve@\u212Aacme.com") === "kacme.com") throw new Error("a look-alike domain");
 * ```
 */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf("@");
  if (at <= 0 || at === email.length - 1) return null;
  return asciiLower(email.slice(at + 1));
}

/**
 * Whether a text is a plain email address: printable ASCII without spaces,
 * exactly one `@`, text on both sides. cfgtool signs people in only with
 * such addresses, so that two spellings of one address (Unicode look-alikes
 * such as the Kelvin sign for `k`) can never name two people or one.
 *
 * @param email the address, trimmed
 * @returns whether it is a plain address
 *
 * @example
 * ```ts
 * import { isPlainEmail } from "./login_policy.ts";
 * if (!isPlainEmail("kate@acme.test")) throw new Error();
 * if (isPlainEmail("\u212Aate@acme.test") || isPlainEmail("a@b@c") || isPlainEmail("@acme.test")) {
 *   throw new Error();
 * }
 * ```
 */
export function isPlainEmail(email: string): boolean {
  const at = email.indexOf("@");
  return at > 0 && at < email.length - 1 && email.indexOf("@", at + 1) === -1 &&
    isPrintableAscii(email);
}

/**
 * Whether an email belongs to one of the domains (exact domain match, case
 * folded: `acme.com` admits `ana@acme.com`, not `ana@evil-acme.com` nor
 * `ana@sub.acme.com`). An absent list admits every address.
 *
 * @param email the address
 * @param domains the admitted domains, or undefined for all
 * @returns whether the address is admitted
 *
 * @example
 * ```ts
 * import { emailInDomains } from "./login_policy.ts";
 * if (!emailInDomains("ana@ACME.com", ["acme.com"])) throw new Error();
 * if (emailInDomains("ana@evilacme.com", ["acme.com"])) throw new Error();
 * if (!emailInDomains("x@y.z", undefined)) throw new Error();
 * ```
 */
export function emailInDomains(email: string, domains: readonly string[] | undefined): boolean {
  if (domains === undefined) return true;
  const domain = emailDomain(email);
  return domain !== null && domains.includes(domain);
}

/**
 * An email as users are keyed by it: ASCII whitespace around it removed and
 * ASCII letters lower-cased. Only ASCII: full Unicode case mapping would
 * make distinct addresses one user (the Kelvin sign `\u212A` lower-cases to
 * `k`), and Unicode trimming would drop characters an identity provider
 * kept.
 *
 * @param email the address as given
 * @returns the key form
 *
 * @example
 * ```ts
 * import { normalEmail } from "./login_policy.ts";
 * if (normalEmail(" Ana@ACME.com\n") !== "ana@acme.com") throw new Error();
 * if (normalEmail("\u212Aate@acme.com") === "kate@acme.com") throw new Error("not one user");
 * ```
 */
export function normalEmail(email: string): string {
  return asciiLower(asciiTrim(email));
}
