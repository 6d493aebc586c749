/**
 * Verified-email sign-in in-process (lib/http/auth/email.ts): the address
 * form, one answer for every address, links that a GET never redeems, codes
 * bound to the browser's flow cookie, refusals of other sites' posts, the
 * per-client limit, and mail written to the outbox. The same flows against
 * a real server and a real SMTP server: tests/e2e/login_email_test.ts.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../../assert.ts";
import { listAudit } from "../../../lib/store/audit.ts";
import { type ParsedMail, parseMail, signInSecrets } from "../../e2e/smtp_capture.ts";
import { type CallOptions, ORIGIN, signInTest, type SignInWorld } from "./world.ts";
import { DEFAULT_SETTINGS } from "../../../lib/settings.ts";

const HTML = { accept: "text/html" };

/** The world of these tests: pages asked for as a browser does, and the outbox read. */
interface World extends SignInWorld {
  /** Waits for the `n`-th message in the outbox, parsed. */
  mail(n: number): Promise<ParsedMail>;
  /** The number of messages in the outbox. */
  mailCount(): number;
}

/** A test on a world where tenant acme signs in by email for acme.test. */
function emailTest(
  name: string,
  fn: (w: World) => Promise<void>,
  options: { mail?: boolean } = {},
): void {
  signInTest(name, (w) => {
    const call = (method: string, path: string, o: CallOptions = {}) =>
      w.call(method, path, { ...o, headers: { ...HTML, ...o.headers } });
    const mail = async (n: number) => {
      const end = Date.now() + 10_000;
      while (w.outboxFiles().length < n) {
        if (Date.now() > end) throw new Error(`no message #${n} in the outbox`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return await parseMail(await Deno.readFile(`${w.outbox}/${w.outboxFiles()[n - 1]}`));
    };
    return fn({ ...w, call, mail, mailCount: () => w.outboxFiles().length });
  }, { ...options, emailPolicies: { acme: ["acme.test"] } });
}

/** The `name=value` of a response's cookie, or null. */
function cookieOf(res: Response, name: string): string | null {
  for (const line of res.headers.getSetCookie()) {
    const pair = line.split(";")[0]!;
    if (pair.startsWith(`${name}=`) && pair.length > name.length + 1) return pair;
  }
  return null;
}

const start = (w: World, email: string, next = "/auth/signed-in") =>
  w.call("POST", "/auth/email/start", { form: { tenant: "acme", email, next } });

emailTest(
  "the address form posts the tenant, the address and next to /auth/email/start",
  async (w) => {
    const res = await w.call("GET", "/auth/login?tenant=acme&next=/ui/acme");
    assertEquals(res.status, 200);
    const page = await res.text();
    assertStringIncludes(page, '<form method="post" action="/auth/email/start">');
    assertStringIncludes(page, '<label for="email">');
    assertStringIncludes(page, 'type="email" id="email" name="email"');
    assertStringIncludes(page, '<input type="hidden" name="tenant" value="acme">');
    assertStringIncludes(page, '<input type="hidden" name="next" value="/ui/acme">');
    assert(!page.includes("acme.test"), "the admitted domains are not shown");
  },
);

emailTest(
  "admitted and outside addresses get the same page and a flow cookie; only the admitted get mail",
  async (w) => {
    const answers = [];
    for (const email of ["ana@acme.test", "eve@evil.test", "eve@sub.acme.test", "Bob@ACME.test"]) {
      const res = await start(w, email);
      answers.push({
        status: res.status,
        body: await res.text(),
        flow: cookieOf(res, "cfgtool_email_flow"),
      });
    }
    for (const a of answers) {
      assertEquals(a.status, 200);
      assertEquals(a.body, answers[0]!.body);
      assert(a.flow !== null, "every start sets a flow cookie");
    }
    assertStringIncludes(answers[0]!.body, "Check your mail");
    assert(!answers[0]!.body.includes("ana@acme.test"), "the page does not show the address");
    const first = await w.mail(1);
    const second = await w.mail(2);
    assertEquals(w.mailCount(), 2);
    assertEquals(
      new Set([first.to.toLowerCase(), second.to.toLowerCase()]),
      new Set(["ana@acme.test", "bob@acme.test"]),
    );
    assertEquals(first.subject, "Sign in to acme on cfgtool");
  },
);

emailTest(
  "a look-alike address (Kelvin sign for k) is refused with no mail; an address is mailed as keyed",
  async (w) => {
    // Before: `\u212Aate@acme.test` was looked up with full Unicode case
    // folding (as kate@acme.test) and mailed as typed, so its owner got a
    // code that signed in as kate.
    for (
      const lookAlike of ["\u212Aate@acme.test", "kate@\u212Acme.test", "\u00a0kate@acme.test"]
    ) {
      const res = await start(w, lookAlike);
      assertEquals(res.status, 400, lookAlike);
      const page = await res.text();
      assertStringIncludes(page, "plain ASCII email address");
      assertEquals(cookieOf(res, "cfgtool_email_flow"), null, "no flow starts");
    }
    const res = await start(w, "  Kate@ACME.test ");
    assertEquals(res.status, 200);
    const mail = await w.mail(1);
    assertEquals(mail.to, "kate@acme.test", "the address mailed is the one signed in");
    const { code } = signInSecrets(mail.text);
    const signed = await w.call("POST", "/auth/email/verify", {
      form: { code },
      cookie: cookieOf(res, "cfgtool_email_flow")!,
    });
    const me = await w.call("GET", "/api/v1/me", {
      cookie: cookieOf(signed, "cfgtool_session")!,
      headers: { accept: "application/json" },
    });
    assertEquals((await me.json()).principal.user.email, "kate@acme.test");
    assertEquals(w.mailCount(), 1, "no mail for the look-alikes");
  },
);

emailTest("a GET of the link only shows a confirm page; its button signs in once", async (w) => {
  await start(w, "ana@acme.test", "/ui/acme");
  const { link } = signInSecrets((await w.mail(1)).text);
  assertEquals(link.origin, ORIGIN);
  for (let i = 0; i < 2; i++) {
    const confirm = await w.call("GET", link.pathname + link.search);
    assertEquals(confirm.status, 200);
    assertEquals(confirm.headers.getSetCookie().length, 0, "no session from a GET");
    const page = await confirm.text();
    assertStringIncludes(page, '<form method="post" action="/auth/email/verify">');
    assertStringIncludes(page, "ana@acme.test");
  }
  const token = link.searchParams.get("token")!;
  const hidden = await w.call("POST", "/auth/email/verify", {
    form: { token },
    headers: { origin: "null" },
  });
  assertEquals(hidden.status, 403, "a page that hides its origin is not ours");
  const signed = await w.call("POST", "/auth/email/verify", {
    form: { token },
    headers: { origin: "null", "sec-fetch-site": "same-origin" },
  });
  assertEquals(signed.status, 303);
  assertEquals(signed.headers.get("location"), "/ui/acme");
  const session = cookieOf(signed, "cfgtool_session");
  assertMatch(session ?? "", /^cfgtool_session=ses_/);
  const me = await w.call("GET", "/api/v1/me", {
    cookie: session!,
    headers: { accept: "application/json" },
  });
  assertEquals(me.status, 200);
  assertEquals((await me.json()).principal.user.email, "ana@acme.test");
  const again = await w.call("POST", "/auth/email/verify", { form: { token } });
  assertEquals(again.status, 403);
  assertStringIncludes(await again.text(), "already used or has expired");
  const audit = (await listAudit(w.kv, {})).items;
  const succeeded = audit.find((e) => e.type === "login.succeeded");
  assertEquals(succeeded?.tenant_slug, "acme");
  assertEquals(succeeded?.details.assurance, ["email-link"]);
  const failed = audit.find((e) => e.type === "login.failed");
  assertEquals(failed?.details, { reason: "code", method: "email" });
});

emailTest(
  "a code works with the flow cookie of the browser that asked, and not without it",
  async (w) => {
    const res = await start(w, "ana@acme.test");
    const flow = cookieOf(res, "cfgtool_email_flow")!;
    const { code } = signInSecrets((await w.mail(1)).text);
    const bare = await w.call("POST", "/auth/email/verify", { form: { code } });
    assertEquals(bare.status, 403, "another browser");
    const other = cookieOf(await start(w, "eve@evil.test"), "cfgtool_email_flow")!;
    const elsewhere = await w.call("POST", "/auth/email/verify", { form: { code }, cookie: other });
    assertEquals(elsewhere.status, 403, "another flow");
    const signed = await w.call("POST", "/auth/email/verify", { form: { code }, cookie: flow });
    assertEquals(signed.status, 303);
    assert(cookieOf(signed, "cfgtool_session") !== null);
    assertStringIncludes(
      signed.headers.getSetCookie().join("\n"),
      "cfgtool_email_flow=;",
      "flow cookie cleared",
    );
  },
);

emailTest(
  "a mistyped code shows the form again with the tries left; the sixth try is refused",
  async (w) => {
    const flow = cookieOf(await start(w, "ana@acme.test"), "cfgtool_email_flow")!;
    const { code } = signInSecrets((await w.mail(1)).text);
    const wrong = code === "999999" ? "999998" : "999999";
    for (const left of [4, 3, 2, 1]) {
      const res = await w.call("POST", "/auth/email/verify", {
        form: { code: wrong },
        cookie: flow,
      });
      assertEquals(res.status, 403);
      const page = await res.text();
      assertStringIncludes(page, `${left} ${left === 1 ? "try" : "tries"} left`);
      assertStringIncludes(page, 'name="code"');
    }
    const last = await w.call("POST", "/auth/email/verify", {
      form: { code: wrong },
      cookie: flow,
    });
    assertStringIncludes(await last.text(), "that was the last try");
    const locked = await w.call("POST", "/auth/email/verify", { form: { code }, cookie: flow });
    assertEquals(locked.status, 403);
    assertStringIncludes(await locked.text(), "this sign-in is locked");
  },
);

emailTest("a link expires with its lifetime", async (w) => {
  await start(w, "ana@acme.test");
  const { link } = signInSecrets((await w.mail(1)).text);
  w.advance(DEFAULT_SETTINGS.emailCodeTtlMs);
  const res = await w.call("GET", link.pathname + link.search);
  assertEquals(res.status, 403);
  const post = await w.call("POST", "/auth/email/verify", {
    form: { token: link.searchParams.get("token")! },
  });
  assertEquals(post.status, 403);
  assertStringIncludes(await post.text(), "already used or has expired");
});

emailTest("a link is refused once the tenant's domains no longer admit the address", async (w) => {
  await start(w, "ana@acme.test");
  const { link } = signInSecrets((await w.mail(1)).text);
  const put = await w.call("PUT", "/api/v1/tenants/acme/login", {
    json: { method: "email", domains: ["other.test"] },
    headers: { authorization: `Bearer ${w.admin}`, accept: "application/json" },
  });
  assertEquals(put.status, 200, await put.text());
  const res = await w.call("POST", "/auth/email/verify", {
    form: { token: link.searchParams.get("token")! },
  });
  assertEquals(res.status, 403);
  assertStringIncludes(await res.text(), "may no longer sign in to acme");
});

emailTest("a start or verify posted from another site is refused", async (w) => {
  const res = await w.call("POST", "/auth/email/start", {
    form: { tenant: "acme", email: "ana@acme.test", next: "/" },
    headers: { origin: "https://evil.test" },
  });
  assertEquals(res.status, 403);
  const fetched = await w.call("POST", "/auth/email/verify", {
    form: { token: "x" },
    headers: { "sec-fetch-site": "cross-site" },
  });
  assertEquals(fetched.status, 403);
  await new Promise((r) => setTimeout(r, 50));
  assertEquals(w.mailCount(), 0);
});

emailTest(
  "more than 30 starts from one client in 15 minutes answer 429 with Retry-After",
  async (w) => {
    for (let i = 0; i < 30; i++) {
      const res = await start(w, `eve${i}@evil.test`);
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    const over = await start(w, "eve@evil.test");
    assertEquals(over.status, 429);
    assertStringIncludes(await over.text(), "Too many sign-in requests");
    assert(Number(over.headers.get("retry-after")) > 0);
  },
);

emailTest("a malformed address gets the form again, 400", async (w) => {
  const res = await start(w, "not an address");
  assertEquals(res.status, 400);
  assertStringIncludes(await res.text(), 'role="alert"');
});

emailTest("without a way to send mail, email sign-in answers 503", async (w) => {
  assertEquals((await w.call("GET", "/auth/login?tenant=acme")).status, 503);
  assertEquals((await start(w, "ana@acme.test")).status, 503);
}, { mail: false });
