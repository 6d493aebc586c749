/**
 * The short line an audit entry's `details` becomes in the audit table:
 * the facts a reader looks for first (a version and what it rolled back
 * to, a message, a file count, a reason, the sign-in method…), as
 * `name: value` pairs; the whole entry is shown as JSON next to it.
 *
 * @module
 */

/** The detail fields worth a place in the summary, in the order shown. */
const SUMMARY_FIELDS: readonly string[] = [
  "version",
  "rolled_back_to",
  "message",
  "file_count",
  "description",
  "reason",
  "method",
  "previous_method",
  "client",
  "email_domain",
  "new_user",
];

/** Readable names of the fields whose own name reads badly. */
const LABELS: Readonly<Record<string, string>> = {
  rolled_back_to: "rolled back to",
  file_count: "files",
};

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
 * const back = detailsSummary({ version: 5, rolled_back_to: 2, message: "undo", file_count: 3 });
 * if (back !== "version: 5 · rolled back to: 2 · message: undo · files: 3") throw new Error(back);
 * if (detailsSummary({}) !== "") throw new Error();
 * ```
 */
export function detailsSummary(details: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const field of SUMMARY_FIELDS) {
    const v = details[field];
    if (v === undefined || v === null) continue;
    const text = typeof v === "string" ? v : JSON.stringify(v);
    const shown = text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
    parts.push(`${LABELS[field] ?? field}: ${shown}`);
  }
  return parts.join(" · ");
}
