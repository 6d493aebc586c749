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
 * The domain of an email address, lower case (the part after the last `@`),
 * or null when the text has no `@` with something on both sides.
 *
 * @param email the address
 * @returns its domain, or null
 *
 * @example
 * ```ts
 * import { emailDomain } from "./login_policy.ts";
 * if (emailDomain("Ana@Acme.COM") !== "acme.com") throw new Error();
 * if (emailDomain("nobody") !== null) throw new Error();
 * ```
 */
export function emailDomain(email: string): string | null {
  const at = email.lastIndexOf("@");
  if (at <= 0 || at === email.length - 1) return null;
  return email.slice(at + 1).toLowerCase();
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
