/**
 * `cfgtool login` in the browser (like `gh auth login`): a PKCE pair
 * (S256) and a random `state`, a one-request listener on
 * `127.0.0.1:<random port>` (loopback only), the browser opened at the
 * service's `/auth/cli/authorize` page; when the person confirms, the
 * browser comes back to `http://127.0.0.1:<port>/callback?code&state`, the
 * listener checks `state`, redeems the code with the verifier and tells
 * the person they can close the tab.
 *
 * @module
 */
import type { CliSessionGrant } from "../protocol/cli_sign_in.ts";
import { CfgtoolError, LoginError } from "../errors.ts";
import type { SignInClient } from "../client/sign_in.ts";
import { createPkcePair, randomState } from "../client/sign_in.ts";

/** How long the listener waits for the browser by default: 5 minutes. */
export const LOOPBACK_TIMEOUT_MS = 5 * 60 * 1000;

/** What {@linkcode loopbackSignIn} needs. */
export interface LoopbackOptions {
  /** The service's sign-in client. */
  client: SignInClient;
  /** The tenant to sign in to, if chosen. */
  tenant?: string | undefined;
  /** Opens a URL in the browser; false when it could not. */
  openUrl: (url: string) => boolean;
  /** Writes a progress line (stderr). */
  say: (line: string) => void;
  /** How long to wait for the browser (default 5 minutes). */
  timeoutMs?: number;
}

/**
 * Runs the loopback flow to its end: the CLI session, or the refusal
 * (denied in the browser, a code the service refused, no answer in time).
 *
 * @param options client, tenant, opener, output, timeout
 * @returns the session
 *
 * @example
 * ```ts
 * import { loopbackSignIn } from "./loopback_sign_in.ts";
 * import { SignInClient } from "../client/sign_in.ts";
 * // The "browser" follows the authorize URL straight back with access_denied.
 * let denied = "";
 * try {
 *   await loopbackSignIn({
 *     client: new SignInClient({ server: "http://127.0.0.1:1" }),
 *     say: () => {},
 *     openUrl: (url) => {
 *       const ask = new URL(url).searchParams;
 *       const back = new URL(ask.get("redirect_uri")!);
 *       back.searchParams.set("error", "access_denied");
 *       back.searchParams.set("state", ask.get("state")!);
 *       fetch(back).then((r) => r.body?.cancel());
 *       return true;
 *     },
 *   });
 * } catch (e) {
 *   denied = String((e as { reason?: string }).reason);
 * }
 * if (denied !== "access_denied") throw new Error(denied);
 * ```
 */
export async function loopbackSignIn(options: LoopbackOptions): Promise<CliSessionGrant> {
  const { client, say } = options;
  const pair = await createPkcePair();
  const state = randomState();
  let finished = false;
  let resolve!: (grant: CliSessionGrant) => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<CliSessionGrant>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "GET" || url.pathname !== "/callback") {
        return page(404, "Not found", "This is cfgtool's sign-in listener; nothing else is here.");
      }
      if (finished) {
        return page(200, "Sign-in finished", "This sign-in has finished. You can close this tab.");
      }
      if (!sameText(url.searchParams.get("state") ?? "", state)) {
        // Not the browser cfgtool sent: keep waiting for the right one.
        return page(
          400,
          "Sign-in failed",
          "This is not the sign-in cfgtool is waiting for. Start again with cfgtool login.",
        );
      }
      const error = url.searchParams.get("error");
      if (error !== null) {
        finished = true;
        reject(
          new LoginError(
            error === "access_denied" ? "access_denied" : "refused",
            error === "access_denied"
              ? "The sign-in was denied in the browser"
              : `The service refused the sign-in (${error})`,
            { details: { error } },
          ),
        );
        return page(200, "Sign-in denied", "cfgtool was not signed in. You can close this tab.");
      }
      const code = url.searchParams.get("code");
      if (code === null || code === "") {
        return page(400, "Sign-in failed", "The sign-in came back without a code.");
      }
      finished = true;
      try {
        const grant = await client.redeemCode(code, pair.verifier);
        resolve(grant);
        return page(
          200,
          "cfgtool is signed in",
          `Signed in as ${grant.user.email} to ${grant.tenant}. ` +
            "You can close this tab and go back to your terminal.",
        );
      } catch (err) {
        reject(err);
        return page(400, "Sign-in failed", `${(err as Error).message}`);
      }
    },
  );
  const redirectUri = `http://127.0.0.1:${server.addr.port}/callback`;
  const url = client.authorizeUrl({
    redirectUri,
    state,
    codeChallenge: pair.challenge,
    tenant: options.tenant,
  }).href;
  const timeoutMs = options.timeoutMs ?? LOOPBACK_TIMEOUT_MS;
  const timer = setTimeout(() => {
    finished = true;
    reject(
      new CfgtoolError(
        "timeout",
        `no sign-in came back from the browser within ${Math.round(timeoutMs / 60_000)} ` +
          "minutes; run `cfgtool login` again (or `cfgtool login --no-browser` to use a code)",
        { status: 504 },
      ),
    );
  }, timeoutMs);
  try {
    const opened = options.openUrl(url);
    say(
      opened
        ? `Opening your browser to sign in. If it does not open, visit this URL on this computer:`
        : `Open this URL in a browser on this computer to sign in:`,
    );
    say(`  ${url}`);
    say("Waiting for the browser… (on another machine? use `cfgtool login --no-browser`)");
    return await done;
  } finally {
    clearTimeout(timer);
    // Graceful: the answer to the browser's request is sent before the listener closes.
    await server.shutdown();
  }
}

/** Compares two strings without an early exit. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A small self-contained page (no script, no outside resource). */
function page(status: number, title: string, text: string): Response {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · cfgtool</title></head>
<body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main></body></html>`;
  return new Response(body, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": "default-src 'none'",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store",
    },
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
