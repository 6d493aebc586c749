/**
 * The part of nodemailer's API that lib/login/mailer.ts uses, typed
 * here rather than through `@types/nodemailer`: that package pulls in the
 * newest `@types/node`, whose `node:assert` and `node:crypto` types replace
 * Deno's own for the whole program and break type-checking elsewhere.
 *
 * @module
 */

/** A message as nodemailer takes it. */
export interface SendMailOptions {
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string;
}

/** What `sendMail` resolves to (SMTP and stream transports). */
export interface SentMessageInfo {
  messageId: string;
  /** The raw RFC 5322 message (stream transport with `buffer: true`). */
  message?: Uint8Array;
}

/** A transport. */
export interface Transporter {
  sendMail(message: SendMailOptions): Promise<SentMessageInfo>;
  close(): void;
}

/** Options of an SMTP transport given with a URL, or of the stream transport. */
export interface TransportOptions {
  /** `smtp://…` or `smtps://…`; the other keys apply where the URL does not set them. */
  url?: string;
  streamTransport?: boolean;
  buffer?: boolean;
  newline?: "windows" | "unix";
  connectionTimeout?: number;
  greetingTimeout?: number;
  socketTimeout?: number;
}

/** The default export. */
declare const nodemailer: {
  createTransport(transport: string | TransportOptions): Transporter;
};
export default nodemailer;
