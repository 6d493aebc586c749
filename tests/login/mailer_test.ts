/**
 * Sign-in mail (lib/login/mailer.ts): what the message says, and the
 * outbox that takes it when there is no SMTP server (one RFC 5322 `.eml`
 * file a message, readable by the owner only).
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import {
  createMailer,
  DEFAULT_MAIL_FROM,
  signInMessage,
  smtpTarget,
} from "../../lib/login/mailer.ts";
import { parseMail } from "../e2e/smtp_capture.ts";

const FACTS = {
  tenant: "acme",
  link: "http://127.0.0.1:8080/auth/email/verify?token=4kQz9",
  code: "042917",
  minutes: 15,
};

Deno.test("the sign-in message names the tenant, gives link and code, their lifetime, and says it can be ignored", () => {
  const m = signInMessage("ana@acme.test", FACTS);
  assertEquals(m.to, "ana@acme.test");
  assertEquals(m.subject, "Sign in to acme on cfgtool");
  assertStringIncludes(m.text, FACTS.link);
  assertStringIncludes(m.text, "042917");
  assertStringIncludes(m.text, "15 minutes");
  assertStringIncludes(m.text, "you can ignore this mail");
  assertStringIncludes(m.html ?? "", `href="${FACTS.link}"`);
});

Deno.test("the HTML part escapes what it shows", () => {
  const m = signInMessage("a@b.test", { ...FACTS, tenant: "<b>x</b>" });
  assert(!(m.html ?? "").includes("<b>x</b>"));
});

Deno.test("the outbox writes one .eml file a message, mode 0600, that a mail parser reads back", async () => {
  const root = await Deno.makeTempDir();
  try {
    const outboxDir = `${root}/data/outbox`;
    const mailer = createMailer({ outboxDir, from: DEFAULT_MAIL_FROM });
    assertEquals(mailer.describe, `outbox ${outboxDir}`);
    const sent = await mailer.send(signInMessage("ana@acme.test", FACTS));
    assert(sent.path?.startsWith(`${outboxDir}/`) && sent.path.endsWith(".eml"), sent.path);
    const names = [...Deno.readDirSync(outboxDir)].map((e) => e.name);
    assertEquals(names, [sent.path!.slice(outboxDir.length + 1)], "no partial file left");
    assertEquals(Deno.statSync(sent.path!).mode! & 0o777, 0o600);
    assertEquals(Deno.statSync(outboxDir).mode! & 0o777, 0o700);
    const raw = await Deno.readFile(sent.path!);
    assertStringIncludes(new TextDecoder().decode(raw), "\r\n", "CRLF line ends");
    const parsed = await parseMail(raw);
    assertEquals(parsed.subject, "Sign in to acme on cfgtool");
    assertEquals(parsed.from, `"cfgtool" <no-reply@localhost>`, DEFAULT_MAIL_FROM);
    assertStringIncludes(parsed.text ?? "", "042917");
    assertEquals(parsed.messageId, sent.messageId);
    await mailer.send(signInMessage("bob@acme.test", FACTS));
    assertEquals([...Deno.readDirSync(outboxDir)].length, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("an SMTP URL is described by host and port only, never its password", () => {
  const mailer = createMailer({ smtpUrl: "smtp://ana:hunter2@127.0.0.1:2525", from: "x@y.test" });
  assertEquals(mailer.describe, "smtp 127.0.0.1:2525");
  assertEquals(smtpTarget("smtps://u:p@mail.example"), "mail.example:465");
  assertEquals(smtpTarget("not a url"), "(unreadable SMTP URL)");
});

Deno.test("a mailer needs somewhere to send", () => {
  assertThrows(() => createMailer({ from: "x@y.test" }), TypeError);
});
