/**
 * The HTTP calls of signing in from the command line, and of asking who a
 * credential is: the authorize URL of the loopback flow (with its PKCE pair
 * and `state`), `POST /auth/cli/token` (a code, or a device-code poll),
 * `POST /auth/cli/device`, `POST /auth/logout` with a bearer session, and
 * `GET /api/v1/me`. Refusals come back as {@linkcode CfgtoolError}s: a
 * refused sign-in is a {@linkcode LoginError} whose `details.error` is the
 * OAuth word (`access_denied`, `expired_token`, `invalid_grant`, …). The
 * session token is only ever put in a request body's answer or the
 * `Authorization` header, never in a message.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { CfgtoolError, LoginError, RateLimitError } from "../errors.ts";
import { describeNetworkFailure } from "../network_errors.ts";
import {
  base64url,
  type CliSessionGrant,
  CODE_GRANT,
  DEVICE_CODE_GRANT,
  type DeviceAuthorization,
  pkceChallenge,
} from "../protocol/cli_sign_in.ts";
import { parseErrorEnvelope } from "../protocol/error_envelope.ts";
import { unauthorizedError } from "./_credential.ts";
import { Transport } from "./_transport.ts";

/** Where and how the sign-in calls are sent. */
export interface SignInClientOptions {
  /** Base URL of the service (a trailing `/` is dropped). */
  server: string;
  /** Per-request timeout, ms (default 30 s). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** One answer to a device-code poll. */
export type DevicePoll =
  | { status: "granted"; grant: CliSessionGrant }
  | { status: "pending" }
  | { status: "slow_down"; interval: number };

/** Who a credential is, as `GET /api/v1/me` says (fields read tolerantly). */
export interface WhoAmI {
  principal: {
    type: "user" | "service" | "client" | string;
    user?: { id: string; email?: string };
    session?: {
      id: string;
      expires_at?: string;
      client?: string;
      login_method?: string;
      idle_timeout_ms?: number | null;
      [k: string]: unknown;
    };
    tenants?: { slug: string; role: string }[];
    token?: {
      id: string;
      name?: string;
      type?: string;
      tenant_slug?: string | null;
      namespace_slug?: string | null;
      environment_slug?: string | null;
      expires_at?: string | null;
      [k: string]: unknown;
    };
  };
}

/** A PKCE pair: the verifier the CLI keeps and its S256 challenge. */
export interface PkcePair {
  verifier: string;
  challenge: string;
}

/**
 * A new PKCE pair: 32 random bytes as a base64url verifier (43
 * characters) and its S256 challenge.
 *
 * @returns the pair
 *
 * @example
 * ```ts
 * import { createPkcePair } from "./sign_in.ts";
 * import { pkceChallenge } from "../protocol/cli_sign_in.ts";
 * const { verifier, challenge } = await createPkcePair();
 * if (verifier.length !== 43 || challenge !== await pkceChallenge(verifier)) throw new Error();
 * ```
 */
export async function createPkcePair(): Promise<PkcePair> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: await pkceChallenge(verifier) };
}

/**
 * A random `state` for the loopback flow (24 bytes, base64url).
 *
 * @returns the state
 *
 * @example
 * ```ts
 * import { randomState } from "./sign_in.ts";
 * if (randomState() === randomState() || randomState().length !== 32) throw new Error();
 * ```
 */
export function randomState(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(24)));
}

/**
 * The client of one service's sign-in endpoints.
 *
 * @example
 * ```ts
 * import { SignInClient } from "./sign_in.ts";
 * const client = new SignInClient({ server: "http://127.0.0.1:1/" });
 * let code = "";
 * try { await client.startDevice(); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "unreachable") throw new Error(code);
 * ```
 */
export class SignInClient {
  /** Base URL, without a trailing slash. */
  readonly server: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  /**
   * A client of one service; nothing is sent yet.
   *
   * @param options the server URL, timeout and fetch
   */
  constructor(options: SignInClientOptions) {
    this.server = trimTrailing(options.server, "/");
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * The page a browser opens to start the loopback flow:
   * `<server>/auth/cli/authorize?redirect_uri&state&code_challenge&code_challenge_method=S256[&tenant]`.
   *
   * @param ask the loopback URI, the state, the challenge and the tenant (if any)
   * @returns the URL
   *
   * @example
   * ```ts
   * import { SignInClient } from "./sign_in.ts";
   * const url = new SignInClient({ server: "http://127.0.0.1:8080" }).authorizeUrl({
   *   redirectUri: "http://127.0.0.1:5000/callback", state: "s", codeChallenge: "c", tenant: "acme",
   * });
   * if (url.pathname !== "/auth/cli/authorize" || url.searchParams.get("tenant") !== "acme") throw new Error();
   * ```
   */
  authorizeUrl(
    ask: { redirectUri: string; state: string; codeChallenge: string; tenant?: string | undefined },
  ): URL {
    const url = new URL(`${this.server}/auth/cli/authorize`);
    url.searchParams.set("redirect_uri", ask.redirectUri);
    url.searchParams.set("state", ask.state);
    url.searchParams.set("code_challenge", ask.codeChallenge);
    url.searchParams.set("code_challenge_method", "S256");
    if (ask.tenant !== undefined) url.searchParams.set("tenant", ask.tenant);
    return url;
  }

  /**
   * Redeems the code the loopback listener received: the CLI session.
   *
   * @param code the code
   * @param verifier the PKCE verifier of the challenge the authorize URL carried
   * @returns the session
   *
   * @example
   * ```ts ignore
   * const grant = await client.redeemCode(code, pair.verifier);
   * ```
   */
  async redeemCode(code: string, verifier: string): Promise<CliSessionGrant> {
    return await this.#post("/auth/cli/token", {
      grant_type: CODE_GRANT,
      code,
      code_verifier: verifier,
    }) as CliSessionGrant;
  }

  /**
   * Starts a device sign-in: the codes and where the person confirms.
   *
   * @param tenant the tenant to sign in to, if chosen
   * @returns the device authorization
   *
   * @example
   * ```ts ignore
   * const d = await client.startDevice("acme");
   * console.error(`open ${d.verification_uri} and enter ${d.user_code}`);
   * ```
   */
  async startDevice(tenant?: string): Promise<DeviceAuthorization> {
    return await this.#post(
      "/auth/cli/device",
      tenant === undefined ? {} : { tenant },
    ) as DeviceAuthorization;
  }

  /**
   * Polls a device code once: granted (the session), pending, or slow down
   * (with the new interval). A denied, expired or otherwise refused sign-in
   * throws its {@linkcode LoginError}.
   *
   * @param deviceCode the device code
   * @returns the answer
   *
   * @example
   * ```ts ignore
   * const poll = await client.pollDevice(d.device_code);
   * if (poll.status === "granted") save(poll.grant);
   * ```
   */
  async pollDevice(deviceCode: string): Promise<DevicePoll> {
    try {
      const grant = await this.#post("/auth/cli/token", {
        grant_type: DEVICE_CODE_GRANT,
        device_code: deviceCode,
      }) as CliSessionGrant;
      return { status: "granted", grant };
    } catch (err) {
      if (err instanceof LoginError) {
        if (err.details?.error === "authorization_pending") return { status: "pending" };
        if (err.details?.error === "slow_down") {
          const interval = Number(err.details.interval);
          return { status: "slow_down", interval: Number.isFinite(interval) ? interval : 0 };
        }
      }
      throw err;
    }
  }

  /**
   * Ends a bearer session on the service (`POST /auth/logout`).
   *
   * @param token the `ses_…` session token
   * @returns the ended session's id
   *
   * @example
   * ```ts ignore
   * await client.endSession(profile.session_token);
   * ```
   */
  async endSession(token: string): Promise<{ id: string }> {
    const body = await this.#post("/auth/logout", undefined, token) as {
      session?: { id?: string };
    };
    return { id: String(body.session?.id ?? "") };
  }

  /**
   * Who a credential is (`GET /api/v1/me`).
   *
   * @param token the bearer credential
   * @returns the principal
   *
   * @example
   * ```ts ignore
   * const me = await client.whoAmI(token);
   * console.log(me.principal.user?.email);
   * ```
   */
  async whoAmI(token: string): Promise<WhoAmI> {
    const http = new Transport({
      server: this.server,
      token,
      timeoutMs: this.#timeoutMs,
      fetch: this.#fetch,
    });
    return await http.json("GET", "/me") as WhoAmI;
  }

  /** POSTs JSON to a path outside `/api/v1` and reads the JSON answer. */
  async #post(path: string, body: unknown, token?: string): Promise<unknown> {
    const headers = new Headers({ accept: "application/json" });
    if (body !== undefined) headers.set("content-type", "application/json");
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`);
    let res: Response;
    try {
      res = await this.#fetch(`${this.server}${path}`, {
        method: "POST",
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        redirect: "manual",
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (err) {
      if (err instanceof DOMException && err.name === "TimeoutError") {
        throw new CfgtoolError(
          "timeout",
          `no answer from ${this.server} within ${this.#timeoutMs / 1000}s (POST ${path})`,
          { status: 504, cause: err },
        );
      }
      const failure = describeNetworkFailure(err, this.server);
      throw new CfgtoolError("unreachable", `cannot reach ${this.server}: ${failure.text}`, {
        status: 503,
        details: { server: this.server, reason: failure.kind },
        cause: err,
      });
    }
    const text = await res.text();
    if (res.ok) {
      try {
        return JSON.parse(text);
      } catch (err) {
        throw new CfgtoolError(
          "invalid_response",
          `POST ${path}: ${this.server} answered ${res.status} with a body that is not JSON`,
          { status: 502, cause: err },
        );
      }
    }
    throw this.#errorOf(res, text, path, token);
  }

  /** The error of a refused call. */
  #errorOf(res: Response, text: string, path: string, token?: string): CfgtoolError {
    const env = parseErrorEnvelope(text);
    const details = env.details ?? {};
    if (env.code === undefined || env.message === undefined) {
      const what = res.status >= 300 && res.status < 400
        ? `redirected to ${res.headers.get("location") ?? "another URL"}`
        : `answered HTTP ${res.status}`;
      return new CfgtoolError(
        res.status === 404 ? "not_found" : "http_error",
        `POST ${path}: ${this.server} ${what}; is --server the address of a cfgtool service ` +
          "that has sign-in?",
        { status: res.status },
      );
    }
    if (env.code === "login_failed" && (res.status === 400 || res.status === 403)) {
      const reason = typeof details.reason === "string" ? details.reason : "refused";
      return new LoginError(reason, env.message, { status: res.status, details });
    }
    if (res.status === 401 && token !== undefined) {
      return unauthorizedError(this.server, token, env.message, details);
    }
    if (res.status === 429) {
      const retry = Number(res.headers.get("retry-after") ?? details.retry_after ?? 60);
      return new RateLimitError(env.message, Number.isFinite(retry) ? retry : 60, { details });
    }
    return new CfgtoolError(env.code, env.message, { status: res.status, details });
  }
}
