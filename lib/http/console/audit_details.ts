/**
 * The short line an audit entry's `details` becomes in the audit table:
 * the facts a reader looks for first (a version, a message, a reason, the
 * sign-in method…), as `name: value` pairs; the whole entry is shown as
 * JSON next to it.
 *
 * @module
 */

/** The detail fields worth a place in the summary, in the order shown. */
const SUMMARY_FIELDS: readonly string[] = [
  "version",
  "message",
  "reason",
  "method",
  "previous_method",
  "client",
  "email_domain",
  "new_user",
];

/** Longest value shown in the summary (longer ones are cut with `…`). */
const MAX_VALUE = 80;

/**
 * Summarises an entry's details: the known fields that are present, as
 * `name: value`, joined with ` · ` (values cut to 80 characters).
 *
 * @param details the entry's `details`
 * @returns the summary ("" when none of the fields is there)
 *
 * @example
 * ```ts
 * import { detailsSummary } from "./audit_details.ts";
 * const s = detailsSummary({ session_id: "ssn_1", client: "browser", method: "email", new_user: true });
 * if (s !== "method: email · client: browser · new_user: true") throw new Error(s);
 * if (detailsSummary({}) !== "") throw new Error();
 * ```
 */
export function detailsSummary(details: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const field of SUMMARY_FIELDS) {
    const v = details[field];
    if (v === undefined || v === null) continue;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    parts.push(`${field}: ${text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text}`);
  }
  return parts.join(" · ");
}
