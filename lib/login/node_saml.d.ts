/**
 * The part of `@node-saml/node-saml`'s API that lib/login/saml_flow.ts
 * uses, typed here rather than through the package's own declarations:
 * they pull in `@types/xml2js` and `@types/xml-encryption`, which depend on
 * the newest `@types/node`, whose global stream and `node:assert` types
 * replace Deno's own for the whole program and break type-checking
 * elsewhere (as with nodemailer.d.ts). The reference below makes those
 * packages' `@types/node` dependency resolve to the major version whose
 * types agree with Deno's (the lockfile keeps it).
 *
 * @module
 */
/// <reference types="npm:@types/node@^24.10.1" />

/** Where the library keeps the ids of requests it sent (cfgtool answers from its own store). */
export interface CacheProvider {
  saveAsync(key: string, value: string): Promise<unknown>;
  getAsync(key: string): Promise<string | null>;
  removeAsync(key: string | null): Promise<unknown>;
}

/** The library's settings that cfgtool sets. */
export interface SamlConfig {
  callbackUrl: string;
  entryPoint: string;
  issuer: string;
  audience: string;
  idpCert: string | string[];
  privateKey: string;
  signatureAlgorithm: "sha1" | "sha256" | "sha512";
  digestAlgorithm: "sha1" | "sha256" | "sha512";
  wantAssertionsSigned: boolean;
  wantAuthnResponseSigned: boolean;
  acceptedClockSkewMs: number;
  identifierFormat: string | null;
  disableRequestedAuthnContext: boolean;
  generateUniqueId?: () => string;
  validateInResponseTo?: "never" | "ifPresent" | "always";
  cacheProvider?: CacheProvider;
}

/** What the library read from a verified assertion. */
export interface Profile {
  issuer?: string;
  nameID?: string;
  nameIDFormat?: string;
  attributes?: Record<string, unknown>;
  /** The verified assertion's XML. */
  getAssertionXml?: () => string;
}

/** A SAML service provider. */
export declare class SAML {
  constructor(options: SamlConfig);
  /** The identity provider URL with the signed HTTP-Redirect request. */
  getAuthorizeUrlAsync(
    relayState: string,
    host: string | undefined,
    options: Record<string, unknown>,
  ): Promise<string>;
  /** Checks a response of the HTTP-POST binding. */
  validatePostResponseAsync(
    container: Record<string, string>,
  ): Promise<{ profile: Profile | null; loggedOut: boolean }>;
}
