/**
 * The page of a quick change whose form is older than the head (412):
 * someone committed after the version the form was built from. It says
 * who committed what since (the versions, the flag file's diff, the other
 * files that changed), and shows the person's change made again on the
 * head as a new preview, or, when it no longer applies, their inputs kept
 * in the form; nothing of theirs was committed. What it shows is the
 * conflict the service found (`conflict` of `previewFlagChange` and
 * `commitFlagChange` in lib/services/manifests.ts).
 *
 * @module
 */
import type { Context } from "hono";
import type { FlagChangeOutcome } from "../services/manifests.ts";
import { fileText, flagPath, type VersionMeta } from "../services/versions.ts";
import { ChangeForm, changePage, KeptInputs, NothingChanged } from "./change_form.tsx";
import { type ChangeInput, refusalOf } from "./change_input.ts";
import { Preview } from "./change_preview.tsx";
import { FileDiff } from "./diff_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { diffFileSets } from "./file_set_diff.ts";
import { ui } from "./urls.ts";
import { Notice, Time } from "./widgets.tsx";

/** A version committed since the form's, with who made it. */
export type TheirVersion = VersionMeta & {
  /** Its author's email, or their id. */
  author: string;
};

/** A conflict, as the service found it. */
export type Conflict = Extract<FlagChangeOutcome, { kind: "conflict" }>;

/**
 * The conflict's page (412): what changed since the person's version, and
 * their change made again on the head.
 *
 * @param c the route's context
 * @param conflict the conflict: the base version, the head, the versions since, the change again
 * @param theirs the versions since the base, with their authors
 * @param input the person's inputs
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return conflictPage(c, outcome, await withAuthors(outcome.theirs), input);
 * ```
 */
export function conflictPage(
  c: Context<ConsoleEnv>,
  conflict: Conflict,
  theirs: TheirVersion[],
  input: ChangeInput,
): Promise<Response> {
  const { view: baseView, flag, head, again: made } = conflict;
  const path = flagPath(flag.key);
  const others = diffFileSets(baseView.files, head.files).filter((p) => p.path !== path);
  const again: ChangeInput = { ...input, base: head.meta.version };
  let mine;
  switch (made.kind) {
    case "flag_gone":
      mine = (
        <>
          <Notice kind="error">
            <p>
              The flag <code>{flag.key}</code> no longer exists in version{" "}
              {head.meta.version}, so your change cannot be made. What you entered:
            </p>
          </Notice>
          <KeptInputs input={input} />
        </>
      );
      break;
    case "environment_gone":
      mine = (
        <>
          <Notice kind="error">
            <p>
              Version {head.meta.version} no longer declares the environment{" "}
              <code>{input.env}</code>, so your change cannot be made. What you entered:
            </p>
          </Notice>
          <KeptInputs input={input} />
        </>
      );
      break;
    case "refused": {
      const error = refusalOf(made.error);
      mine = (
        <>
          <Notice kind="error">
            <p>
              Your change cannot be made on version {head.meta.version} as it was entered:{" "}
              {error.message}. Your inputs are below: adjust them and preview again.
            </p>
          </Notice>
          <KeptInputs input={input} />
          <ChangeForm
            c={c}
            view={head}
            flag={made.flag}
            input={again}
            error={error}
            level={3}
          />
        </>
      );
      break;
    }
    case "unchanged":
      mine = (
        <>
          <NothingChanged view={head} flag={made.flag} input={again} />
          <ChangeForm c={c} view={head} flag={made.flag} input={again} level={3} />
        </>
      );
      break;
    case "preview":
      mine = (
        <Preview
          c={c}
          view={head}
          flag={made.flag}
          input={again}
          before={made.before}
          after={made.after}
          problems={made.problems}
          level={3}
        />
      );
      break;
  }
  const base = baseView.meta.version;
  const { tenant, namespace } = head;
  return changePage(
    c,
    head,
    flag,
    input,
    { title: "Someone changed this since you opened it", status: 412 },
    <>
      <Notice kind="error">
        <p>
          You opened this form on version {base}; {namespace} is now at version{" "}
          {head.meta.version}. Nothing of yours was committed. Here is what changed, and your change
          made again on version {head.meta.version}, with your message.
        </p>
      </Notice>
      <section aria-labelledby="their-change">
        <h2 id="their-change">What changed since version {base}</h2>
        <ul>
          {theirs.map((v) => (
            <li>
              <a href={ui.version(tenant, namespace, v.version)}>Version {v.version}</a> by{" "}
              <span class="wrap">{v.author}</span>, <Time iso={v.created_at} />
              {v.message
                ? (
                  <>
                    : <q>{v.message}</q>
                  </>
                )
                : null}
            </li>
          ))}
        </ul>
        {fileText(baseView, path) === fileText(head, path)
          ? (
            <p>
              The flag file <code>{path}</code> did not change.
            </p>
          )
          : <FileDiff path={path} before={fileText(baseView, path)} after={fileText(head, path)} />}
        {others.length === 0 ? <p class="small muted">No other file changed.</p> : (
          <>
            <p>Other files that changed:</p>
            <ul>
              {others.map((o) => (
                <li>
                  <code class="wrap">{o.path}</code> <span class="badge">{o.status}</span>
                </li>
              ))}
            </ul>
          </>
        )}
        <p>
          <a href={ui.diff(tenant, namespace, base, head.meta.version)}>
            Every change from version {base} to {head.meta.version}
          </a>
        </p>
      </section>
      <section aria-labelledby="your-change">
        <h2 id="your-change">Your change on version {head.meta.version}</h2>
        {mine}
      </section>
    </>,
  );
}
