/**
 * nodemailer, behind one function so lib/login/mailer.ts can load it
 * on the first message rather than at server start (it is about 100 ms of
 * module loading that most servers never need). Typed by the local
 * nodemailer.d.ts (see there why not `@types/nodemailer`).
 *
 * @module
 */
// @ts-types="./nodemailer.d.ts"
import nodemailer from "nodemailer";
import type { Transporter, TransportOptions } from "./nodemailer.d.ts";

/**
 * A nodemailer transport: SMTP (`url`) or the stream transport that builds
 * the raw message.
 *
 * @param options transport options
 * @returns the transport
 *
 * @example
 * ```ts
 * import { createTransport } from "./nodemailer_transport.ts";
 * const t = createTransport({ streamTransport: true, buffer: true, newline: "windows" });
 * const info = await t.sendMail({ from: "a@b.test", to: "c@d.test", subject: "Hi", text: "x" });
 * if (!new TextDecoder().decode(info.message).includes("Subject: Hi")) throw new Error();
 * ```
 */
export function createTransport(options: TransportOptions): Transporter {
  return nodemailer.createTransport(options);
}
