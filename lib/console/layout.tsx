/**
 * The console's page frame (Hono JSX): skip link, a header with the tenant,
 * the sections of the tenant and the person with a sign-out button,
 * breadcrumbs, a live-status region, and the headers every console page
 * gets: a Content-Security-Policy with scripts and styles only from this
 * origin (no inline script, no inline style), no framing, no caching.
 * Light and dark colour schemes follow the system setting.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { Context } from "hono";
import { ASSETS } from "./assets.ts";
import { ui } from "./urls.ts";
import type { ConsoleEnv } from "./env.ts";
import { CsrfField } from "./widgets.tsx";

/** Headers of every console page and fragment. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; " +
    "img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; " +
    "frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/** The console's sections of a tenant, in header order. */
export type Section = "namespaces" | "tokens" | "people" | "audit" | "webhooks" | "tenants";

/** One breadcrumb: a label and, except for the last, a link. */
export interface Crumb {
  label: string;
  href?: string;
}

/**
 * The breadcrumbs of a page of a tenant: the tenant (linking to its
 * namespaces), then `more`.
 *
 * @param tenant the tenant
 * @param more the crumbs under it
 * @returns the crumbs
 *
 * @example
 * ```ts
 * import { tenantCrumbs } from "./layout.tsx";
 * const crumbs = tenantCrumbs("acme", { label: "Tokens" });
 * if (crumbs[0]!.href !== "/ui/t/acme" || crumbs[1]!.label !== "Tokens") throw new Error();
 * ```
 */
export function tenantCrumbs(tenant: string, ...more: Crumb[]): Crumb[] {
  return [{ label: tenant, href: ui.tenant(tenant) }, ...more];
}

/**
 * The breadcrumbs of a page of a namespace: its tenant, the namespace
 * (linking to its flags), then `more`.
 *
 * @param tenant the tenant
 * @param namespace the namespace
 * @param more the crumbs under it
 * @returns the crumbs
 *
 * @example
 * ```ts
 * import { namespaceCrumbs } from "./layout.tsx";
 * const crumbs = namespaceCrumbs("acme", "web", { label: "Versions" });
 * if (crumbs.map((c) => c.label).join("/") !== "acme/web/Versions") throw new Error();
 * if (crumbs[1]!.href !== "/ui/t/acme/ns/web") throw new Error();
 * ```
 */
export function namespaceCrumbs(tenant: string, namespace: string, ...more: Crumb[]): Crumb[] {
  return tenantCrumbs(tenant, { label: namespace, href: ui.namespace(tenant, namespace) }, ...more);
}

/**
 * The htmx attributes of a part of a page that is drawn again from `url`
 * when a new version of the page's namespace lands (console.js announces
 * it on the body as `cfgtool:version`).
 *
 * @param url the address that answers the part alone to an htmx request
 * @returns the attributes
 *
 * @example
 * ```ts
 * import { redrawOnVersion } from "./layout.tsx";
 * if (redrawOnVersion("/ui/x")["hx-trigger"] !== "cfgtool:version from:body") throw new Error();
 * ```
 */
export function redrawOnVersion(url: string): Record<string, string> {
  return { "hx-get": url, "hx-trigger": "cfgtool:version from:body", "hx-swap": "outerHTML" };
}

/** What a page says about itself. */
export interface PageOptions {
  /** The `<title>` and `<h1>`. */
  title: string;
  /** The tenant the page is about, if any (the header's sections link into it). */
  tenant?: string;
  /** The header section to mark as current. */
  section?: Section;
  /** Breadcrumbs above the heading. */
  crumbs?: Crumb[];
  /** The event stream this page follows (`ui.live(t, ns)`): one per page, closed when left. */
  live?: string;
  /** The HTTP status (default 200). */
  status?: 200 | 201 | 400 | 403 | 404 | 409 | 412 | 413 | 422 | 429 | 500 | 503;
}

const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  selfRequestsOnly: true,
  historyCacheSize: 0,
  // refused and failed requests swap their explanation in like any answer
  responseHandling: [
    { code: "204", swap: false },
    { code: "[2345]..", swap: true },
  ],
});

function Frame(
  props: PageOptions & {
    email: string;
    csrf: string;
    tenants: readonly string[];
    /** An operator's session: every tenant, superadmin rights. */
    operator: boolean;
    children: Child;
  },
) {
  const sections: [Section, string, string][] = props.operator
    ? [["tenants", "Tenants", ui.tenants()]]
    : [];
  if (props.tenant !== undefined) {
    sections.push(
      ["namespaces", "Namespaces", ui.tenant(props.tenant)],
      ["tokens", "Tokens", ui.tokens(props.tenant)],
      ["people", "People", ui.people(props.tenant)],
      ["audit", "Audit log", ui.audit(props.tenant)],
      ["webhooks", "Webhooks", `${ui.tenant(props.tenant)}/webhooks`],
    );
  }
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{props.title} · cfgtool</title>
        <link rel="stylesheet" href={ui.asset(ASSETS.stylesheet.name)} />
        <script src={ui.asset(ASSETS.htmx.name)} defer></script>
        <script src={ui.asset(ASSETS.script.name)} defer></script>
      </head>
      <body
        hx-headers={JSON.stringify({ "X-CSRF-Token": props.csrf })}
        data-live={props.live}
      >
        <a class="skip" href="#main">Skip to content</a>
        <header class="top">
          <a class="brand" href={ui.home()}>cfgtool</a>
          {props.tenant === undefined ? null : (
            <span>
              <span class="muted">Tenant</span> <strong>{props.tenant}</strong>
              {props.tenants.length > 1
                ? (
                  <>
                    {" "}
                    <a class="small" href={ui.home()}>switch</a>
                  </>
                )
                : null}
            </span>
          )}
          <nav aria-label="Sections">
            <ul>
              {sections.map(([id, label, href]) => (
                <li>
                  <a href={href} aria-current={props.section === id ? "page" : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            <span class="small wrap">{props.email}</span>
            {props.operator ? <span class="badge warn">operator</span> : null}
            <form method="post" action="/auth/logout">
              <CsrfField token={props.csrf} />
              <button class="secondary" type="submit">Sign out</button>
            </form>
          </div>
        </header>
        <main id="main">
          {props.crumbs && props.crumbs.length > 0
            ? (
              <nav class="crumbs" aria-label="Breadcrumb">
                <ol>
                  {props.crumbs.map((c, i) => (
                    <li>
                      {c.href && i < props.crumbs!.length - 1
                        ? <a href={c.href}>{c.label}</a>
                        : <span aria-current="page">{c.label}</span>}
                    </li>
                  ))}
                </ol>
              </nav>
            )
            : null}
          <h1>{props.title}</h1>
          <p id="live-status" class="small muted" role="status" aria-live="polite"></p>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/**
 * Answers with a console page: the frame around `body` for the signed-in
 * person, with the console headers.
 *
 * @param c the console route's context
 * @param options title, tenant, section, breadcrumbs, live stream, status
 * @param body the page content
 * @returns the response
 *
 * @example
 * ```ts ignore
 * app.get("/t/:tenant", (c) => consolePage(c, { title: "Namespaces", tenant: "acme" }, <p>…</p>));
 * ```
 */
export async function consolePage(
  c: Context<ConsoleEnv>,
  options: PageOptions,
  body: Child,
): Promise<Response> {
  const doc = (
    <Frame
      {...options}
      email={c.get("email")}
      csrf={c.get("csrf")}
      tenants={c.get("person").tenants}
      operator={c.get("person").superadmin === true}
    >
      {body}
    </Frame>
  );
  return c.body(`<!doctype html>${await doc}`, options.status ?? 200, { ...CONSOLE_HEADERS });
}

/**
 * Answers with a fragment of a page (an htmx swap): the content alone,
 * with the console headers.
 *
 * @param c the console route's context
 * @param body the fragment
 * @param status the HTTP status (default 200)
 * @returns the response
 *
 * @example
 * ```ts ignore
 * if (c.req.header("hx-request")) return consoleFragment(c, <FlagRows … />);
 * ```
 */
export async function consoleFragment(
  c: Context<ConsoleEnv>,
  body: Child,
  status: PageOptions["status"] = 200,
): Promise<Response> {
  return c.body(String(await <>{body}</>), status ?? 200, { ...CONSOLE_HEADERS });
}

/**
 * Whether a request is an htmx swap (it wants a fragment, not a page).
 *
 * @param c the context
 * @returns true for `HX-Request: true` without `HX-Boosted`
 *
 * @example
 * ```ts ignore
 * return isFragmentRequest(c) ? consoleFragment(c, rows) : consolePage(c, options, table);
 * ```
 */
export function isFragmentRequest(c: Context): boolean {
  return c.req.header("hx-request") === "true" && c.req.header("hx-boosted") !== "true";
}
