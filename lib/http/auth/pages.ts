/**
 * The sign-in pages' frame: one server-rendered HTML layout (escaped by
 * hono's `html` template), one stylesheet served from the module graph at
 * `/auth/assets/style.css` (so a compiled binary carries it), and the
 * headers every page gets: a Content-Security-Policy with no inline script
 * or style, no framing, no referrer to other sites (sign-in URLs carry
 * one-time codes; same-origin keeps the `Origin` header that the CSRF check
 * reads, which `no-referrer` would turn into `null`) and
 * no caching. Light and dark colour schemes follow the system setting.
 *
 * @module
 */
import type { Context } from "hono";
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/** The stylesheet of every sign-in page. */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #f6f7f9; --card: #fff; --muted: #57606a;
  --accent: #0b5fff; --accent-fg: #fff; --border: #d0d7de; --error: #b42318; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --card: #161b22; --muted: #9da7b1; --accent: #4c8dff;
    --accent-fg: #0d1117; --border: #30363d; --error: #ff8a80; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
main { max-width: 28rem; margin: 10vh auto; padding: 2rem; background: var(--card);
  border: 1px solid var(--border); border-radius: 12px; }
@media (max-width: 480px) { main { margin: 0; border-radius: 0; border-width: 0 0 1px; } }
h1 { font-size: 1.35rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); font-size: .9rem; }
.error { color: var(--error); }
label { display: block; font-weight: 600; margin: 0 0 .25rem; }
input[type=text], input[type=email] { width: 100%; padding: .6rem .7rem; font: inherit;
  color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: 8px;
  margin: 0 0 1rem; }
button, .button { display: inline-block; padding: .6rem 1.1rem; font: inherit; font-weight: 600;
  color: var(--accent-fg); background: var(--accent); border: 0; border-radius: 8px;
  cursor: pointer; text-decoration: none; }
button.secondary { color: var(--fg); background: transparent; border: 1px solid var(--border); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.brand { font-weight: 700; letter-spacing: .02em; color: var(--muted); margin: 0 0 1.5rem; }
code { font-size: .95em; }
`;

/** Headers of every sign-in page. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/**
 * Renders a complete page: the layout around `body`, with a title.
 *
 * @param title the page title (also its heading)
 * @param body the page content (an `html` template; text in it is escaped)
 * @returns the HTML document
 *
 * @example
 * ```ts
 * import { html } from "hono/html";
 * import { renderPage } from "./pages.ts";
 * const doc = String(await renderPage("Sign in", html`<p>${"<b>"}</p>`));
 * if (!doc.includes("<title>Sign in · cfgtool</title>") || !doc.includes("&lt;b&gt;")) throw new Error(doc);
 * ```
 */
export function renderPage(
  title: string,
  body: HtmlEscapedString | Promise<HtmlEscapedString>,
): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`
    <!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${title} · cfgtool</title>
        <link rel="stylesheet" href="/auth/assets/style.css">
      </head>
      <body>
        <main>
    <p class="brand">cfgtool</p>
    <h1>${title}</h1>
    ${body}
        </main>
      </body>
    </html>
  `;
}

/**
 * Answers with a page and the page headers.
 *
 * @param c the hono context
 * @param title the title
 * @param body the content
 * @param status the HTTP status (default 200)
 * @returns the response
 *
 * @example
 * ```ts
 * import { Hono } from "hono";
 * import { html } from "hono/html";
 * import { pageResponse } from "./pages.ts";
 * const app = new Hono().get("/", (c) => pageResponse(c, "Hello", html`<p>hi</p>`));
 * const res = await app.request("/");
 * if (!res.headers.get("content-security-policy")?.includes("default-src 'none'")) throw new Error();
 * ```
 */
export async function pageResponse(
  c: Context,
  title: string,
  body: HtmlEscapedString | Promise<HtmlEscapedString>,
  status: 200 | 400 | 403 | 404 | 429 | 500 | 503 = 200,
): Promise<Response> {
  const doc = await renderPage(title, body);
  // c.body keeps headers set on the context before (a session cookie).
  return c.body(String(doc), status, { ...PAGE_HEADERS });
}

/**
 * The page for a refused or failed request: the message the person can act
 * on, the request id for support, and a way back to sign-in.
 *
 * @param status the HTTP status
 * @param message what went wrong, in words
 * @param requestId the request id
 * @returns the response
 *
 * @example
 * ```ts
 * import { errorPage } from "./pages.ts";
 * const res = await errorPage(403, "This sign-in link has expired", "r1");
 * if (res.status !== 403 || !(await res.text()).includes("This sign-in link has expired")) throw new Error();
 * ```
 */
export async function errorPage(
  status: number,
  message: string,
  requestId: string,
): Promise<Response> {
  const title = status === 429
    ? "Too many attempts"
    : status >= 500
    ? "Sign-in is unavailable"
    : "Sign-in failed";
  const doc = await renderPage(
    title,
    html`<p class="error" role="alert">${message}</p>
<p><a href="/auth/login">Start again</a></p>
<p class="muted">Request id: <code>${requestId}</code></p>`,
  );
  return new Response(String(doc), { status, headers: { ...PAGE_HEADERS } });
}

/** Re-export for page modules: `html` templates and trusted raw fragments. */
export { html, raw };
