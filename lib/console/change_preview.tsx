/**
 * The preview of a quick change: the line diff of the flag file, every
 * problem the whole manifest would have with it, and the form that
 * commits it (every input carried as a hidden field) or goes back to edit
 * it. A commit refused for its problems shows it again (422); one refused
 * because the change affects a protected environment shows it again (409)
 * naming the environments and the approvals they need, with the button
 * that proposes it for review instead (a change request).
 *
 * @module
 */
import type { Context } from "hono";
import type { Problem } from "../errors.ts";
import type { Flag } from "../flags/model.ts";
import { flagPath } from "../services/versions.ts";
import { changePage, type Status } from "./change_form.tsx";
import type { ChangeInput } from "./change_input.ts";
import { FileDiff } from "./diff_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import type { NamespaceView } from "../services/versions.ts";
import { ProblemList } from "./problem_list.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Notice } from "./widgets.tsx";

/** Why a change must be reviewed: the protected environments it affects, and the approvals needed. */
export interface NeedsApproval {
  environments: string[];
  required: number;
}

/**
 * The preview's page: the diff, the problems, and the confirm form.
 *
 * @param c the route's context
 * @param view the version the change is made on
 * @param flag the flag
 * @param input the person's inputs
 * @param before the flag file before the change
 * @param after the flag file after it
 * @param problems the manifest's problems with the change
 * @param status the page's status (422 for a refused commit, 409 for one that needs approval)
 * @param approval why the commit was refused for a protected environment, if it was
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return previewPage(c, view, flag, input, before, after, []);
 * ```
 */
export function previewPage(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  input: ChangeInput,
  before: string,
  after: string,
  problems: Problem[],
  status: Status = 200,
  approval?: NeedsApproval,
) {
  return changePage(
    c,
    view,
    flag,
    input,
    { title: `Preview: change ${flag.key}`, status },
    <Preview
      c={c}
      view={view}
      flag={flag}
      input={input}
      before={before}
      after={after}
      problems={problems}
      approval={approval}
    />,
  );
}

/**
 * The preview of a change: its diff, its problems, and the form that
 * commits it (none while there are problems), or, when it needs approval,
 * proposes it for review.
 *
 * @param props the route's context, the version, the flag, the inputs, both texts, the problems, why it needs approval, the heading's level
 * @returns the preview's section
 *
 * @example
 * ```tsx ignore
 * <Preview c={c} view={view} flag={flag} input={input} before={a} after={b} problems={[]} />
 * ```
 */
export function Preview(
  props: {
    c: Context<ConsoleEnv>;
    view: NamespaceView;
    flag: Flag;
    input: ChangeInput;
    before: string;
    after: string;
    problems: Problem[];
    /** Set when the commit was refused: the change affects protected environments. */
    approval?: NeedsApproval | undefined;
    /** Its heading's level: 2 on its own page, 3 inside the conflict page. */
    level?: 2 | 3;
  },
) {
  const { c, view, flag, input, problems, approval } = props;
  const Heading = props.level === 3 ? "h3" : "h2";
  return (
    <section aria-labelledby="preview-title">
      <Heading id="preview-title">The version this commits</Heading>
      <p>
        On version {view.meta.version} of {view.namespace}, with the message{" "}
        <q class="wrap">{input.message}</q>:
      </p>
      <FileDiff path={flagPath(flag.key)} before={props.before} after={props.after} />
      {approval === undefined ? null : (
        <Notice kind="error">
          <p id="approval-needed">
            Not committed: this change affects the protected environment
            {approval.environments.length === 1 ? "" : "s"}{" "}
            <strong>{approval.environments.join(", ")}</strong>, so it needs {approval.required}
            {" "}
            approval{approval.required === 1 ? "" : "s"}{" "}
            before it lands. Propose it for review: a change request is opened with this change and
            your message, and once approved, you or an admin apply it.
          </p>
        </Notice>
      )}
      <ProblemList what="change" problems={problems} />
      <form
        method="post"
        action={ui.flagChange(view.tenant, view.namespace, flag.key, input.env, input.kind)}
      >
        <CsrfField token={c.get("csrf")} />
        <HiddenInputs input={input} />
        <div class="actions">
          {problems.length > 0
            ? null
            : approval === undefined
            ? <button type="submit" name="step" value="commit">Commit version</button>
            : (
              <button
                type="submit"
                name="step"
                value="propose"
                aria-describedby="approval-needed"
              >
                Propose for review
              </button>
            )}
          <button type="submit" name="step" value="edit" class="secondary">Edit the change</button>
        </div>
      </form>
    </section>
  );
}

/** Every input of a change as hidden fields (the confirm form carries them all). */
function HiddenInputs(props: { input: ChangeInput }) {
  const { input } = props;
  return (
    <>
      <input type="hidden" name="base" value={String(input.base)} />
      <input type="hidden" name="kind" value={input.kind} />
      {input.env === undefined ? null : <input type="hidden" name="env" value={input.env} />}
      <input type="hidden" name="message" value={input.message} />
      {input.enabled === undefined
        ? null
        : <input type="hidden" name="enabled" value={input.enabled} />}
      {input.variation === undefined
        ? null
        : <input type="hidden" name="variation" value={input.variation} />}
      {input.rule === undefined ? null : <input type="hidden" name="rule" value={input.rule} />}
      {input.weights.map(([v, w]) => <input type="hidden" name={`weight.${v}`} value={w} />)}
    </>
  );
}
