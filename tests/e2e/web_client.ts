/**
 * Test helper: a small browser stand-in for sign-in tests. It keeps cookies
 * (npm `tough-cookie`), takes one HTTP step at a time (redirects are never
 * followed behind the test's back, so a test can stop before a given URL),
 * reads the forms of an HTML page (npm `linkedom`) and submits them with
 * fields filled in. {@linkcode signInAtProvider} drives the login and consent
 * pages of `oidc-provider` with it.
 *
 * @module
 */
import { CookieJar } from "npm:tough-cookie@^6.1.0";
import { parseHTML } from "npm:linkedom@^0.18.15";

/** One HTTP response, body already read. */
export interface WebResponse {
  /** The URL that was requested. */
  url: URL;
  status: number;
  headers: Headers;
  /** The body as text. */
  text: string;
  /** The `Location` header resolved against `url`, or null. */
  location: URL | null;
}

/** The few DOM calls {@linkcode parseForms} makes on linkedom's elements. */
interface DomElement {
  tagName: string;
  textContent: string | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
}

/** A form of a page, as {@linkcode parseForms} reads it. */
export interface HtmlForm {
  /** The `action`, resolved against the page URL (the page itself when absent). */
  action: URL;
  /** `GET` or `POST`. */
  method: "GET" | "POST";
  /** The names and initial values of its successful controls, in order. */
  fields: [string, string][];
  /** The names of every named control (including empty text and password inputs). */
  names: string[];
}

/** Options of {@linkcode WebClient.request}. */
export interface RequestOptions {
  method?: string;
  body?: URLSearchParams | string;
  headers?: Record<string, string>;
}

/** Options of {@linkcode WebClient.follow}. */
export interface FollowOptions {
  /** Stop before requesting a URL for which this returns true. */
  stopBefore?: (url: URL) => boolean;
  /** At most this many redirects (default 20). */
  maxRedirects?: number;
}

/** Where {@linkcode WebClient.follow} ended. */
export type FollowResult =
  | { stopped: false; response: WebResponse }
  | { stopped: true; url: URL; response: WebResponse | null };

/** A cookie-keeping client that takes one step at a time. */
export class WebClient {
  /** The cookie jar (shared by every origin, as a browser's is). */
  readonly jar: CookieJar = new CookieJar();
  /** Headers sent with every request (e.g. a user agent). */
  readonly headers: Record<string, string>;

  /**
   * Creates a client with an empty cookie jar.
   *
   * @example
   * ```ts
   * import { WebClient } from "./web_client.ts";
   * const client = new WebClient({ "accept-language": "en" });
   * if ((await client.cookieHeader("http://127.0.0.1/")) !== "") throw new Error("jar not empty");
   * ```
   */
  constructor(headers: Record<string, string> = {}) {
    this.headers = headers;
  }

  /**
   * Sends one request with the jar's cookies, stores the cookies the answer
   * sets, reads the body and returns it; a redirect is returned, not followed.
   *
   * @example
   * ```ts
   * import { WebClient } from "./web_client.ts";
   * await using server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) =>
   *   new Response(req.headers.get("cookie") ?? "none", {
   *     status: 302,
   *     headers: { location: "/next", "set-cookie": "sid=1; Path=/" },
   *   }));
   * const client = new WebClient();
   * const base = `http://127.0.0.1:${server.addr.port}`;
   * const first = await client.request(`${base}/`);
   * if (first.status !== 302 || first.location?.href !== `${base}/next`) throw new Error("no redirect");
   * if ((await client.request(`${base}/`)).text !== "sid=1") throw new Error("cookie not sent");
   * ```
   */
  async request(url: string | URL, options: RequestOptions = {}): Promise<WebResponse> {
    const target = new URL(url);
    const headers = new Headers(this.headers);
    for (const [k, v] of Object.entries(options.headers ?? {})) headers.set(k, v);
    const cookie = await this.cookieHeader(target);
    if (cookie !== "") headers.set("cookie", cookie);
    if (options.body instanceof URLSearchParams && !headers.has("content-type")) {
      headers.set("content-type", "application/x-www-form-urlencoded");
    }
    const res = await fetch(target, {
      method: options.method ?? (options.body === undefined ? "GET" : "POST"),
      headers,
      body: options.body === undefined ? null : options.body.toString(),
      redirect: "manual",
    });
    for (const setCookie of res.headers.getSetCookie()) {
      await this.jar.setCookie(setCookie, target.href, { ignoreError: true });
    }
    const text = await res.text();
    const loc = res.headers.get("location");
    return {
      url: target,
      status: res.status,
      headers: res.headers,
      text,
      location: loc === null ? null : new URL(loc, target),
    };
  }

  /**
   * Follows redirects one `GET` at a time from `start` (a URL to request, or a
   * response already had), and stops at the first answer that is not a
   * redirect, or before requesting a URL that `stopBefore` picks.
   *
   * @example
   * ```ts
   * import { WebClient } from "./web_client.ts";
   * await using server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
   *   const n = Number(new URL(req.url).searchParams.get("n"));
   *   return n < 3 ? Response.redirect(new URL(`/?n=${n + 1}`, req.url), 302) : new Response("end");
   * });
   * const client = new WebClient();
   * const base = `http://127.0.0.1:${server.addr.port}`;
   * const all = await client.follow(`${base}/?n=0`);
   * if (all.stopped || all.response.text !== "end") throw new Error("did not reach the end");
   * const part = await client.follow(`${base}/?n=0`, { stopBefore: (u) => u.search === "?n=2" });
   * if (!part.stopped || part.url.href !== `${base}/?n=2`) throw new Error("did not stop");
   * ```
   */
  async follow(
    start: string | URL | WebResponse,
    options: FollowOptions = {},
  ): Promise<FollowResult> {
    const max = options.maxRedirects ?? 20;
    let response: WebResponse | null = null;
    let next: URL;
    if (typeof start === "string" || start instanceof URL) {
      next = new URL(start);
    } else {
      response = start;
      if (!isRedirect(start)) return { stopped: false, response: start };
      next = start.location!;
    }
    for (let hops = 0; hops <= max; hops++) {
      if (options.stopBefore?.(next)) return { stopped: true, url: next, response };
      response = await this.request(next);
      if (!isRedirect(response)) return { stopped: false, response };
      next = response.location!;
    }
    throw new Error(`more than ${max} redirects, last to ${next.href}`);
  }

  /**
   * Submits `form` (one step, not followed) with its initial values, `fields`
   * replacing or adding values by name.
   *
   * @example
   * ```ts
   * import { parseForms, WebClient } from "./web_client.ts";
   * await using server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, async (req) =>
   *   new Response(await req.text()));
   * const base = new URL(`http://127.0.0.1:${server.addr.port}/page`);
   * const [form] = parseForms(
   *   `<form method="post" action="/go"><input type="hidden" name="a" value="1"><input name="b"></form>`,
   *   base,
   * );
   * const res = await new WebClient().submit(form!, { b: "x y" });
   * if (res.text !== "a=1&b=x+y") throw new Error(res.text);
   * ```
   */
  submit(
    form: HtmlForm,
    fields: Record<string, string> = {},
    options: { headers?: Record<string, string> } = {},
  ): Promise<WebResponse> {
    const body = new URLSearchParams();
    const given = new Set(Object.keys(fields));
    for (const [name, value] of form.fields) {
      if (!given.has(name)) body.append(name, value);
    }
    for (const [name, value] of Object.entries(fields)) body.append(name, value);
    const headers = options.headers ?? {};
    if (form.method === "GET") {
      const url = new URL(form.action);
      url.search = body.toString();
      return this.request(url, { headers });
    }
    return this.request(form.action, { method: "POST", body, headers });
  }

  /**
   * The `Cookie` header this client would send to `url` ("" when none).
   *
   * @example
   * ```ts
   * import { WebClient } from "./web_client.ts";
   * const client = new WebClient();
   * await client.jar.setCookie("k=v; Path=/", "http://127.0.0.1:1/");
   * if ((await client.cookieHeader("http://127.0.0.1:1/x")) !== "k=v") throw new Error("no cookie");
   * ```
   */
  cookieHeader(url: string | URL): Promise<string> {
    return this.jar.getCookieString(new URL(url).href);
  }

  /**
   * The value of cookie `name` this client holds for `url`, or null.
   *
   * @example
   * ```ts
   * import { WebClient } from "./web_client.ts";
   * const client = new WebClient();
   * await client.jar.setCookie("k=v; Path=/", "http://127.0.0.1:1/");
   * if ((await client.cookie("http://127.0.0.1:1/", "k")) !== "v") throw new Error("no cookie");
   * if ((await client.cookie("http://127.0.0.1:1/", "other")) !== null) throw new Error("phantom");
   * ```
   */
  async cookie(url: string | URL, name: string): Promise<string | null> {
    const cookies = await this.jar.getCookies(new URL(url).href);
    return cookies.find((c) => c.key === name)?.value ?? null;
  }
}

/** True for a 3xx answer with a `Location`. */
function isRedirect(res: WebResponse): boolean {
  return res.status >= 300 && res.status < 400 && res.location !== null;
}

/**
 * Reads the forms of an HTML page: action (resolved against `base`), method,
 * and the initial values of the controls a browser would submit (inputs other
 * than buttons, checked boxes only, selected options, textareas).
 *
 * @example
 * ```ts
 * import { parseForms } from "./web_client.ts";
 * import { assertEquals } from "../assert.ts";
 * const forms = parseForms(
 *   `<form action="/login" method="post">
 *      <input type="hidden" name="prompt" value="login"><input name="login">
 *      <input type="checkbox" name="remember" value="yes"><button type="submit">Go</button>
 *    </form>`,
 *   new URL("http://127.0.0.1:9/interaction/1"),
 * );
 * assertEquals(forms.length, 1);
 * assertEquals(forms[0]!.action.href, "http://127.0.0.1:9/login");
 * assertEquals(forms[0]!.method, "POST");
 * assertEquals(forms[0]!.fields, [["prompt", "login"], ["login", ""]]);
 * assertEquals(forms[0]!.names, ["prompt", "login", "remember"]);
 * ```
 */
export function parseForms(html: string, base: URL): HtmlForm[] {
  const { document } = parseHTML(html) as unknown as { document: DomElement };
  const forms: HtmlForm[] = [];
  for (const form of document.querySelectorAll("form")) {
    const fields: [string, string][] = [];
    const names: string[] = [];
    for (const el of form.querySelectorAll("input, select, textarea")) {
      const name = el.getAttribute("name");
      if (name === null || el.hasAttribute("disabled")) continue;
      names.push(name);
      const tag = el.tagName.toLowerCase();
      if (tag === "textarea") {
        fields.push([name, el.textContent ?? ""]);
      } else if (tag === "select") {
        const option = el.querySelector("option[selected]") ?? el.querySelector("option");
        if (option) fields.push([name, option.getAttribute("value") ?? option.textContent ?? ""]);
      } else {
        const type = (el.getAttribute("type") ?? "text").toLowerCase();
        if (["submit", "button", "image", "reset", "file"].includes(type)) continue;
        if ((type === "checkbox" || type === "radio") && !el.hasAttribute("checked")) continue;
        fields.push([name, el.getAttribute("value") ?? (type === "checkbox" ? "on" : "")]);
      }
    }
    const action = form.getAttribute("action");
    const method = (form.getAttribute("method") ?? "get").toUpperCase() === "POST" ? "POST" : "GET";
    forms.push({ action: new URL(action ?? "", base), method, fields, names });
  }
  return forms;
}

/** Raised by {@linkcode signInAtProvider} when the provider shows something it cannot go on from. */
export class ProviderPageError extends Error {
  /** Stable code. */
  readonly code = "provider_page";
  /** The page the provider answered with. */
  readonly response: WebResponse;
  /** @param response the page */
  constructor(response: WebResponse) {
    const body = response.text.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").trim();
    super(`provider answered ${response.status} at ${response.url.href}: ${body.slice(0, 300)}`);
    this.name = "ProviderPageError";
    this.response = response;
  }
}

/**
 * Opens `authorizeUrl` with `client` and goes through the provider's own pages
 * (the `oidc-provider` login form, filled with `login` and `password`, then its
 * consent form), following each redirect, until the provider redirects
 * elsewhere (to the relying party); returns that redirect's URL without
 * requesting it. A page it cannot go on from raises {@linkcode ProviderPageError}.
 *
 * @example
 * ```ts ignore
 * const client = new WebClient();
 * const start = await client.request(`${server.url}/auth/login?tenant=acme`);
 * const back = await signInAtProvider(client, start.location!, { login: "ada@acme.com", password: "pw" });
 * assertEquals(back.pathname, "/auth/oidc/callback");
 * ```
 */
export async function signInAtProvider(
  client: WebClient,
  authorizeUrl: string | URL,
  credentials: { login: string; password: string },
): Promise<URL> {
  const provider = new URL(authorizeUrl).origin;
  const elsewhere = (u: URL) => u.origin !== provider;
  let step = await client.follow(authorizeUrl, { stopBefore: elsewhere });
  for (let pages = 0; pages < 10; pages++) {
    if (step.stopped) return step.url;
    const page = step.response;
    const form = page.status === 200
      ? parseForms(page.text, page.url).find((f) => f.action.origin === provider)
      : undefined;
    if (!form) throw new ProviderPageError(page);
    const fields: Record<string, string> = form.names.includes("login")
      ? { login: credentials.login, password: credentials.password }
      : {};
    const submitted = await client.submit(form, fields, { headers: { origin: provider } });
    step = await client.follow(submitted, { stopBefore: elsewhere });
  }
  throw new Error("no redirect back after 10 provider pages");
}
