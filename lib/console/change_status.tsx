/**
 * The statuses of change requests as the console shows them: a badge per
 * status (in words, not colour alone), what each status means for the
 * person reading the request, the status filter of the Changes page
 * (`?status=`, with `pending` for every status that may still land) and
 * the short text of a request's approvals.
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import type { ChangeRequestRecord, ChangeStatus } from "../services/changes.ts";
import { PENDING_STATUSES } from "../services/change_lists.ts";

/** What each status means, in a sentence. */
export const STATUS_MEANING: Readonly<Record<ChangeStatus, string>> = {
  open: "Open: waiting for approvals",
  approved: "Approved: ready to apply",
  scheduled: "Scheduled: it applies by itself at its time",
  applied: "Applied: a version holds it",
  rejected: "Rejected: it will not be applied",
  withdrawn: "Withdrawn by its author",
  failed: "Failed: its scheduled apply could not commit",
};

const BADGE_CLASS: Readonly<Record<ChangeStatus, string>> = {
  open: "badge warn",
  approved: "badge on",
  scheduled: "badge warn",
  applied: "badge on",
  rejected: "badge off",
  withdrawn: "badge",
  failed: "badge off",
};

/**
 * A request's status as a badge (its name in words).
 *
 * @example
 * ```tsx
 * import { StatusBadge } from "./change_status.tsx";
 * const html = String(await (<StatusBadge status="rejected" />));
 * if (html !== '<span class="badge off">rejected</span>') throw new Error(html);
 * ```
 */
export function StatusBadge(props: { status: ChangeStatus }) {
  return <span class={BADGE_CLASS[props.status]}>{props.status}</span>;
}

/** The choices of the Changes page's status filter (`?status=`); none: every status. */
export const STATUS_FILTERS = {
  pending: "Pending (open, approved or scheduled)",
  open: "Open",
  approved: "Approved",
  scheduled: "Scheduled",
  applied: "Applied",
  rejected: "Rejected",
  withdrawn: "Withdrawn",
  failed: "Failed",
} as const;

/** A `?status=` value. */
export type StatusFilter = keyof typeof STATUS_FILTERS;

/**
 * The statuses a `?status=` filter lists (undefined: every status); 400
 * for a filter that is not one.
 *
 * @param raw the query parameter
 * @returns the filter and its statuses
 *
 * @example
 * ```ts
 * import { statusFilterOf } from "./change_status.tsx";
 * if (statusFilterOf("pending").statuses?.join() !== "open,approved,scheduled") throw new Error();
 * if (statusFilterOf(undefined).statuses !== undefined || statusFilterOf("").filter !== undefined) throw new Error();
 * let status = 0;
 * try { statusFilterOf("merged"); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 400) throw new Error();
 * ```
 */
export function statusFilterOf(
  raw: string | undefined,
): { filter: StatusFilter | undefined; statuses: readonly ChangeStatus[] | undefined } {
  if (raw === undefined || raw === "") return { filter: undefined, statuses: undefined };
  if (!Object.hasOwn(STATUS_FILTERS, raw)) {
    throw new InvalidRequestError(
      `status must be one of ${Object.keys(STATUS_FILTERS).join(", ")}, not ${
        JSON.stringify(raw.slice(0, 40))
      }`,
      { details: { field: "status" } },
    );
  }
  const filter = raw as StatusFilter;
  return { filter, statuses: filter === "pending" ? PENDING_STATUSES : [filter] };
}

/**
 * A request's approvals as `given/needed`.
 *
 * @param r the request
 * @returns the text
 *
 * @example
 * ```ts
 * import { approvalsText } from "./change_status.tsx";
 * const r = { approvals: [{ user_id: "u", email: null, at: "" }], required_approvals: 2 };
 * if (approvalsText(r) !== "1/2") throw new Error();
 * ```
 */
export function approvalsText(
  r: Pick<ChangeRequestRecord, "approvals" | "required_approvals">,
): string {
  return `${r.approvals.length}/${r.required_approvals}`;
}

/**
 * "1 approval", "2 approvals".
 *
 * @param n how many
 * @returns the words
 *
 * @example
 * ```ts
 * import { approvals } from "./change_status.tsx";
 * if (approvals(1) !== "1 approval" || approvals(0) !== "0 approvals") throw new Error();
 * ```
 */
export function approvals(n: number): string {
  return `${n} approval${n === 1 ? "" : "s"}`;
}
