/**
 * What the server knows of an OpenID issuer: its discovery document (read
 * from `<issuer>/.well-known/openid-configuration` with `oauth4webapi`,
 * which checks that it names the same issuer) and its signing keys (the
 * JWKS, fetched on first use and again when a token names an unknown key),
 * both kept in memory for a few minutes per process. Also the request
 * options every call to the issuer uses: a time limit, and plain HTTP only
 * for a loopback issuer (the policy parser admits no other `http://` one).
 * An issuer that does not answer, or answers with something that is not
 * valid metadata, is 503 `login_unavailable`.
 *
 * @module
 */
import * as oauth from "oauth4webapi";
import { UnavailableError } from "../errors.ts";

/** How long a discovery document is reused, ms. */
export const METADATA_TTL_MS = 5 * 60_000;
/** Time limit of one request to the issuer, ms. */
export const ISSUER_TIMEOUT_MS = 10_000;

const metadata = new Map<string, { as: oauth.AuthorizationServer; until: number }>();
const jwks = new Map<string, oauth.JWKSCacheInput>();

/** Options of every request to an issuer (with its JWKS cache). */
export interface IssuerRequestOptions {
  /** A fresh time limit for each request. */
  signal: () => AbortSignal;
  /** The issuer's JWKS cache. */
  [oauth.jwksCache]: oauth.JWKSCacheInput;
  /** Plain HTTP, for a loopback issuer. */
  [oauth.allowInsecureRequests]?: boolean;
}

/**
 * The request options for `issuer`: a fresh time limit per request, plain
 * HTTP allowed for an `http://` (loopback) issuer, and the issuer's JWKS
 * cache.
 *
 * @param issuer the issuer URL
 * @returns options for oauth4webapi calls
 *
 * @example
 * ```ts
 * import * as oauth from "oauth4webapi";
 * import { issuerRequestOptions } from "./oidc_metadata.ts";
 * if (issuerRequestOptions("http://127.0.0.1:9")[oauth.allowInsecureRequests] !== true) throw new Error();
 * if (issuerRequestOptions("https://idp.example.com")[oauth.allowInsecureRequests]) throw new Error();
 * ```
 */
export function issuerRequestOptions(issuer: string): IssuerRequestOptions {
  let cache = jwks.get(issuer);
  if (cache === undefined) {
    cache = {};
    jwks.set(issuer, cache);
  }
  return {
    signal: () => AbortSignal.timeout(ISSUER_TIMEOUT_MS),
    [oauth.jwksCache]: cache,
    ...(new URL(issuer).protocol === "http:" ? { [oauth.allowInsecureRequests]: true } : {}),
  };
}

/**
 * The discovery document of `issuer` (cached for {@linkcode METADATA_TTL_MS}).
 * 503 `login_unavailable` when the issuer does not answer in time or its
 * answer is not metadata for that issuer.
 *
 * @param issuer the issuer URL of the tenant's policy
 * @returns the authorization server metadata
 *
 * @example
 * ```ts
 * import { discoverIssuer } from "./oidc_metadata.ts";
 * await using server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () =>
 *   Response.json({ issuer: "http://127.0.0.1:1" })); // names another issuer
 * let code = "";
 * try { await discoverIssuer(`http://127.0.0.1:${server.addr.port}`); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "login_unavailable") throw new Error(code);
 * ```
 */
export async function discoverIssuer(issuer: string): Promise<oauth.AuthorizationServer> {
  const cached = metadata.get(issuer);
  if (cached !== undefined && cached.until > Date.now()) return cached.as;
  const url = new URL(issuer);
  let as: oauth.AuthorizationServer;
  try {
    const response = await oauth.discoveryRequest(url, issuerRequestOptions(issuer));
    as = await oauth.processDiscoveryResponse(url, response);
  } catch (err) {
    throw new UnavailableError(
      "login_unavailable",
      `The identity provider ${issuer} did not answer with its OpenID configuration`,
      { cause: err },
    );
  }
  if (as.authorization_endpoint === undefined || as.token_endpoint === undefined) {
    throw new UnavailableError(
      "login_unavailable",
      `The identity provider ${issuer} names no authorization or token endpoint`,
    );
  }
  metadata.set(issuer, { as, until: Date.now() + METADATA_TTL_MS });
  return as;
}

/**
 * How the server authenticates at the issuer's token endpoint with the
 * client secret: HTTP Basic unless the issuer lists only `client_secret_post`.
 *
 * @param as the issuer metadata
 * @param secret the client secret
 * @returns the oauth4webapi client authentication
 *
 * @example
 * ```ts
 * import { clientAuthentication } from "./oidc_metadata.ts";
 * const auth = clientAuthentication({ issuer: "https://i", token_endpoint_auth_methods_supported: ["client_secret_post"] }, "s");
 * if (typeof auth !== "function") throw new Error();
 * ```
 */
export function clientAuthentication(
  as: oauth.AuthorizationServer,
  secret: string,
): oauth.ClientAuth {
  const methods = as.token_endpoint_auth_methods_supported;
  if (
    methods !== undefined && !methods.includes("client_secret_basic") &&
    methods.includes("client_secret_post")
  ) {
    return oauth.ClientSecretPost(secret);
  }
  return oauth.ClientSecretBasic(secret);
}
