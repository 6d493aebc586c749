/**
 * Test helper: starts a real OpenID provider (npm `oidc-provider`, run by
 * tests/e2e/oidc_provider_main.ts in its own Deno process) on a free loopback
 * port, with the clients and accounts a test names, and stops it.
 *
 * @module
 */

import { spawnUntilReady } from "./server_process.ts";

const MAIN = new URL("./oidc_provider_main.ts", import.meta.url).pathname;

/** A registered client of the provider. */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

/** An account of the provider. It signs in with its `email` (or `sub`) and `password`. */
export interface OidcUser {
  sub: string;
  email: string;
  /** Default `true`. */
  email_verified?: boolean;
  /** Put in the ID token as `groupsClaim` (default `groups`); default `[]`. */
  groups?: string[];
  password: string;
}

/** One private signing key (a JWK with its key id). */
export type SigningJwk = JsonWebKey & { kid: string; alg?: string; use?: string };

/** A private JSON Web Key Set, as `oidc-provider` takes it. */
export interface SigningJwks {
  keys: SigningJwk[];
}

/** Options of {@linkcode startOidcProvider}. */
export interface OidcProviderOptions {
  clients: OidcClient[];
  users: OidcUser[];
  /**
   * Shifts the provider process's clock by this many milliseconds. A negative
   * value below `-idTokenTtlSeconds * 1000` makes every ID token it issues
   * already expired.
   */
  clockOffsetMs?: number;
  /** Signing keys (default: a fresh RS256 key). Pass the same set to two providers to share a key. */
  jwks?: SigningJwks;
  /**
   * The issuer identifier (default the provider's own URL). Endpoint URLs are
   * built from each request's Host, so a proxy that keeps Host can front it.
   */
  issuer?: string;
  /** Name of the ID token claim holding the groups (default `groups`). */
  groupsClaim?: string;
  /** ID token lifetime (default 3600 s). */
  idTokenTtlSeconds?: number;
}

/** A running provider. `await using` stops it at the end of the scope. */
export interface OidcProviderProcess extends AsyncDisposable {
  /** The issuer identifier (discovery is at `${issuer}/.well-known/openid-configuration`). */
  issuer: string;
  /** Where it listens, `http://127.0.0.1:<port>` (equal to `issuer` unless overridden). */
  url: string;
  /** The signing keys it uses (private; pass to another provider to share them). */
  jwks: SigningJwks;
  /** Everything the process wrote to stderr so far. */
  logs(): string;
  /** Sends SIGTERM and waits for exit; returns the exit code. */
  stop(): Promise<number>;
}

/**
 * Makes a fresh RS256 private JWKS with one key (with `kid`, `alg` and
 * `use`), for {@linkcode OidcProviderOptions.jwks}: two providers given the
 * same set sign with the same key.
 *
 * @example
 * ```ts
 * import { generateSigningJwks } from "./oidc_provider.ts";
 * import { assertEquals } from "../assert.ts";
 * const jwks = await generateSigningJwks();
 * assertEquals(jwks.keys.length, 1);
 * assertEquals(jwks.keys[0]!.alg, "RS256");
 * assertEquals(typeof jwks.keys[0]!.d, "string"); // private
 * assertEquals(jwks.keys[0]!.key_ops, undefined); // "sign" only would hide it from verifiers
 * ```
 */
export async function generateSigningJwks(): Promise<SigningJwks> {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const { key_ops: _ops, ext: _ext, ...jwk } = await crypto.subtle.exportKey(
    "jwk",
    pair.privateKey,
  );
  return { keys: [{ ...jwk, alg: "RS256", use: "sig", kid: crypto.randomUUID() }] };
}

/**
 * Starts `oidc_provider_main.ts` under Deno with `options` and resolves once
 * it prints its issuer. The first start downloads `oidc-provider` into Deno's
 * npm cache, so it may take a while on a clean machine (up to 120 s allowed).
 *
 * @example
 * ```ts ignore
 * await using op = await startOidcProvider({
 *   clients: [{ client_id: "app", client_secret: "s3cret", redirect_uris: ["http://127.0.0.1:1/cb"] }],
 *   users: [{ sub: "u1", email: "ada@acme.com", password: "pw" }],
 * });
 * const res = await fetch(`${op.issuer}/.well-known/openid-configuration`);
 * assertEquals((await res.json()).issuer, op.issuer);
 * ```
 */
export async function startOidcProvider(
  options: OidcProviderOptions,
): Promise<OidcProviderProcess> {
  const jwks = options.jwks ?? await generateSigningJwks();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", OIDC_PROVIDER_CONFIG: JSON.stringify({ ...options, jwks }) },
  }).spawn();
  // The first start downloads `oidc-provider` into Deno's npm cache: up to 120 s.
  const p = await spawnUntilReady(child, {
    what: "oidc provider",
    timeoutMs: 120_000,
    ready: (out) => {
      const m = out.match(/^listening on (\S+)\n(\S+)\n/);
      return m ? { url: m[1]!, issuer: m[2]! } : undefined;
    },
  });
  return {
    issuer: p.ready.issuer,
    url: p.ready.url,
    jwks,
    logs: p.logs,
    stop: p.stop,
    async [Symbol.asyncDispose]() {
      await p.stop();
    },
  };
}
