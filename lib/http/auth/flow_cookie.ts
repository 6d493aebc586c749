/**
 * The short-lived cookie that binds a sign-in in progress to the browser
 * that started it (its `state`), for the redirect-based methods (OIDC,
 * SAML): `__Host-cfgtool_<method>` over HTTPS, `cfgtool_<method>` on plain
 * HTTP; HttpOnly, SameSite=Lax (it must come back on the top-level
 * navigation from the identity provider), path `/`.
 *
 * @module
 */
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { AppEnv } from "../deps.ts";
import { secureOrigin } from "./session_cookie.ts";

/** The flow cookie of one sign-in method. */
export interface FlowCookie {
  /** Sets it to `state` for `maxAgeMs`. */
  set(c: Context<AppEnv>, state: string, maxAgeMs: number): void;
  /** Reads it, or undefined. */
  read(c: Context<AppEnv>): string | undefined;
  /** Adds the header that clears it to `res` (a page made outside the context keeps no header set through it). */
  clear(c: Context<AppEnv>, res: Response): Response;
}

/**
 * The flow cookie of `method` for a server whose public URL is `publicUrl`.
 *
 * @param method the method's name (`oidc`, `saml`)
 * @param publicUrl the configured public origin, if any
 * @returns set, read and clear
 *
 * @example
 * ```ts ignore
 * const cookie = flowCookie("saml", deps.publicUrl);
 * cookie.set(c, state, 600_000);
 * ```
 */
export function flowCookie(method: string, publicUrl: string | undefined): FlowCookie {
  const name = (c: Context<AppEnv>) =>
    secureOrigin(c.req.raw, publicUrl) ? `__Host-cfgtool_${method}` : `cfgtool_${method}`;
  return {
    set(c, state, maxAgeMs) {
      setCookie(c, name(c), state, {
        path: "/",
        httpOnly: true,
        secure: secureOrigin(c.req.raw, publicUrl),
        sameSite: "Lax",
        maxAge: Math.floor(maxAgeMs / 1000),
      });
    },
    read(c) {
      return getCookie(c, name(c));
    },
    clear(c, res) {
      res.headers.append(
        "set-cookie",
        `${name(c)}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax${
          secureOrigin(c.req.raw, publicUrl) ? "; Secure" : ""
        }`,
      );
      return res;
    },
  };
}
