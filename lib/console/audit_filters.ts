/**
 * The filters of the console's audit log page, read from its GET form:
 * the event type, the actor (an id or an email), the namespace, a time
 * window in UTC (`datetime-local` fields), the page size and the paging
 * cursor. Parsing keeps what the person typed, so a refused value is
 * shown again with the reason next to it.
 *
 * @module
 */
import { AUDIT_EVENT_TYPES, type AuditLogFilter } from "../services/audit.ts";
import { SHAPES } from "../http/params.ts";

/**
 * The event types the audit log holds (docs/api.md, "Audit"), for the type
 * field's suggestions: the store's list, control-plane changes first.
 */
export { AUDIT_EVENT_TYPES };

/** Page size when the page names none. */
export const AUDIT_PAGE_SIZE = 50;

/** Largest page size the page accepts. */
export const AUDIT_MAX_PAGE_SIZE = 100;

/** The audit page's query fields as typed ("" when absent). */
export interface AuditFilterInput {
  type: string;
  actor: string;
  namespace: string;
  from: string;
  to: string;
  after: string;
  limit: string;
}

/** The filters once checked: what `tenantAuditLog` (lib/services/audit.ts) reads with. */
export type AuditFilter = AuditLogFilter;

/** A refused field and why. */
export interface FilterProblem {
  field: keyof AuditFilterInput;
  message: string;
}

const FIELDS: readonly (keyof AuditFilterInput)[] = [
  "type",
  "actor",
  "namespace",
  "from",
  "to",
  "after",
  "limit",
];

/**
 * The audit page's query fields as typed, each trimmed and cut to 320
 * characters ("" when absent).
 *
 * @param query the request's query parameters
 * @returns the fields
 *
 * @example
 * ```ts
 * import { auditFilterInput } from "./audit_filters.ts";
 * const input = auditFilterInput({ type: " token.created ", page: "x" });
 * if (input.type !== "token.created" || input.actor !== "") throw new Error();
 * ```
 */
export function auditFilterInput(query: Record<string, string | undefined>): AuditFilterInput {
  const out = {} as AuditFilterInput;
  for (const f of FIELDS) out[f] = (query[f] ?? "").trim().slice(0, 320);
  return out;
}

/** `datetime-local` text: a date and a time to the minute, second or millisecond. */
const LOCAL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;

/**
 * Reads a `datetime-local` value as a UTC instant, and the end of the
 * minute (or second, or millisecond) it names, so that "to 10:05" takes
 * in everything up to 10:05:59.999.
 *
 * @param text the field's value (`2026-11-24T06:00`, seconds optional)
 * @returns the instant and the exclusive end of its precision, in epoch ms; null when not such a value
 *
 * @example
 * ```ts
 * import { utcFieldTime } from "./audit_filters.ts";
 * const t = utcFieldTime("2026-11-24T06:00");
 * if (t?.start !== Date.UTC(2026, 10, 24, 6, 0) || t.end !== t.start + 60_000) throw new Error();
 * if (utcFieldTime("2026-11-24T06:00:30")?.end !== Date.UTC(2026, 10, 24, 6, 0, 31)) throw new Error();
 * if (utcFieldTime("yesterday") !== null || utcFieldTime("2026-02-30T00:00") !== null) throw new Error();
 * ```
 */
export function utcFieldTime(text: string): { start: number; end: number } | null {
  const m = LOCAL_TIME.exec(text);
  if (m === null) return null;
  const [y, mo, d, h, mi] = m.slice(1, 6).map(Number) as [number, number, number, number, number];
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, "0"));
  const start = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(start);
  if (
    back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d ||
    h > 23 || mi > 59 || s > 59
  ) {
    return null;
  }
  const step = m[7] !== undefined ? 1 : m[6] !== undefined ? 1000 : 60_000;
  return { start, end: start + step };
}

/**
 * Checks the typed fields: the type and namespace have the API's shapes,
 * the times are `datetime-local` values (read as UTC) with `from` before
 * `to`, the page size is 1 to {@linkcode AUDIT_MAX_PAGE_SIZE}, and the
 * cursor is an audit entry id. Each refused field is a problem; the
 * filter leaves it out.
 *
 * @param input the fields as typed
 * @returns the filter and the problems
 *
 * @example
 * ```ts
 * import { auditFilterInput, parseAuditFilter } from "./audit_filters.ts";
 * const ok = parseAuditFilter(auditFilterInput({ type: "token.created", from: "2026-01-01T00:00", limit: "5" }));
 * if (ok.problems.length !== 0 || ok.filter.limit !== 5 || ok.filter.from !== Date.UTC(2026, 0, 1)) throw new Error();
 * const bad = parseAuditFilter(auditFilterInput({ type: "No Such!", limit: "900" }));
 * if (bad.problems.map((p) => p.field).join() !== "type,limit" || bad.filter.type !== undefined) throw new Error();
 * ```
 */
export function parseAuditFilter(
  input: AuditFilterInput,
): { filter: AuditFilter; problems: FilterProblem[] } {
  const problems: FilterProblem[] = [];
  const filter: AuditFilter = { limit: AUDIT_PAGE_SIZE };
  const shaped = (field: "type" | "namespace" | "after", pattern: RegExp, message: string) => {
    if (input[field] === "") return;
    if (pattern.test(input[field])) filter[field] = input[field];
    else problems.push({ field, message });
  };
  shaped("type", SHAPES.eventType.pattern, "An event type looks like token.created");
  shaped("namespace", SHAPES.slug.pattern, "Choose a namespace of the list");
  shaped("after", SHAPES.auditId.pattern, "This page link is broken: start from the newest");
  if (input.actor !== "") filter.actor = input.actor;
  for (const field of ["from", "to"] as const) {
    if (input[field] === "") continue;
    const t = utcFieldTime(input[field]);
    if (t === null) {
      problems.push({ field, message: "Give a date and time such as 2026-11-24T06:00 (UTC)" });
    } else {
      filter[field] = field === "from" ? t.start : t.end;
    }
  }
  if (filter.from !== undefined && filter.to !== undefined && filter.from >= filter.to) {
    problems.push({ field: "to", message: "The end of the window must come after its start" });
    delete filter.to;
  }
  if (input.limit !== "") {
    const n = /^\d{1,4}$/.test(input.limit) ? Number(input.limit) : NaN;
    if (n >= 1 && n <= AUDIT_MAX_PAGE_SIZE) filter.limit = n;
    else {
      problems.push({
        field: "limit",
        message: `Show 1 to ${AUDIT_MAX_PAGE_SIZE} entries a page`,
      });
    }
  }
  return { filter, problems };
}

/**
 * The query of an audit page link that keeps the person's filters (as
 * typed) and moves to another page: `after` is the cursor, or undefined
 * for the newest entries.
 *
 * @param input the fields as typed
 * @param after the cursor of the page to link to
 * @returns the query parameters (empty ones are left out of the link)
 *
 * @example
 * ```ts
 * import { auditFilterInput, auditLinkQuery } from "./audit_filters.ts";
 * const q = auditLinkQuery(auditFilterInput({ type: "token.created", after: "01J" }), "01K");
 * if (q.type !== "token.created" || q.after !== "01K" || q.actor !== "") throw new Error();
 * ```
 */
export function auditLinkQuery(
  input: AuditFilterInput,
  after: string | undefined,
): Record<string, string | undefined> {
  return { ...input, after };
}
