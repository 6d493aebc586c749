/**
 * The rollback form of a version's page: why roll back (a required
 * message) and a confirmation that a new version whose files equal this
 * one is made; what a failed post of it sends back to the page (the
 * inputs kept, the problems listed, or, when the rollback affects a
 * protected environment, the environments and the approvals they need with
 * a button that proposes the rollback for review); and the check of those
 * inputs.
 *
 * @module
 */
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import type { Head, VersionMeta } from "../services/versions.ts";
import { ConfirmCheck, confirmed, Field } from "./form_fields.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Notice } from "./widgets.tsx";

/** What a rollback form sent, and what is wrong with it. */
export interface RollbackInput {
  /** The message as typed. */
  message: string;
  confirmed: boolean;
  /** Empty when the rollback may go ahead. */
  problems: string[];
  /** Set when the rollback was refused: it affects protected environments. */
  approval?: { environments: string[]; required: number };
}

/**
 * The inputs of a rollback form to version `v`, and what is wrong with
 * them: a message is required (at most the store's length), and the box
 * must be ticked.
 *
 * @param form the posted fields
 * @param v the version rolled back to
 * @returns the inputs and their problems
 *
 * @example
 * ```ts
 * import { rollbackInput } from "./rollback_form.tsx";
 * const ok = rollbackInput(new Map([["message", "back"], ["confirm", "yes"]]), 3);
 * if (ok.problems.length !== 0) throw new Error();
 * const bad = rollbackInput(new Map([["message", " "]]), 3);
 * if (bad.problems.length !== 2 || bad.confirmed) throw new Error();
 * ```
 */
export function rollbackInput(form: ReadonlyMap<string, string>, v: number): RollbackInput {
  const raw = form.get("message") ?? "";
  const message = raw.trim();
  const confirm = confirmed(form);
  const problems: string[] = [];
  if (message === "") problems.push("Say why you roll back: the message is required.");
  if (message.length > MAX_MESSAGE_LENGTH) {
    problems.push(
      `The message is ${message.length} characters long; the limit is ${MAX_MESSAGE_LENGTH}.`,
    );
  }
  if (!confirm) {
    problems.push(
      `Tick the box to confirm that a new version whose files equal version ${v} is made.`,
    );
  }
  return { message: raw, confirmed: confirm, problems };
}

/**
 * The rollback section of a version's page: the form, or why there is
 * nothing to roll back (the version has the head's files); with `input`,
 * the failed post's inputs and problems.
 *
 * @param props the namespace, the version, the head, the CSRF token and a failed post's inputs
 * @returns the section
 *
 * @example
 * ```tsx ignore
 * <RollbackSection tenant="acme" namespace="web" meta={meta} head={head} csrf={csrf} input={undefined} />
 * ```
 */
export function RollbackSection(
  props: {
    tenant: string;
    namespace: string;
    meta: VersionMeta;
    head: Head;
    csrf: string;
    input: RollbackInput | undefined;
  },
) {
  const { tenant, namespace, meta, head, input } = props;
  const v = meta.version;
  return (
    <section class="card" aria-labelledby="rollback-heading">
      <h2 id="rollback-heading">Roll back to version {v}</h2>
      {meta.closure_hash === head.closure_hash
        ? (
          <p>
            Version {v} has the same files as the head (version{" "}
            {head.version}): there is nothing to roll back.
          </p>
        )
        : (
          <>
            <p>
              A rollback makes a new version (version {head.version + 1}) whose files equal version
              {" "}
              {v}; every evaluation then serves it. {v + 1 === head.version
                ? `Version ${head.version} stays in the history, and you can roll forward to it`
                : `Versions ${v + 1} to ${head.version} stay in the history, and you can roll ` +
                  "forward to any of them"} the same way.
            </p>
            {input === undefined || input.problems.length === 0 ? null : (
              <Notice kind="error">
                <ul>
                  {input.problems.map((p) => <li>{p}</li>)}
                </ul>
              </Notice>
            )}
            {input?.approval === undefined ? null : (
              <Notice kind="error">
                <p id="rollback-approval">
                  Not rolled back: this rollback affects the protected environment
                  {input.approval.environments.length === 1 ? "" : "s"}{" "}
                  <strong>{input.approval.environments.join(", ")}</strong>, so it needs{" "}
                  {input.approval.required} approval{input.approval.required === 1 ? "" : "s"}{" "}
                  first. Propose it for review: a change request is opened with the files of version
                  {" "}
                  {v} and your message.
                </p>
              </Notice>
            )}
            <form method="post" action={ui.rollback(tenant, namespace, v)}>
              <CsrfField token={props.csrf} />
              <Field id="rollback-message" label="Message: why roll back?">
                <input
                  id="rollback-message"
                  type="text"
                  name="message"
                  required
                  maxlength={MAX_MESSAGE_LENGTH}
                  value={input?.message ?? ""}
                  aria-invalid={input !== undefined && input.message.trim() === ""
                    ? "true"
                    : undefined}
                />
              </Field>
              <ConfirmCheck
                id="rollback-confirm"
                checked={input?.confirmed ?? false}
                invalid={input !== undefined && !input.confirmed}
              >
                I understand this makes a new version whose files equal version {v}
              </ConfirmCheck>
              {input?.approval === undefined
                ? <button type="submit" class="danger">Roll back to version {v}</button>
                : (
                  <button
                    type="submit"
                    name="step"
                    value="propose"
                    aria-describedby="rollback-approval"
                  >
                    Propose rollback for review
                  </button>
                )}
            </form>
          </>
        )}
    </section>
  );
}
