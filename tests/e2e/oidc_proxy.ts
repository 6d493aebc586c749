/**
 * Test helper: a reverse proxy that stands at an OpenID issuer's URL in front
 * of a real provider (started with `issuer` set to the proxy's URL). It passes
 * every request through, with `X-Forwarded-Host`/`-Proto` so the provider
 * builds its endpoint URLs on the proxy, and can swap the `id_token` of the
 * next token-endpoint answer for another one: a genuinely signed ID token
 * from elsewhere (another issuer sharing the signing key, or another client
 * of the same issuer), as a token-substitution attacker would deliver it.
 *
 * @module
 */

/** A running proxy. `await using` stops it. */
export interface IssuerProxy extends AsyncDisposable {
  /** Its URL, `http://127.0.0.1:<port>`: use it as the provider's `issuer`. */
  url: string;
  /** Sets the provider it forwards to (its listening URL). */
  forwardTo(target: string): void;
  /** The next token-endpoint answer carries `idToken` instead of the provider's. */
  substituteNextIdToken(idToken: string): void;
  /** How many token-endpoint answers had their ID token swapped. */
  substitutions(): number;
  /** Stops listening. */
  stop(): Promise<void>;
}

/**
 * Starts the proxy on a free loopback port. Requests that arrive before
 * {@linkcode IssuerProxy.forwardTo} are answered 502.
 *
 * @example
 * ```ts
 * import { startIssuerProxy } from "./oidc_proxy.ts";
 * await using upstream = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) =>
 *   Response.json({ id_token: "real", host: req.headers.get("x-forwarded-host") }));
 * await using proxy = await startIssuerProxy();
 * proxy.forwardTo(`http://127.0.0.1:${upstream.addr.port}`);
 * proxy.substituteNextIdToken("swapped");
 * const token = await (await fetch(`${proxy.url}/token`, { method: "POST", body: "x" })).json();
 * if (token.id_token !== "swapped" || token.host !== new URL(proxy.url).host) throw new Error();
 * const again = await (await fetch(`${proxy.url}/token`, { method: "POST", body: "x" })).json();
 * if (again.id_token !== "real" || proxy.substitutions() !== 1) throw new Error();
 * ```
 */
export function startIssuerProxy(): Promise<IssuerProxy> {
  let target: string | null = null;
  let nextIdToken: string | null = null;
  let swapped = 0;
  const { promise: listening, resolve } = Promise.withResolvers<void>();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: () => resolve() },
    async (req) => {
      if (target === null) return new Response("no upstream yet", { status: 502 });
      const incoming = new URL(req.url);
      const headers = new Headers(req.headers);
      headers.set("x-forwarded-host", incoming.host);
      headers.set("x-forwarded-proto", incoming.protocol.slice(0, -1));
      headers.delete("host");
      const upstream = await fetch(new URL(incoming.pathname + incoming.search, target), {
        method: req.method,
        headers,
        body: req.body,
        redirect: "manual",
      });
      if (req.method === "POST" && incoming.pathname === "/token" && nextIdToken !== null) {
        const body = await upstream.json();
        if (typeof body.id_token === "string") {
          body.id_token = nextIdToken;
          nextIdToken = null;
          swapped++;
        }
        const out = new Headers(upstream.headers);
        out.delete("content-length");
        return new Response(JSON.stringify(body), { status: upstream.status, headers: out });
      }
      const out = new Headers(upstream.headers);
      out.delete("content-encoding");
      out.delete("content-length");
      return new Response(upstream.body, { status: upstream.status, headers: out });
    },
  );
  return listening.then(() => ({
    url: `http://127.0.0.1:${server.addr.port}`,
    forwardTo(t: string) {
      target = t;
    },
    substituteNextIdToken(idToken: string) {
      nextIdToken = idToken;
    },
    substitutions: () => swapped,
    stop: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  }));
}
