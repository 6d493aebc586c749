/**
 * The loopback listener of `cfgtool login` (lib/cli/loopback_sign_in.ts)
 * against a stand-in service: it listens on 127.0.0.1 only, ignores a
 * callback with another `state` and keeps waiting, redeems the code with
 * the verifier whose S256 the authorize URL carried, tells the browser it
 * may close the tab, and gives up after its time limit.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { loopbackSignIn } from "../../lib/cli/loopback_sign_in.ts";
import { SignInClient } from "../../lib/client/sign_in.ts";
import { pkceChallenge } from "../../lib/protocol/cli_sign_in.ts";
import { CfgtoolError, LoginError } from "../../lib/errors.ts";

/** A stand-in service that answers the token endpoint for one code. */
function fakeService(expected: { code: string; challenge: () => string }) {
  const ac = new AbortController();
  const bodies: Record<string, string>[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const body = await req.json();
      bodies.push(body);
      const ok = body.code === expected.code &&
        await pkceChallenge(body.code_verifier) === expected.challenge();
      return ok
        ? Response.json({
          session_token: "ses_x",
          session: { id: "ssn_1", expires_at: "2099-01-01T00:00:00Z" },
          user: { id: "usr_1", email: "ana@acme.test" },
          tenant: "acme",
        })
        : Response.json(
          {
            code: "login_failed",
            message: "nope",
            details: { error: "invalid_grant", reason: "code" },
            request_id: "r",
          },
          { status: 400 },
        );
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    bodies,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

Deno.test("a callback with the right state and code signs in; one with another state is ignored", async () => {
  let challenge = "";
  const service = fakeService({ code: "the-code", challenge: () => challenge });
  try {
    const pages: string[] = [];
    const grant = await loopbackSignIn({
      client: new SignInClient({ server: service.url }),
      tenant: "acme",
      say: () => {},
      openUrl: (url) => {
        const ask = new URL(url).searchParams;
        challenge = ask.get("code_challenge")!;
        assertEquals(ask.get("tenant"), "acme");
        const back = new URL(ask.get("redirect_uri")!);
        assertEquals(back.hostname, "127.0.0.1");
        (async () => {
          const forged = new URL(back);
          forged.search = "?code=the-code&state=forged";
          const first = await fetch(forged);
          assertEquals(first.status, 400);
          pages.push(await first.text());
          const real = new URL(back);
          real.searchParams.set("code", "the-code");
          real.searchParams.set("state", ask.get("state")!);
          const second = await fetch(real);
          pages.push(await second.text());
        })();
        return true;
      },
    });
    assertEquals(grant.session_token, "ses_x");
    assertEquals(service.bodies.length, 1, "the forged callback sent nothing to the service");
    assertEquals(service.bodies[0]!.grant_type, "authorization_code");
    // the page answer is flushed before the listener closes
    for (let i = 0; i < 100 && pages.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    assertStringIncludes(pages[0]!, "not the sign-in cfgtool is waiting for");
    assertStringIncludes(pages[1]!, "You can close this tab");
  } finally {
    await service.close();
  }
});

Deno.test("a code the service refuses fails the sign-in with its error", async () => {
  const service = fakeService({ code: "other", challenge: () => "" });
  try {
    const err = await assertRejects(
      () =>
        loopbackSignIn({
          client: new SignInClient({ server: service.url }),
          say: () => {},
          openUrl: (url) => {
            const ask = new URL(url).searchParams;
            const back = new URL(ask.get("redirect_uri")!);
            back.searchParams.set("code", "the-code");
            back.searchParams.set("state", ask.get("state")!);
            fetch(back).then((r) => r.body?.cancel());
            return true;
          },
        }),
      LoginError,
    );
    assertEquals(err.details?.error, "invalid_grant");
  } finally {
    await service.close();
  }
});

Deno.test("no answer from the browser in time is a timeout; the URL is printed either way", async () => {
  const lines: string[] = [];
  const err = await assertRejects(
    () =>
      loopbackSignIn({
        client: new SignInClient({ server: "http://127.0.0.1:9" }),
        say: (l) => lines.push(l),
        openUrl: () => false,
        timeoutMs: 200,
      }),
    CfgtoolError,
    "cfgtool login --no-browser",
  );
  assertEquals(err.code, "timeout");
  assert(lines.some((l) => l.startsWith("Open this URL")), lines.join("\n"));
  assert(lines.some((l) => l.includes("/auth/cli/authorize?redirect_uri=")), lines.join("\n"));
});
