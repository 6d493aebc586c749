/**
 * Sending sign-in mail: the message a person gets (a link and a 6-digit
 * code, plain text with a simple HTML part), and the two ways it leaves the
 * server, both through nodemailer: an SMTP server (`--smtp-url`), or, when
 * there is none, an RFC 5322 `.eml` file written to an outbox directory
 * (mode 0600 in a 0700 directory: the files hold live codes) for an
 * operator or a developer to open.
 *
 * @module
 */
import type { Transporter, TransportOptions } from "./nodemailer.d.ts";

/** The From address when none is configured. */
export const DEFAULT_MAIL_FROM = "cfgtool <no-reply@localhost>";

/** Where mail goes (the shape of `AppDeps.mail`). */
export interface MailerOptions {
  /** `smtp://[user:pass@]host[:port]` or `smtps://…`; absent: write to `outboxDir`. */
  smtpUrl?: string;
  /** Directory of `.eml` files, used when there is no SMTP URL. */
  outboxDir?: string;
  /** The From address. */
  from: string;
}

/** One message, ready to send. */
export interface MailMessage {
  /** The recipient. */
  to: string;
  /** The subject line. */
  subject: string;
  /** The plain-text body. */
  text: string;
  /** An HTML alternative, if any. */
  html?: string;
}

/** What became of a sent message. */
export interface SentMail {
  /** The Message-ID header nodemailer gave it. */
  messageId: string;
  /** The `.eml` file, in outbox mode. */
  path?: string;
}

/** Sends messages one way (SMTP or outbox). */
export interface Mailer {
  /** How mail leaves, for logs: `smtp host:port` or `outbox <dir>` (never a password). */
  readonly describe: string;
  /** Sends one message. */
  send(message: MailMessage): Promise<SentMail>;
}

/** What a sign-in message says. */
export interface SignInMailFacts {
  /** The tenant the person signs in to. */
  tenant: string;
  /** The confirm link (`<origin>/auth/email/verify?token=…`). */
  link: string;
  /** The 6-digit code. */
  code: string;
  /** How long link and code work, in minutes. */
  minutes: number;
}

/**
 * The sign-in message for one address: subject "Sign in to <tenant> on
 * cfgtool", the link, the code, how long they work, and that the person may
 * ignore the mail if they did not ask for it.
 *
 * @param to the recipient
 * @param facts tenant, link, code and lifetime
 * @returns the message
 *
 * @example
 * ```ts
 * import { signInMessage } from "./mailer.ts";
 * const m = signInMessage("ana@acme.test", {
 *   tenant: "acme", link: "https://flags.example/auth/email/verify?token=t", code: "123456", minutes: 15,
 * });
 * if (m.subject !== "Sign in to acme on cfgtool") throw new Error(m.subject);
 * if (!m.text.includes("123456") || !m.text.includes("15 minutes")) throw new Error(m.text);
 * ```
 */
export function signInMessage(to: string, facts: SignInMailFacts): MailMessage {
  const lifetime = facts.minutes === 1 ? "1 minute" : `${facts.minutes} minutes`;
  const text = [
    `Someone (we hope you) asked to sign in to ${facts.tenant} on cfgtool with this address.`,
    "",
    "Open this link to sign in:",
    "",
    facts.link,
    "",
    `Or type this code on the sign-in page: ${facts.code}`,
    "",
    `The link and the code work once, for ${lifetime}.`,
    "If you did not ask to sign in, you can ignore this mail: nothing happens without the link " +
    "or the code.",
    "",
  ].join("\n");
  const html = `<!doctype html>
<html lang="en"><body>
<p>Someone (we hope you) asked to sign in to <strong>${escapeHtml(facts.tenant)}</strong>
on cfgtool with this address.</p>
<p><a href="${escapeHtml(facts.link)}">Sign in to ${escapeHtml(facts.tenant)}</a></p>
<p>Or type this code on the sign-in page: <strong>${escapeHtml(facts.code)}</strong></p>
<p>The link and the code work once, for ${lifetime}.</p>
<p>If you did not ask to sign in, you can ignore this mail: nothing happens without the link
or the code.</p>
</body></html>
`;
  return { to, subject: `Sign in to ${facts.tenant} on cfgtool`, text, html };
}

/**
 * The mailer for the options: SMTP when `smtpUrl` is set, else the outbox
 * directory (created on first use). Each SMTP message opens its own
 * connection (no pool to keep alive between sign-ins).
 *
 * @param options SMTP URL or outbox directory, and the From address
 * @returns the mailer
 *
 * @example
 * ```ts
 * import { createMailer } from "./mailer.ts";
 * const outboxDir = await Deno.makeTempDir();
 * const mailer = createMailer({ outboxDir, from: "cfgtool <no-reply@localhost>" });
 * const sent = await mailer.send({ to: "ana@acme.test", subject: "Hi", text: "hello" });
 * const raw = await Deno.readTextFile(sent.path!);
 * if (!raw.includes("Subject: Hi") || !sent.path!.endsWith(".eml")) throw new Error(raw);
 * await Deno.remove(outboxDir, { recursive: true });
 * ```
 */
export function createMailer(options: MailerOptions): Mailer {
  if (options.smtpUrl) return smtpMailer(options.smtpUrl, options.from);
  if (options.outboxDir) return outboxMailer(options.outboxDir, options.from);
  throw new TypeError("a mailer needs an SMTP URL or an outbox directory");
}

/** Sends through an SMTP server. */
function smtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = lazyTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    describe: `smtp ${smtpTarget(smtpUrl)}`,
    async send(message) {
      const info = await (await transport()).sendMail({ from, ...message });
      return { messageId: String(info.messageId) };
    },
  };
}

/** Writes each message as an `.eml` file (CRLF line ends, as RFC 5322 has them). */
function outboxMailer(dir: string, from: string): Mailer {
  const transport = lazyTransport({ streamTransport: true, buffer: true, newline: "windows" });
  return {
    describe: `outbox ${dir}`,
    async send(message) {
      const info = await (await transport()).sendMail({ from, ...message });
      const raw = info.message;
      if (raw === undefined) throw new Error("nodemailer built no message");
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      const stamp = new Date().toISOString().replace(/[:.]/g, "-");
      const path = `${dir}/${stamp}-${crypto.randomUUID()}.eml`;
      // Written under a temporary name and renamed: a reader never sees half a message.
      const partial = `${path}.partial`;
      await Deno.writeFile(partial, raw, { mode: 0o600, createNew: true });
      await Deno.rename(partial, path);
      return { messageId: String(info.messageId), path };
    },
  };
}

/**
 * The `host:port` of an SMTP URL, for logs (its user and password left
 * out; the port nodemailer would use when the URL has none).
 *
 * @param smtpUrl the URL
 * @returns `host:port`
 *
 * @example
 * ```ts
 * import { smtpTarget } from "./mailer.ts";
 * if (smtpTarget("smtp://ana:s3cret@mail.example:2525") !== "mail.example:2525") throw new Error();
 * if (smtpTarget("smtps://mail.example") !== "mail.example:465") throw new Error();
 * if (smtpTarget("smtp://mail.example") !== "mail.example:587") throw new Error();
 * ```
 */
export function smtpTarget(smtpUrl: string): string {
  try {
    const url = new URL(smtpUrl);
    const port = url.port || (url.protocol === "smtps:" ? "465" : "587");
    return `${url.hostname}:${port}`;
  } catch {
    return "(unreadable SMTP URL)";
  }
}

/** A transport made on first use: nodemailer loads with the first message, not at start. */
function lazyTransport(options: TransportOptions): () => Promise<Transporter> {
  let made: Promise<Transporter> | undefined;
  return () => made ??= import("./nodemailer_transport.ts").then((m) => m.createTransport(options));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
