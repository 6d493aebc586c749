/**
 * Test program: runs npm `oidc-provider` (a certified OpenID provider) on a free
 * loopback port, configured from the JSON in the `OIDC_PROVIDER_CONFIG`
 * environment variable (see {@linkcode OidcProviderConfig} in
 * tests/e2e/oidc_provider.ts). Started as a separate process by
 * `startOidcProvider`; not a test itself.
 *
 * What it adds to the stock provider, all of it outside the protocol code:
 * - accounts from the config, signing in with their email or `sub` and their
 *   password (the development login form of `oidc-provider` accepts any login;
 *   a small guard in front of it checks the password first and passes the
 *   account's `sub` on);
 * - PKCE required for every client, `groups` (or `groupsClaim`) and the email
 *   claims put in the ID token;
 * - an optional clock offset: the whole process's `Date` is shifted, so the
 *   tokens it issues carry shifted `iat`/`exp`. Cookie expiry attributes are
 *   dropped in that mode (a browser with a correct clock would otherwise throw
 *   the provider's own session cookies away at once);
 * - an optional private JWKS, so two providers can sign with one key.
 *
 * When ready it prints `listening on <url>` and then the issuer URL, one per
 * line, on stdout. Nothing runs on import (only as the main module), so the
 * test runner's document pass can read this file safely.
 *
 * @module
 */
import http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One account (mirrors `OidcUser` in oidc_provider.ts). */
interface User {
  sub: string;
  email: string;
  email_verified?: boolean;
  groups?: string[];
  password: string;
}

/** The configuration read from `OIDC_PROVIDER_CONFIG`. */
interface Config {
  clients: { client_id: string; client_secret: string; redirect_uris: string[] }[];
  users: User[];
  clockOffsetMs?: number;
  jwks?: { keys: JsonWebKey[] };
  issuer?: string;
  groupsClaim?: string;
  idTokenTtlSeconds?: number;
}

/** Replaces the global `Date` by one running `offsetMs` ahead (or behind). */
function shiftClock(offsetMs: number) {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args: unknown[]) {
      super(...((args.length === 0 ? [RealDate.now() + offsetMs] : args) as [string]));
    }
    static override now() {
      return RealDate.now() + offsetMs;
    }
  }
  globalThis.Date = ShiftedDate as DateConstructor;
}

/** A fresh RS256 private JWKS (so the provider does not fall back to its dev keys). */
async function generateJwks(): Promise<{ keys: JsonWebKey[] }> {
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
  return { keys: [{ ...jwk, alg: "RS256", use: "sig", kid: crypto.randomUUID() } as JsonWebKey] };
}

/** The `oidc-provider` configuration for `config`. */
function providerConfiguration(config: Config, jwks: { keys: JsonWebKey[] }) {
  const groupsClaim = config.groupsClaim ?? "groups";
  return {
    clients: config.clients.map((c) => ({
      client_id: c.client_id,
      client_secret: c.client_secret,
      redirect_uris: c.redirect_uris,
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    jwks,
    cookies: { keys: [crypto.randomUUID()] },
    pkce: { required: () => true },
    conformIdTokenClaims: false,
    claims: {
      openid: ["sub", groupsClaim],
      email: ["email", "email_verified"],
      groups: [groupsClaim],
    },
    ttl: { IdToken: config.idTokenTtlSeconds ?? 3600 },
    features: { devInteractions: { enabled: true } },
    findAccount(_ctx: unknown, sub: string) {
      const user = config.users.find((u) => u.sub === sub);
      if (!user) return undefined;
      return {
        accountId: user.sub,
        claims: () => ({
          sub: user.sub,
          email: user.email,
          email_verified: user.email_verified ?? true,
          [groupsClaim]: user.groups ?? [],
        }),
      };
    },
  };
}

/**
 * Reads a posted interaction form. A `login` form is checked against the
 * accounts (by email or `sub`): a wrong login or password is answered here
 * (401, the provider never sees it); a right one goes on with `login` set to
 * the account's `sub`. The body is handed on pre-read (`req.body`), which
 * `oidc-provider` accepts.
 */
async function checkLoginForm(
  users: User[],
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(chunk as Uint8Array);
  const form = new URLSearchParams(new TextDecoder().decode(concat(chunks)));
  if (form.get("prompt") === "login") {
    const login = form.get("login") ?? "";
    const user = users.find((u) => u.email === login || u.sub === login);
    if (!user || user.password !== form.get("password")) {
      res.statusCode = 401;
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(
        `<!DOCTYPE html><html><body><h1>Invalid login or password</h1>` +
          `<p><a href="${req.url}">Try again</a></p></body></html>`,
      );
      return false;
    }
    form.set("login", user.sub);
    form.delete("password");
  }
  (req as IncomingMessage & { body?: string }).body = form.toString();
  return true;
}

/** Joins byte chunks. */
function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Drops `expires`/`max-age` from the cookies `res` sets (see the module comment). */
function keepCookiesForTheSession(res: ServerResponse) {
  const setHeader = res.setHeader.bind(res);
  const strip = (c: string) =>
    c.split(";").filter((part) => !/^\s*(expires|max-age)=/i.test(part)).join(";");
  res.setHeader = (name: string, value: number | string | readonly string[]) => {
    if (name.toLowerCase() === "set-cookie") {
      value = Array.isArray(value) ? value.map(strip) : strip(String(value));
    }
    return setHeader(name, value);
  };
}

/** Starts the provider from `OIDC_PROVIDER_CONFIG` and serves until SIGTERM. */
async function main() {
  const config: Config = JSON.parse(Deno.env.get("OIDC_PROVIDER_CONFIG") ?? "{}");
  const clockOffsetMs = config.clockOffsetMs ?? 0;
  if (clockOffsetMs !== 0) shiftClock(clockOffsetMs);
  // Imported after the clock shift so nothing in it can hold the real clock.
  const { default: Provider } = await import("npm:oidc-provider@^9.13.3");

  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = config.issuer ?? url;
  const jwks = config.jwks ?? await generateJwks();
  const provider = new Provider(issuer, providerConfiguration(config, jwks));
  // Behind a test proxy, endpoint URLs follow X-Forwarded-Host/-Proto (Koa's `proxy`).
  provider.proxy = true;
  provider.on("server_error", (_ctx: unknown, err: Error) => {
    console.error("oidc-provider server_error:", err);
  });
  const handle = provider.callback();

  server.on("request", async (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (clockOffsetMs !== 0) keepCookiesForTheSession(res);
      if (req.method === "POST" && /^\/interaction\/[^/]+$/.test(req.url ?? "")) {
        if (!await checkLoginForm(config.users, req, res)) return;
      }
      handle(req, res);
    } catch (e) {
      console.error("oidc_provider_main:", e);
      if (!res.headersSent) res.statusCode = 500;
      res.end();
    }
  });

  console.log(`listening on ${url}`);
  console.log(issuer);

  const stop = () => {
    server.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

if (import.meta.main) await main();
