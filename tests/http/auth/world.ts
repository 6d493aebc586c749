/**
 * Test helper: the HTTP application in-process on a `:memory:` store, for
 * the sign-in tests. It has a bootstrapped superadmin, tenants acme and
 * other, a clock the test moves, an outbox directory for sign-in mail, and
 * people who signed in (sessions made by the same `signIn` every sign-in
 * method ends with). `call` sends a request with a bearer credential, a
 * session cookie, a JSON body or a form.
 *
 * @module
 */
import { assertEquals } from "../../assert.ts";
import { createApp } from "../../../lib/server/app.ts";
import { randomTokenKey } from "../../../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../../../lib/auth/bootstrap.ts";
import { signIn } from "../../../lib/login/sign_in.ts";
import { csrfToken } from "../../../lib/http/auth/session_cookie.ts";
import { Runtime } from "../../../lib/runtime/runtime.ts";
import { DEFAULT_SETTINGS } from "../../../lib/settings.ts";
import { createTenant } from "../../../lib/store/tenants.ts";

/** Origin the in-process requests are addressed to. */
export const ORIGIN = "http://127.0.0.1:8080";

/**
 * An OIDC policy for tenants of these tests: its issuer is never reached
 * (tests that need a real provider are under tests/e2e/).
 */
export const OIDC_POLICY = {
  method: "oidc",
  issuer: "https://idp.acme.test",
  client_id: "cfgtool",
  client_secret_ref: "env:ACME_SECRET",
} as const;

/** A person with a session. */
export interface Person {
  user_id: string;
  session_id: string;
  secret: string;
  /** `cfgtool_session=<secret>` */
  cookie: string;
  csrf: string;
}

/** What a request may carry. */
export interface CallOptions {
  bearer?: string;
  cookie?: string;
  /** A JSON body (or a `URLSearchParams` form). */
  body?: unknown;
  /** The same as `body`, for JSON. */
  json?: unknown;
  /** A form body. */
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** Where the request is addressed (default {@linkcode ORIGIN}): its Host. */
  origin?: string;
}

/** How a world starts. */
export interface WorldOptions {
  /** The clock's start, epoch ms (default: now). */
  start?: number;
  /** Give the app an outbox for sign-in mail (default true). */
  mail?: boolean;
  /** Set email policies: tenant → admitted domains (default: none). */
  emailPolicies?: Record<string, string[]>;
}

/** The world. */
export interface SignInWorld {
  kv: Deno.Kv;
  key: CryptoKey;
  /** The superadmin's secret. */
  admin: string;
  /** The outbox directory (sign-in mail as `.eml` files). */
  outbox: string;
  /** Moves the app's clock forward. */
  advance(ms: number): void;
  call(method: string, path: string, options?: CallOptions): Promise<Response>;
  json(method: string, path: string, options?: CallOptions): Promise<
    { status: number; body: Record<string, unknown> & { code?: string } }
  >;
  /** A browser session made by an OIDC sign-in. */
  person(email: string, tenant: string, groups?: string[]): Promise<Person>;
  /** A browser session made by an email sign-in: its cookie and CSRF token. */
  browser(email: string, tenant: string): Promise<{ cookie: string; csrf: string }>;
  /** The names of the `.eml` files in the outbox, in order. */
  outboxFiles(): string[];
}

/**
 * Runs a test on a fresh world and closes it after.
 *
 * @param name the test name
 * @param fn the test
 * @param options the clock, mail and policies to start with
 */
export function signInTest(
  name: string,
  fn: (w: SignInWorld) => Promise<void>,
  options: WorldOptions = {},
): void {
  Deno.test(name, async () => {
    const kv = await Deno.openKv(":memory:");
    const key = await randomTokenKey();
    const outbox = await Deno.makeTempDir({ prefix: "cfgtool-outbox-test-" });
    let now = options.start ?? Date.now();
    const clock = () => new Date(now);
    const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
    try {
      const app = createApp({
        kv,
        key,
        log: () => {},
        settings: DEFAULT_SETTINGS,
        runtime,
        now: clock,
        ...(options.mail === false
          ? {}
          : { mail: { outboxDir: outbox, from: "cfgtool <x@y.test>" } }),
      });
      const boot = await bootstrapSuperadmin(kv, key);
      for (const slug of ["acme", "other"]) {
        await createTenant(kv, { slug, created_by: boot.token.id, now: clock });
      }
      const call = (method: string, path: string, o: CallOptions = {}) => {
        const headers = new Headers(o.headers);
        if (o.bearer) headers.set("authorization", `Bearer ${o.bearer}`);
        if (o.cookie) headers.set("cookie", o.cookie);
        let body: BodyInit | null = null;
        const json = o.json ?? o.body;
        if (o.form !== undefined) body = new URLSearchParams(o.form);
        else if (json instanceof URLSearchParams) body = json;
        else if (json !== undefined) {
          headers.set("content-type", "application/json");
          body = JSON.stringify(json);
        }
        return Promise.resolve(
          app.request(`${o.origin ?? ORIGIN}${path}`, { method, headers, body }),
        );
      };
      for (const [tenant, domains] of Object.entries(options.emailPolicies ?? {})) {
        const set = await call("PUT", `/api/v1/tenants/${tenant}/login`, {
          bearer: boot.secret,
          json: { method: "email", domains },
        });
        assertEquals(set.status, 200, await set.text());
      }
      const json = async (method: string, path: string, o: CallOptions = {}) => {
        const res = await call(method, path, o);
        return { status: res.status, body: await res.json() };
      };
      const session = async (
        email: string,
        tenant: string,
        method: "oidc" | "email",
        groups: string[],
      ) => {
        const made = await signIn(
          { kv, key, now: clock },
          {
            tenant,
            email,
            method,
            assurance: method === "email" ? ["email-link"] : ["pwd"],
            groups,
          },
          "browser",
          { requestId: "test" },
        );
        return {
          user_id: made.session.user_id,
          session_id: made.session.id,
          secret: made.secret,
          cookie: `cfgtool_session=${made.secret}`,
          csrf: await csrfToken(key, made.session.id),
        };
      };
      await fn({
        kv,
        key,
        admin: boot.secret,
        outbox,
        advance: (ms) => void (now += ms),
        call,
        json,
        person: (email, tenant, groups = []) => session(email, tenant, "oidc", groups),
        browser: async (email, tenant) => {
          const { cookie, csrf } = await session(email, tenant, "email", []);
          return { cookie, csrf };
        },
        outboxFiles: () =>
          [...Deno.readDirSync(outbox)].map((e) => e.name).filter((n) => n.endsWith(".eml")).sort(),
      });
    } finally {
      runtime.close();
      kv.close();
      await Deno.remove(outbox, { recursive: true });
    }
  });
}
