/**
 * Test helper: a real SMTP server on loopback (npm `smtp-server`) that
 * accepts every message (with or without AUTH, no TLS) and keeps it, parsed
 * with npm `mailparser`, for a test to read: the sign-in link and code of
 * a cfgtool sign-in message included.
 *
 * @module
 */
import { SMTPServer } from "npm:smtp-server@^3.21.6";
import { simpleParser } from "npm:mailparser@^3.14.2";
import { Buffer } from "node:buffer";

/** One message the server accepted. */
export interface CapturedMail {
  /** The SMTP envelope recipients (`RCPT TO`). */
  rcptTo: string[];
  /** The SMTP envelope sender (`MAIL FROM`). */
  mailFrom: string;
  /** The user name the client authenticated with, if it did. */
  user: string | null;
  /** The raw message, as sent. */
  raw: Uint8Array;
  /** The `From` header as text. */
  from: string;
  /** The `To` header as text. */
  to: string;
  /** The subject. */
  subject: string;
  /** The plain-text part. */
  text: string;
  /** The HTML part, if any. */
  html: string | null;
}

/** A running capture server. */
export interface SmtpCapture {
  /** `smtp://127.0.0.1:<port>`. */
  url: string;
  /** Its port. */
  port: number;
  /** Every message accepted so far, in order. */
  readonly messages: readonly CapturedMail[];
  /** The messages to an address (case-insensitive). */
  to(address: string): CapturedMail[];
  /** Resolves with the `n`-th (1-based) message to `address`, waiting up to `timeoutMs`. */
  waitFor(address: string, n?: number, timeoutMs?: number): Promise<CapturedMail>;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * Starts a capture server on a free loopback port.
 *
 * @example
 * ```ts ignore
 * const smtp = await startSmtpCapture();
 * const server = await startServer({ args: ["--smtp-url", smtp.url] });
 * const mail = await smtp.waitFor("ana@acme.test");
 * await smtp.close();
 * ```
 */
export async function startSmtpCapture(): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const changed = new Set<() => void>();
  const server = new SMTPServer({
    logger: false,
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    allowInsecureAuth: true,
    onAuth(auth, _session, callback) {
      callback(null, { user: auth.username ?? "anonymous" });
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      stream.on("error", (err: Error) => callback(err));
      stream.on("end", async () => {
        try {
          const raw = concat(chunks);
          const parsed = await parseMail(raw);
          messages.push({
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            user: typeof session.user === "string" ? session.user : null,
            raw,
            ...parsed,
          });
          for (const wake of changed) wake();
          callback();
        } catch (err) {
          callback(err as Error);
        }
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;
  const to = (address: string) =>
    messages.filter((m) => m.rcptTo.some((r) => r.toLowerCase() === address.toLowerCase()));
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    to,
    waitFor(address, n = 1, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = to(address)[n - 1];
          if (found === undefined) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`no message #${n} to ${address} in ${timeoutMs} ms`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          changed.delete(check);
        };
        changed.add(check);
        check();
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** What {@linkcode parseMail} reads from a raw message. */
export interface ParsedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  messageId: string | null;
}

/**
 * Parses a raw RFC 5322 message with mailparser.
 *
 * @example
 * ```ts
 * import { parseMail } from "./smtp_capture.ts";
 * const raw = new TextEncoder().encode("From: a@b.test\r\nTo: c@d.test\r\nSubject: Hi\r\n\r\nhello\r\n");
 * const mail = await parseMail(raw);
 * if (mail.subject !== "Hi" || mail.text.trim() !== "hello") throw new Error(JSON.stringify(mail));
 * ```
 */
export async function parseMail(raw: Uint8Array): Promise<ParsedMail> {
  const parsed = await simpleParser(Buffer.from(raw));
  const address = (a: typeof parsed.to) =>
    a === undefined ? "" : Array.isArray(a) ? a.map((x) => x.text).join(", ") : a.text;
  return {
    from: address(parsed.from),
    to: address(parsed.to),
    subject: parsed.subject ?? "",
    text: parsed.text ?? "",
    html: typeof parsed.html === "string" ? parsed.html : null,
    messageId: parsed.messageId ?? null,
  };
}

/**
 * The sign-in link and 6-digit code of a cfgtool sign-in message.
 *
 * @example
 * ```ts
 * import { signInSecrets } from "./smtp_capture.ts";
 * const s = signInSecrets("Open:\n\nhttp://h/auth/email/verify?token=abc\n\nOr type this code on the sign-in page: 012345\n");
 * if (s.link.href !== "http://h/auth/email/verify?token=abc" || s.code !== "012345") throw new Error();
 * ```
 */
export function signInSecrets(text: string): { link: URL; code: string } {
  const link = text.match(/https?:\/\/\S+\/auth\/email\/verify\?token=\S+/)?.[0];
  const code = text.match(/code on the sign-in page: (\d{6})/)?.[1];
  if (link === undefined || code === undefined) throw new Error(`no link or code in:\n${text}`);
  return { link: new URL(link), code };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
