/**
 * What a person can do on a change request's page, as forms: approve
 * (with an optional comment), reject (a comment is required), apply now,
 * apply at a time (a `datetime-local` field read as UTC), cancel a
 * schedule, withdraw (confirmed with a box), and comment. Only the forms
 * the reader may use are drawn (the `may` of the request's service); each
 * posts to `…/changes/:id/<action>`. Also here: the actions' names, what a
 * refused post sends back to the page, and the reading of the time field.
 *
 * @module
 */
import { InvalidRequestError, NotFoundError } from "../errors.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import type { ChangeRequestPage } from "../services/change_lists.ts";
import { ConfirmCheck, Field } from "./form_fields.tsx";
import type { PageOptions } from "./layout.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Time } from "./widgets.tsx";

/** The actions on a request, by the last segment of their address, with what the page says. */
export const ACTIONS = {
  approve: { verb: "approve", done: "approved" },
  reject: { verb: "reject", done: "rejected" },
  comment: { verb: "comment on", done: "commented" },
  apply: { verb: "apply", done: "applied" },
  schedule: { verb: "schedule", done: "scheduled" },
  "cancel-schedule": { verb: "cancel the schedule of", done: "unscheduled" },
  withdraw: { verb: "withdraw", done: "withdrawn" },
} as const;

/** An action on a request (`POST …/changes/:id/<action>`). */
export type ChangeAction = keyof typeof ACTIONS;

/**
 * The action an address names (404 for another).
 *
 * @param raw the path segment
 * @returns the action
 *
 * @example
 * ```ts
 * import { actionOf } from "./change_request_actions.tsx";
 * if (actionOf("cancel-schedule") !== "cancel-schedule") throw new Error();
 * let status = 0;
 * try { actionOf("merge"); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 404) throw new Error();
 * ```
 */
export function actionOf(raw: string | undefined): ChangeAction {
  if (raw !== undefined && Object.hasOwn(ACTIONS, raw)) return raw as ChangeAction;
  throw new NotFoundError("not_found", `There is no action ${JSON.stringify(raw ?? "")}`);
}

/** A refused action: the request's page shows it again with the problem. */
export interface ActionRefusal {
  action: ChangeAction;
  message: string;
  /** The field the problem is about (`comment`, `text`, `at`, `confirm`), if any. */
  field?: string | undefined;
  status: NonNullable<PageOptions["status"]>;
  /** The posted fields, to fill the form in again. */
  values: ReadonlyMap<string, string>;
}

/**
 * The instant a schedule form asks for: its `datetime-local` value read as
 * UTC (`2026-12-24T09:00` → `2026-12-24T09:00:00Z`); any other text is
 * passed on as typed (the service reads RFC 3339 with a zone and refuses
 * the rest); 400 when empty.
 *
 * @param raw the `at` field
 * @returns the instant as RFC 3339 text
 *
 * @example
 * ```ts
 * import { scheduleInstant } from "./change_request_actions.tsx";
 * if (scheduleInstant("2026-12-24T09:00") !== "2026-12-24T09:00:00Z") throw new Error();
 * if (scheduleInstant("2026-12-24T09:00:30") !== "2026-12-24T09:00:30Z") throw new Error();
 * if (scheduleInstant("2026-12-24T10:00:00+01:00") !== "2026-12-24T10:00:00+01:00") throw new Error();
 * let field = "";
 * try { scheduleInstant(" "); } catch (e) { field = (e as { details: { field: string } }).details.field; }
 * if (field !== "at") throw new Error();
 * ```
 */
export function scheduleInstant(raw: string | undefined): string {
  const text = (raw ?? "").trim();
  if (text === "") {
    throw new InvalidRequestError("Choose the date and time (UTC) to apply the change at", {
      details: { field: "at" },
    });
  }
  const local = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(\.\d{1,3})?)?$/.exec(text);
  if (local === null) return text;
  return `${local[1]}${local[2] ?? ":00"}Z`;
}

/**
 * The actions section of a request's page: a form for each step the
 * reader may take now, or what they can do instead.
 *
 * @param props the namespace, the request's page model, the CSRF token and a refused action
 * @returns the section
 *
 * @example
 * ```tsx ignore
 * <RequestActions tenant="acme" namespace="web" page={page} csrf={csrf} refused={undefined} />
 * ```
 */
export function RequestActions(
  props: {
    tenant: string;
    namespace: string;
    page: ChangeRequestPage;
    csrf: string;
    refused: ActionRefusal | undefined;
  },
) {
  const { page, refused } = props;
  const { may, request: r } = page;
  const action = (a: ChangeAction) => ui.changeAction(props.tenant, props.namespace, r.id, a);
  const kept = (a: ChangeAction, name: string) =>
    refused?.action === a ? refused.values.get(name) ?? "" : "";
  /** The attributes of a field a refusal is about (it points at the alert above). */
  const problem = (a: ChangeAction, field: string) =>
    refused?.action === a && refused.field === field
      ? { "aria-invalid": "true", "aria-describedby": "action-error" }
      : {};
  const csrf = <CsrfField token={props.csrf} />;
  const any = may.apply || may.cancel || may.approve || may.reject || may.withdraw;
  return (
    <section aria-labelledby="actions-heading">
      <h2 id="actions-heading">What you can do</h2>
      {any ? null : (
        <p class="muted">
          {r.status === "open"
            ? "Nothing more than comment: tenant and namespace admins other than its author approve or reject it."
            : r.status === "approved"
            ? "Nothing more than comment: its author or an admin of the namespace applies it."
            : "Nothing more than comment."}
        </p>
      )}
      {may.apply
        ? (
          <div class="card">
            <h3>Apply</h3>
            <form method="post" action={action("apply")}>
              {csrf}
              <p>
                {r.plan === null
                  ? "Applying commits its files on the head as a new version (the files it changes must not have changed there since its base)."
                  : "Applying starts its rollout (or resumes it): the next step now, the rest one interval apart."}
              </p>
              <div class="actions">
                <button type="submit">Apply now</button>
              </div>
            </form>
          </div>
        )
        : null}
      {may.apply
        ? (
          <div class="card">
            <h3>Apply later</h3>
            <form method="post" action={action("schedule")}>
              {csrf}
              <Field
                id="schedule-at"
                label="Apply at (UTC)"
                hint="The time is UTC, not your own time zone: 09:00 means 09:00 UTC. Within a year from now."
              >
                <input
                  id="schedule-at"
                  type="datetime-local"
                  name="at"
                  required
                  value={kept("schedule", "at")}
                  {...problem("schedule", "at")}
                />
              </Field>
              <div class="actions">
                <button type="submit" class="secondary">Schedule</button>
              </div>
            </form>
          </div>
        )
        : null}
      {may.cancel
        ? (
          <div class="card">
            <h3>Schedule</h3>
            <form method="post" action={action("cancel-schedule")}>
              {csrf}
              <p>
                {r.scheduled_at === null ? "It is scheduled." : (
                  <>
                    It applies at <Time iso={r.scheduled_at} />.
                  </>
                )} {r.plan === null
                  ? "Cancelling makes it approved again, to apply later."
                  : "Cancelling stops the rollout after the steps it took; applying it again resumes it."}
              </p>
              <div class="actions">
                <button type="submit" class="secondary">Cancel the schedule</button>
              </div>
            </form>
          </div>
        )
        : null}
      {may.approve || may.reject
        ? (
          <div class="card">
            <h3>Review</h3>
            {may.approve
              ? (
                <form method="post" action={action("approve")}>
                  {csrf}
                  <input type="hidden" name="revision" value={String(r.revision)} />
                  <Field id="approve-comment" label="Comment (optional)">
                    <textarea
                      id="approve-comment"
                      name="comment"
                      class="short"
                      maxlength={MAX_MESSAGE_LENGTH}
                      {...problem("approve", "comment")}
                    >
                      {kept("approve", "comment")}
                    </textarea>
                  </Field>
                  <div class="actions">
                    <button type="submit">Approve</button>
                  </div>
                </form>
              )
              : null}
            {may.reject
              ? (
                <form method="post" action={action("reject")}>
                  {csrf}
                  <input type="hidden" name="revision" value={String(r.revision)} />
                  <Field
                    id="reject-comment"
                    label="Why reject it?"
                    hint="Required: the author reads it. A rejected request is closed."
                  >
                    <textarea
                      id="reject-comment"
                      name="comment"
                      class="short"
                      required
                      maxlength={MAX_MESSAGE_LENGTH}
                      {...problem("reject", "comment")}
                    >
                      {kept("reject", "comment")}
                    </textarea>
                  </Field>
                  <div class="actions">
                    <button type="submit" class="danger">Reject</button>
                  </div>
                </form>
              )
              : null}
          </div>
        )
        : null}
      {may.withdraw
        ? (
          <div class="card">
            <h3>Withdraw</h3>
            <form method="post" action={action("withdraw")}>
              {csrf}
              <ConfirmCheck
                id="withdraw-confirm"
                invalid={refused?.action === "withdraw" && refused.field === "confirm"}
              >
                I understand this closes the request for good
              </ConfirmCheck>
              <div class="actions">
                <button type="submit" class="danger">Withdraw</button>
              </div>
            </form>
          </div>
        )
        : null}
    </section>
  );
}

/**
 * The comment form of a request's page (for who may comment).
 *
 * @param props the namespace, the request's id, the CSRF token and a refused action
 * @returns the form
 *
 * @example
 * ```tsx ignore
 * <CommentForm tenant="acme" namespace="web" id={id} csrf={csrf} refused={undefined} />
 * ```
 */
export function CommentForm(
  props: {
    tenant: string;
    namespace: string;
    id: string;
    csrf: string;
    refused: ActionRefusal | undefined;
  },
) {
  const refused = props.refused?.action === "comment" ? props.refused : undefined;
  return (
    <form
      method="post"
      action={ui.changeAction(props.tenant, props.namespace, props.id, "comment")}
    >
      <CsrfField token={props.csrf} />
      <Field id="comment-text" label="Add a comment">
        <textarea
          id="comment-text"
          name="text"
          class="short"
          required
          maxlength={MAX_MESSAGE_LENGTH}
          {...(refused?.field === "comment"
            ? { "aria-invalid": "true", "aria-describedby": "action-error" }
            : {})}
        >
          {refused?.values.get("text") ?? ""}
        </textarea>
      </Field>
      <div class="actions">
        <button type="submit" class="secondary">Comment</button>
      </div>
    </form>
  );
}
