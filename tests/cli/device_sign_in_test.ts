/**
 * `cfgtool login --no-browser` polling (lib/cli/device_sign_in.ts) against
 * a stand-in service: it waits the service's interval, 5 s more after each
 * `slow_down`, prints the URL and the code, stops at a denial, and gives
 * up when the codes expire.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { deviceSignIn } from "../../lib/cli/device_sign_in.ts";
import { SignInClient } from "../../lib/client/sign_in.ts";
import { CfgtoolError, LoginError } from "../../lib/errors.ts";

/** A service answering the polls in `answers` order (then pending). */
function fakeService(answers: { status: number; body: unknown }[]) {
  const ac = new AbortController();
  let polls = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      await req.body?.cancel();
      if (path === "/auth/cli/device") {
        return Response.json({
          device_code: "dev",
          user_code: "BCDF-GHJK",
          verification_uri: "http://svc/auth/cli/device",
          verification_uri_complete: "http://svc/auth/cli/device?user_code=BCDF-GHJK",
          expires_in: 600,
          interval: 2,
        });
      }
      const a = answers[polls++] ?? pending;
      return Response.json(a.body, { status: a.status });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    polls: () => polls,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

const refusal = (error: string, extra: Record<string, unknown> = {}) => ({
  status: 400,
  body: {
    code: "login_failed",
    message: error === "access_denied" ? "The sign-in was denied in the browser" : error,
    details: { error, reason: error, ...extra },
    request_id: "r",
  },
});
const pending = refusal("authorization_pending");
const granted = {
  status: 200,
  body: {
    session_token: "ses_x",
    session: { id: "ssn_1", expires_at: "2099-01-01T00:00:00Z" },
    user: { id: "usr_1", email: "ana@acme.test" },
    tenant: "acme",
  },
};

Deno.test("polls at the interval, 5 s slower after slow_down, until granted", async () => {
  const service = fakeService([pending, refusal("slow_down", { interval: 7 }), pending, granted]);
  try {
    const waits: number[] = [];
    const lines: string[] = [];
    const grant = await deviceSignIn({
      client: new SignInClient({ server: service.url }),
      say: (l) => lines.push(l),
      sleep: (ms) => {
        waits.push(ms);
        return Promise.resolve();
      },
    });
    assertEquals(grant.user.email, "ana@acme.test");
    assertEquals(waits, [2000, 2000, 7000, 7000]);
    const text = lines.join("\n");
    assertStringIncludes(text, "http://svc/auth/cli/device");
    assertStringIncludes(text, "enter the code  BCDF-GHJK");
  } finally {
    await service.close();
  }
});

Deno.test("a denial stops the polling with the service's refusal", async () => {
  const service = fakeService([pending, refusal("access_denied")]);
  try {
    const err = await assertRejects(
      () =>
        deviceSignIn({
          client: new SignInClient({ server: service.url }),
          say: () => {},
          sleep: () => Promise.resolve(),
        }),
      LoginError,
      "denied in the browser",
    );
    assertEquals(err.details?.error, "access_denied");
    assertEquals(service.polls(), 2);
  } finally {
    await service.close();
  }
});

Deno.test("codes that expire unconfirmed end in a timeout", async () => {
  const service = fakeService([]);
  try {
    let t = 0;
    const err = await assertRejects(
      () =>
        deviceSignIn({
          client: new SignInClient({ server: service.url }),
          say: () => {},
          sleep: (ms) => {
            t += ms;
            return Promise.resolve();
          },
          now: () => t,
        }),
      CfgtoolError,
      "was not confirmed within 10 minutes",
    );
    assertEquals(err.code, "timeout");
    assert(service.polls() >= 299 && service.polls() <= 301, String(service.polls()));
  } finally {
    await service.close();
  }
});
