/**
 * SAML 2.0 sign-in in the browser (the protocol is
 * lib/login/saml_flow.ts):
 *
 * | route | what |
 * |---|---|
 * | `GET /auth/saml/metadata?tenant=T` | the tenant's service-provider metadata, for the identity provider's administrator |
 * | `POST /auth/saml/acs` | the assertion consumer service: the identity provider posts `SAMLResponse` and `RelayState` here |
 * | `GET /auth/saml/finish?handle=…` | where an accepted response sends the browser: the sign-in ends here, in the browser that started it |
 *
 * {@linkcode beginSaml} starts a sign-in from `GET /auth/login?tenant=T`.
 * A refused step is audited (`login.failed`, with its reason), logged for
 * the operator, and shown as a page.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import {
  acceptSamlResponse,
  finishSamlFlow,
  SAML_FLOW_TTL_MS,
  samlEndpoints,
  type SamlFacts,
  samlTenantOfState,
  startSamlFlow,
} from "../../login/saml_flow.ts";
import { samlSigningPair } from "../../login/saml_sp_key.ts";
import { InvalidRequestError, LoginError } from "../../errors.ts";
import type { SamlLoginPolicy } from "../../protocol/login_policy.ts";
import { authDeps } from "../authn.ts";
import { readForm, tooLarge } from "../body.ts";
import type { AppDeps, AppEnv } from "../deps.ts";
import { SHAPES } from "../params.ts";
import { finishBrowserSignIn, refuseSignIn } from "./browser_session.ts";
import { flowCookie } from "./flow_cookie.ts";
import { signInOrigin } from "./session_cookie.ts";
import { spMetadataXml } from "../../login/saml_sp_metadata.ts";

/** The assertion consumer service path. */
export const SAML_ACS_PATH = "/auth/saml/acs";
/** Largest post to the assertion consumer service (a response with many attributes). */
export const SAML_POST_LIMIT = 384 * 1024;

/** Logs a refusal for the operator, with what the check found (the person's page says less). */
function logRefusal(deps: AppDeps, requestId: string, err: LoginError): void {
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  deps.log("info", "saml sign-in refused", {
    request_id: requestId,
    reason: err.reason,
    ...(cause === undefined ? {} : { detail: cause }),
  });
}

/** Answers a refused step: logged, audited, shown. */
async function refuse(
  c: Context<AppEnv>,
  deps: AppDeps,
  err: unknown,
  facts: SamlFacts,
): Promise<Response> {
  if (err instanceof LoginError) logRefusal(deps, c.get("requestId"), err);
  return await refuseSignIn(c, deps, err, facts);
}

/**
 * Starts a SAML sign-in for a tenant: answers with the redirect (303) to
 * the identity provider's single sign-on URL, carrying the signed request,
 * and sets the flow cookie. Metadata that cannot be read is a 503 page.
 *
 * @param c the hono context
 * @param deps the app dependencies
 * @param tenant the tenant
 * @param policy its SAML policy
 * @param next where to go once signed in (a same-origin path)
 * @returns the redirect
 *
 * @example
 * ```ts ignore
 * const res = await beginSaml(c, deps, "acme", policy, "/auth/signed-in");
 * assertEquals(res.status, 303);
 * ```
 */
export async function beginSaml(
  c: Context<AppEnv>,
  deps: AppDeps,
  tenant: string,
  policy: SamlLoginPolicy,
  next: string,
): Promise<Response> {
  try {
    const { url, state } = await startSamlFlow(authDeps(deps), tenant, policy, {
      origin: signInOrigin(c.req.raw, deps.publicUrl),
      next,
    });
    flowCookie("saml", deps.publicUrl).set(c, state, SAML_FLOW_TTL_MS);
    c.header("cache-control", "no-store");
    c.header("referrer-policy", "no-referrer");
    return c.redirect(url.href, 303);
  } catch (err) {
    return await refuse(c, deps, err, { tenant, method: "saml" });
  }
}

/**
 * The routes under `/auth/saml`: the SP metadata, the assertion consumer
 * service and the finishing redirect.
 *
 * @param deps the app dependencies
 * @returns the router
 *
 * @example
 * ```ts ignore
 * app.route("/auth/saml", samlRoutes(deps));
 * ```
 */
export function samlRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/metadata", async (c) => {
    const tenant = c.req.query("tenant")?.trim().toLowerCase() ?? "";
    if (!SHAPES.slug.pattern.test(tenant)) {
      throw new InvalidRequestError("tenant must name a tenant, as in ?tenant=acme", {
        details: { field: "tenant" },
      });
    }
    // Served for any well-formed name (the document holds no secret, and a
    // 404 for unknown tenants would let anyone list them): an identity
    // provider's administrator needs it before the tenant's policy exists.
    const origin = signInOrigin(c.req.raw, deps.publicUrl);
    const pair = await samlSigningPair(authDeps(deps));
    return c.body(spMetadataXml(samlEndpoints(origin, tenant), pair.certificate), 200, {
      "content-type": "application/samlmetadata+xml; charset=utf-8",
      "content-disposition": `inline; filename="cfgtool-${tenant}-sp-metadata.xml"`,
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    });
  });

  app.post(
    "/acs",
    bodyLimit({
      maxSize: SAML_POST_LIMIT,
      onError: () => {
        throw tooLarge(SAML_POST_LIMIT);
      },
    }),
    async (c) => {
      const facts: SamlFacts = { method: "saml" };
      try {
        const form = await readForm(c.req.raw);
        const checked = { ...authDeps(deps), samlChecker: deps.runtime.samlChecker };
        const { handle } = await acceptSamlResponse(checked, {
          SAMLResponse: form.get("SAMLResponse") ?? null,
          RelayState: form.get("RelayState") ?? null,
        }, facts);
        c.header("cache-control", "no-store");
        c.header("referrer-policy", "no-referrer");
        return c.redirect(`/auth/saml/finish?handle=${encodeURIComponent(handle)}`, 303);
      } catch (err) {
        if (err instanceof InvalidRequestError) {
          return await refuse(
            c,
            deps,
            new LoginError("assertion", "The sign-in post is not a SAML response; start again", {
              status: 400,
            }),
            facts,
          );
        }
        return await refuse(c, deps, err, facts);
      }
    },
  );

  app.get("/finish", async (c) => {
    const cookie = flowCookie("saml", deps.publicUrl);
    const bound = cookie.read(c);
    const facts: SamlFacts = { method: "saml" };
    let res: Response;
    try {
      const { identity, next } = await finishSamlFlow(
        authDeps(deps),
        c.req.query("handle"),
        bound,
        facts,
      );
      res = await finishBrowserSignIn(c, deps, identity, next);
    } catch (err) {
      facts.tenant ??= await samlTenantOfState(authDeps(deps), bound);
      res = await refuse(c, deps, err, facts);
    }
    return bound === undefined ? res : cookie.clear(c, res);
  });

  return app;
}
