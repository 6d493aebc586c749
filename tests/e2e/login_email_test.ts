/**
 * Verified-email sign-in end to end: a real `cfgtool serve` process sends
 * its mail to a real SMTP server on loopback (tests/e2e/smtp_capture.ts),
 * and a cookie-keeping client (tests/e2e/web_client.ts) plays the browser:
 * the link from the mail (confirmed with a button, once), the code typed in
 * the browser that asked, the same answer for every address, the
 * per-address limit, five wrong codes, an expired link, and the outbox
 * when there is no SMTP server.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Installation, startInstallation } from "./installation.ts";
import { parseMail, signInSecrets, type SmtpCapture, startSmtpCapture } from "./smtp_capture.ts";
import { parseForms, WebClient, type WebResponse } from "./web_client.ts";

const SMTP_USER = "cfgtool";
const SMTP_PASSWORD = "s3cret-smtp-pass";

/** A server whose tenant acme signs in by email for `acme.test`. */
async function emailInstallation(args: string[]): Promise<Installation> {
  const inst = await startInstallation({ args });
  try {
    assertEquals(
      (await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status,
      201,
    );
    const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
      method: "email",
      domains: ["acme.test"],
    });
    assertEquals(policy.status, 200, JSON.stringify(policy.body));
    return inst;
  } catch (err) {
    await inst.close();
    throw err;
  }
}

/** Opens the sign-in page of acme and sends the address form. */
async function askForMail(client: WebClient, url: string, email: string): Promise<WebResponse> {
  const page = await client.request(`${url}/auth/login?tenant=acme&next=/auth/signed-in`);
  assertEquals(page.status, 200, page.text);
  const form = parseForms(page.text, page.url).find((f) =>
    f.action.pathname === "/auth/email/start"
  );
  assert(form, page.text);
  return await client.submit(form, { email });
}

/** Submits the one form of a page that posts to /auth/email/verify. */
function submitVerify(
  client: WebClient,
  page: WebResponse,
  fields: Record<string, string> = {},
): Promise<WebResponse> {
  const form = parseForms(page.text, page.url).find((f) =>
    f.action.pathname === "/auth/email/verify"
  );
  assert(form, page.text);
  return client.submit(form, fields);
}

/** Who the client's session cookie signs in as (GET /api/v1/me), or the status. */
async function whoAmI(client: WebClient, url: string): Promise<string | number> {
  const res = await client.request(`${url}/api/v1/me`, { headers: { accept: "application/json" } });
  if (res.status !== 200) return res.status;
  return JSON.parse(res.text).principal.user.email;
}

/** The page text without markup, for messages. */
const words = (page: WebResponse) => page.text.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ");

Deno.test("email sign-in with a real server and a real SMTP server", async (t) => {
  const smtp: SmtpCapture = await startSmtpCapture();
  const smtpUrl = `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`;
  const inst = await emailInstallation([
    "--smtp-url",
    smtpUrl,
    "--mail-from",
    "Flags <flags@acme.test>",
  ]);
  const url = inst.url;
  const tokens: string[] = [];
  try {
    await t.step(
      "the link from the mail signs in after its confirm button, and only once",
      async () => {
        const browser = new WebClient();
        const answer = await askForMail(browser, url, "ana@acme.test");
        assertEquals(answer.status, 200);
        assertStringIncludes(answer.text, "Check your mail");
        const mail = await smtp.waitFor("ana@acme.test");
        assertEquals(mail.subject, "Sign in to acme on cfgtool");
        assertEquals(mail.from, '"Flags" <flags@acme.test>');
        assertEquals(mail.user, SMTP_USER, "the server authenticated with the URL's user");
        assertStringIncludes(mail.text, "15 minutes");
        assertStringIncludes(mail.text, "ignore this mail");
        const { link } = signInSecrets(mail.text);
        assertEquals(link.origin, url);
        tokens.push(link.searchParams.get("token")!);

        // The link may be opened anywhere (another device); opening it signs nobody in.
        const phone = new WebClient();
        const confirm = await phone.request(link);
        assertEquals(confirm.status, 200);
        assertStringIncludes(confirm.text, "ana@acme.test");
        assertEquals(await phone.cookie(url, "cfgtool_session"), null, "no session from a GET");
        const prefetched = await new WebClient().request(link); // a mail scanner
        assertEquals(prefetched.status, 200, "a prefetch does not use the link up");

        const signed = await submitVerify(phone, confirm);
        assertEquals(signed.status, 303, words(signed));
        assertEquals(signed.location?.pathname, "/auth/signed-in");
        assert((await phone.cookie(url, "cfgtool_session"))?.startsWith("ses_"));
        assertEquals(await whoAmI(phone, url), "ana@acme.test");
        const tenant = await phone.request(`${url}/api/v1/tenants/acme`, {
          headers: { accept: "application/json" },
        });
        assertEquals(tenant.status, 200, "an admitted person may read the tenant");
        // the sign-in made ana one of acme's people: the admins' list shows her at once
        const people = await inst.api("GET", "/api/v1/users?tenant=acme", inst.admin);
        assertEquals(people.status, 200, JSON.stringify(people.body));
        const ana = people.body.users.find((u: { email: string }) => u.email === "ana@acme.test");
        assert(ana, JSON.stringify(people.body));
        assertEquals(
          [ana.last_sign_in_method, ana.last_sign_in_client, ana.roles],
          ["email", "browser", [{ role: "member" }]],
        );
        assertEquals(ana.first_sign_in_at, ana.last_sign_in_at);

        const reused = await submitVerify(new WebClient(), confirm);
        assertEquals(reused.status, 403);
        assertStringIncludes(words(reused), "already used or has expired");
        assertEquals((await new WebClient().request(link)).status, 403, "the link is gone");
      },
    );

    await t.step("the code from the mail signs in in the browser that asked for it", async () => {
      const browser = new WebClient();
      const answer = await askForMail(browser, url, "cody@acme.test");
      const { code } = signInSecrets((await smtp.waitFor("cody@acme.test")).text);
      const elsewhere = await submitVerify(new WebClient(), answer, { code });
      assertEquals(elsewhere.status, 403, "a code does not work in another browser");
      const signed = await submitVerify(browser, answer, { code });
      assertEquals(signed.status, 303, words(signed));
      assertEquals(await whoAmI(browser, url), "cody@acme.test");
      const again = await submitVerify(browser, answer, { code });
      assertEquals(again.status, 403, "a code works once");
    });

    await t.step(
      "admitted and outside addresses get byte-identical pages; only the admitted get mail",
      async () => {
        const answers: WebResponse[] = [];
        for (
          const email of [
            "ana@acme.test",
            "newcomer@acme.test",
            "eve@evil.test",
            "eve@acme.test.evil.test",
            "eve@sub.acme.test",
          ]
        ) {
          answers.push(await askForMail(new WebClient(), url, email));
        }
        for (const a of answers) {
          assertEquals(a.status, 200);
          assertEquals(a.text, answers[0]!.text, "the same bytes whatever the address");
          assertEquals(a.headers.getSetCookie().length, 1, "each gets its flow cookie");
        }
        await smtp.waitFor("ana@acme.test", 2);
        await smtp.waitFor("newcomer@acme.test");
        // A sentinel sent after them: once it arrived, any mail to the others would have too.
        await askForMail(new WebClient(), url, "sentinel@acme.test");
        await smtp.waitFor("sentinel@acme.test");
        for (const email of ["eve@evil.test", "eve@acme.test.evil.test", "eve@sub.acme.test"]) {
          assertEquals(smtp.to(email).length, 0, `no mail to ${email}`);
        }
      },
    );

    await t.step(
      "after 5 starts in 15 minutes an address gets no more mail, and the same page",
      async () => {
        const answers: WebResponse[] = [];
        for (let i = 0; i < 7; i++) {
          answers.push(await askForMail(new WebClient(), url, "rita@acme.test"));
        }
        for (const a of answers) {
          assertEquals(a.status, 200);
          assertEquals(a.text, answers[0]!.text, "over the limit the answer does not change");
        }
        await smtp.waitFor("rita@acme.test", 5);
        await askForMail(new WebClient(), url, "sentinel2@acme.test");
        await smtp.waitFor("sentinel2@acme.test");
        assertEquals(smtp.to("rita@acme.test").length, 5);
      },
    );

    await t.step("five wrong codes lock the flow, even for the right code after them", async () => {
      const browser = new WebClient();
      let page = await askForMail(browser, url, "wes@acme.test");
      const mail = await smtp.waitFor("wes@acme.test");
      const { code, link } = signInSecrets(mail.text);
      const wrong = code === "000000" ? "000001" : "000000";
      for (const left of [4, 3, 2, 1]) {
        page = await submitVerify(browser, page, { code: wrong });
        assertEquals(page.status, 403);
        assertStringIncludes(words(page), `${left} ${left === 1 ? "try" : "tries"} left`);
      }
      const fifth = await submitVerify(browser, page, { code: wrong });
      assertEquals(fifth.status, 403);
      assertStringIncludes(words(fifth), "that was the last try");
      const locked = await submitVerify(browser, page, { code });
      assertEquals(locked.status, 403);
      assertStringIncludes(words(locked), "locked");
      assertEquals(await whoAmI(browser, url), 401);
      assert(link.href.includes("token="));
    });

    await t.step("the logs name the SMTP server by host and port, never its password", async () => {
      const logs = await inst.server.logsSettled();
      assertStringIncludes(logs, `127.0.0.1:${smtp.port}`);
      assert(!logs.includes(SMTP_PASSWORD), "the SMTP password is not logged");
      assert(!logs.includes("ana@acme.test"), "nor the addresses mail went to");
      for (const token of tokens) assert(!logs.includes(token), "nor a link's token");
    });
  } finally {
    await inst.close();
    await smtp.close();
  }
});

Deno.test("a link and a code past their lifetime are refused", async () => {
  const TTL_MS = 3000;
  const smtp = await startSmtpCapture();
  const inst = await emailInstallation([
    "--smtp-url",
    smtp.url,
    "--email-code-ttl-ms",
    String(TTL_MS),
  ]);
  try {
    const browser = new WebClient();
    const answer = await askForMail(browser, inst.url, "ana@acme.test");
    const asked = Date.now(); // the records were made before this: they end before asked + TTL
    const { link, code } = signInSecrets((await smtp.waitFor("ana@acme.test")).text);
    const confirm = await browser.request(link);
    assertEquals(confirm.status, 200, "still valid right after the mail");
    await new Promise((r) => setTimeout(r, Math.max(0, asked + TTL_MS + 100 - Date.now())));
    const late = await submitVerify(browser, confirm);
    assertEquals(late.status, 403);
    assertStringIncludes(words(late), "already used or has expired");
    const lateCode = await submitVerify(browser, answer, { code });
    assertEquals(lateCode.status, 403);
    assertEquals(await whoAmI(browser, inst.url), 401);
  } finally {
    await inst.close();
    await smtp.close();
  }
});

Deno.test("without --smtp-url each message is an .eml file in the outbox beside the KV file", async () => {
  const inst = await emailInstallation([]);
  try {
    const outbox = `${inst.dir}/outbox`;
    assertStringIncludes(await inst.server.logsSettled(), outbox, "the outbox is logged at start");
    await askForMail(new WebClient(), inst.url, "ana@acme.test");
    const files = () => {
      try {
        return [...Deno.readDirSync(outbox)].map((e) => e.name).filter((n) => n.endsWith(".eml"));
      } catch {
        return [];
      }
    };
    const end = Date.now() + 10_000;
    while (files().length === 0 && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const [name] = files();
    assert(name, "an .eml file was written");
    assertEquals(Deno.statSync(`${outbox}/${name}`).mode! & 0o777, 0o600);
    const mail = await parseMail(await Deno.readFile(`${outbox}/${name}`));
    assertEquals(mail.to, "ana@acme.test");
    assertEquals(mail.subject, "Sign in to acme on cfgtool");
    const { link } = signInSecrets(mail.text);
    const browser = new WebClient();
    const signed = await submitVerify(browser, await browser.request(link));
    assertEquals(signed.status, 303);
    assertEquals(await whoAmI(browser, inst.url), "ana@acme.test");
  } finally {
    await inst.close();
  }
});

Deno.test("an SMTP server that is down changes nothing in the answer; the failure is logged without the password", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = closed.addr.port;
  closed.close();
  const inst = await emailInstallation([
    "--smtp-url",
    `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`,
  ]);
  try {
    const admitted = await askForMail(new WebClient(), inst.url, "ana@acme.test");
    const outside = await askForMail(new WebClient(), inst.url, "eve@evil.test");
    assertEquals([admitted.status, outside.status], [200, 200]);
    assertEquals(admitted.text, outside.text);
    const end = Date.now() + 15_000;
    while (!inst.server.logs().includes("sign-in mail not sent") && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const logs = await inst.server.logsSettled();
    const failure = logs.split("\n").find((l) => l.includes("sign-in mail not sent"));
    assert(failure, logs);
    assertEquals(JSON.parse(failure).level, "warn");
    assertStringIncludes(failure, `127.0.0.1:${port}`);
    assert(!logs.includes(SMTP_PASSWORD), "the SMTP password is not logged");
  } finally {
    await inst.close();
  }
});
