/**
 * The console's authoring flow, one for every editor (a flag, its rules,
 * its overrides, a segment, an environment): form → preview → commit, or
 * propose for review. An editor says how to read its form, how to make
 * the edit on a version (lib/flags/authoring/) and how to draw its form;
 * this module runs the service (lib/services/edits.ts: one authorisation,
 * one head read, `If-Match` on the form's version) and draws the rest:
 *
 * - the preview: each file's line diff, what changes value by value, the
 *   environments it affects (protected ones marked), the manifest's
 *   problems; and the form that commits it, carrying every input as a
 *   hidden field, or, when it touches a protected environment, proposes it
 *   for review (a change request) instead;
 * - a refused input: the editor's form again (400), the field named;
 * - a conflict (the head moved since the form's version): the versions
 *   since, and the edit made again on the head as a new preview, or why it
 *   no longer applies, the person's inputs kept;
 * - after a commit or a proposal, a redirect to where the editor says.
 *
 * @module
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { type CfgtoolError, InvalidRequestError } from "../errors.ts";
import { CSRF_FIELD } from "../http/auth/session_cookie.ts";
import { valueChangeLines } from "../flags/value_changes.ts";
import {
  commitEdit,
  type EditOutcome,
  type FileEdits,
  type MadeEdit,
  previewEdit,
} from "../services/edits.ts";
import type { ManifestViews, NamespaceView } from "../services/versions.ts";
import type { AppDeps } from "../http/deps.ts";
import { FileDiff } from "./diff_view.tsx";
import { Field } from "./form_fields.tsx";
import type { ConsoleEnv } from "./env.ts";
import { consolePage, namespaceCrumbs } from "./layout.tsx";
import { consoleRequest, namespaceRef } from "./route_refs.ts";
import { ProblemList } from "./problem_list.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Notice, Time } from "./widgets.tsx";

/** The status of an editor's page. */
export type EditStatus = 200 | 400 | 404 | 409 | 412 | 422;

/** What an editor draws its form with: the version, the inputs kept, a refusal. */
export interface FormState<I> {
  view: NamespaceView;
  /** The session's CSRF token (the form carries it). */
  csrf: string;
  /** The message as entered. */
  message: string;
  /** The inputs as entered (null: a fresh form, or inputs that could not be read). */
  input: I | null;
  /** The form's fields as posted, to draw them again as entered (empty: a fresh form). */
  posted: ReadonlyMap<string, string>;
  /** Why the last post was refused (its field in `details.field`). */
  refusal?: CfgtoolError | undefined;
  status: EditStatus;
  /** True when the edit changes nothing. */
  unchanged?: boolean;
}

/** One editor: how its form is read and drawn, and the edit it makes. */
export interface Editor<I> {
  /** The page's title ("New flag", "Edit segment beta"). */
  title(view: NamespaceView, input: I | null): string;
  /** Where the form posts (its own address). */
  action(view: NamespaceView): string;
  /** Reads the inputs from a posted form (throws InvalidRequestError naming the field). */
  read(form: ReadonlyMap<string, string>, view: NamespaceView): I;
  /** Makes the edit on a version (lib/flags/authoring/). */
  make(view: NamespaceView, input: I): FileEdits;
  /** Draws the form (fields, the message field, the preview button). */
  form(state: FormState<I>): Child;
  /** Where to go once committed or proposed (the flag's page, the segment's…). */
  done(view: NamespaceView, input: I): string;
  /** What the preview shows above the files, drawn from the input (a rollout's bar). */
  summary?(view: NamespaceView, input: I): Child;
}

/** The form fields that steer the flow rather than hold an input. */
const FLOW_FIELDS = new Set(["step", CSRF_FIELD, "base"]);

/**
 * Answers a `GET` of an editor: its form on the head.
 *
 * @param c the route's context
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @param editor the editor
 * @param view the head, as the service read it for the form (manifest.write checked)
 * @returns the page
 *
 * @example
 * ```ts ignore
 * app.get("/flags/new", async (c) => editorForm(c, deps, views, newFlag, await flagChangeForm(...)));
 * ```
 */
export function editorForm<I>(
  c: Context<ConsoleEnv>,
  editor: Editor<I>,
  view: NamespaceView,
): Promise<Response> {
  const state = {
    view,
    csrf: c.get("csrf"),
    message: "",
    input: null,
    posted: new Map<string, string>(),
    status: 200 as const,
  };
  return editPage(c, editor, view, null, editor.form(state), 200);
}

/**
 * Answers a `POST` of an editor: `step` is `preview` (the default),
 * `commit`, `propose` or `edit` (the form again, inputs kept).
 *
 * @param c the route's context
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @param editor the editor
 * @returns the page or the redirect
 *
 * @example
 * ```ts ignore
 * app.post("/flags/new", (c) => editorPost(c, deps, views, newFlag));
 * ```
 */
export async function editorPost<I>(
  c: Context<ConsoleEnv>,
  deps: AppDeps,
  views: ManifestViews,
  editor: Editor<I>,
): Promise<Response> {
  const form = c.get("form");
  const step = form.get("step") ?? "preview";
  if (!["preview", "commit", "propose", "edit"].includes(step)) {
    throw new InvalidRequestError("step must be preview, commit, propose or edit");
  }
  let input: I | null = null;
  let readError: CfgtoolError | undefined;
  const request = () => ({
    base: baseOf(form),
    read: (view: NamespaceView) => {
      try {
        input = editor.read(form, view);
      } catch (err) {
        if (!(err instanceof InvalidRequestError)) throw err;
        readError = err;
        return null;
      }
      if (step === "edit") return null;
      const asked = input;
      return {
        message: (form.get("message") ?? "").trim(),
        propose: step === "propose",
        make: (v: NamespaceView) => editor.make(v, asked),
      };
    },
  });
  const viewDeps = { ...deps, views };
  const outcome = step === "commit" || step === "propose"
    ? await commitEdit(viewDeps, c.get("person"), namespaceRef(c), request, consoleRequest(c))
    : await previewEdit(viewDeps, c.get("person"), namespaceRef(c), request);
  if (readError !== undefined) {
    return await formAgain(c, editor, outcome.view, input, readError, 400);
  }
  return await outcomePage(c, editor, outcome, input as I | null, form);
}

/** The page of what became of an edit. */
async function outcomePage<I>(
  c: Context<ConsoleEnv>,
  editor: Editor<I>,
  outcome: EditOutcome,
  input: I | null,
  form: ReadonlyMap<string, string>,
): Promise<Response> {
  const { view } = outcome;
  switch (outcome.kind) {
    case "form":
      return await formAgain(c, editor, view, input, undefined, 200);
    case "refused":
      return await formAgain(
        c,
        editor,
        view,
        input,
        outcome.error,
        outcome.error.status === 404 ? 404 : 400,
      );
    case "unchanged":
      return await editPage(
        c,
        editor,
        view,
        input,
        editor.form({ ...stateOf(c, view, input), status: 200, unchanged: true }),
        200,
      );
    case "preview":
    case "invalid":
    case "approval_required":
      return await editPage(
        c,
        editor,
        view,
        input,
        <EditPreview
          c={c}
          editor={editor}
          view={view}
          made={outcome}
          form={form}
          input={input}
          refusedFor={outcome.kind === "preview" ? undefined : outcome.kind}
        />,
        outcome.kind === "preview" ? 200 : outcome.kind === "invalid" ? 422 : 409,
      );
    case "conflict":
      return await editPage(
        c,
        editor,
        view,
        input,
        <EditConflict c={c} editor={editor} outcome={outcome} input={input} form={form} />,
        412,
      );
    case "proposed":
      return c.redirect(
        ui.changeRequest(view.tenant, view.namespace, outcome.change_request.id, {
          done: "opened",
        }),
        303,
      );
    case "committed":
      return c.redirect(editor.done(outcome.view, input as I), 303);
  }
}

function formAgain<I>(
  c: Context<ConsoleEnv>,
  editor: Editor<I>,
  view: NamespaceView,
  input: I | null,
  refusal: CfgtoolError | undefined,
  status: EditStatus,
): Promise<Response> {
  const state = { ...stateOf(c, view, input), refusal, status };
  return editPage(c, editor, view, input, editor.form(state), status);
}

function editPage<I>(
  c: Context<ConsoleEnv>,
  editor: Editor<I>,
  view: NamespaceView,
  input: I | null,
  body: Child,
  status: EditStatus,
): Promise<Response> {
  const { tenant, namespace } = view;
  const title = editor.title(view, input);
  return consolePage(c, {
    title,
    status,
    tenant,
    section: "namespaces",
    crumbs: namespaceCrumbs(tenant, namespace, { label: title }),
  }, body);
}

/**
 * The preview of an edit: each file's diff, what changes, the
 * environments it affects, the problems, and the form that commits or
 * proposes it (every input carried as a hidden field).
 *
 * @param props the route's context, the editor, the version, the edit made, the form posted, why a commit was refused
 * @returns the section
 *
 * @example
 * ```tsx ignore
 * <EditPreview c={c} editor={editor} view={view} made={outcome} form={form} />
 * ```
 */
export function EditPreview<I>(
  props: {
    c: Context<ConsoleEnv>;
    editor: Editor<I>;
    view: NamespaceView;
    made: MadeEdit;
    form: ReadonlyMap<string, string>;
    /** The inputs as read, for the editor's summary. */
    input?: I | null | undefined;
    /** Set when a commit was refused: `invalid` (422) or `approval_required` (409). */
    refusedFor?: "invalid" | "approval_required" | undefined;
    /** Its heading's level: 2 on its own page, 3 inside the conflict page. */
    level?: 2 | 3;
  },
) {
  const { c, editor, view, made, form } = props;
  const Heading = props.level === 3 ? "h3" : "h2";
  const protectedEnvs = made.protection.environments;
  const needsReview = made.protection.required > 0;
  const lines = made.changes === null ? [] : valueChangeLines(made.changes);
  return (
    <section aria-labelledby="preview-title">
      <Heading id="preview-title">What this edit does</Heading>
      <p>
        On version {view.meta.version} of {view.namespace}
        {(form.get("message") ?? "").trim() === "" ? null : (
          <>
            , with the message <q class="wrap">{(form.get("message") ?? "").trim()}</q>
          </>
        )}:
      </p>
      {made.impact === null ? null : (
        <Notice kind={needsReview ? "error" : "info"}>
          <p id="edit-impact">
            {made.impact.length === 0 ? "It changes no environment's evaluation." : (
              <>
                It changes how {made.impact.map((env, i) => (
                  <>
                    {i === 0 ? null : ", "}
                    <strong>{env}</strong>
                    {protectedEnvs.includes(env) ? " (protected)" : null}
                  </>
                ))} evaluate{made.impact.length === 1 ? "s" : ""}.
              </>
            )}
            {needsReview
              ? ` A protected environment needs ${made.protection.required} approval${
                made.protection.required === 1 ? "" : "s"
              }: this edit is proposed for review (a change request), and lands once approved.`
              : null}
          </p>
        </Notice>
      )}
      {lines.length === 0 ? null : (
        <>
          <h3>Value by value</h3>
          <ul class="value-changes">{lines.map((l) => <li class="wrap">{l}</li>)}</ul>
        </>
      )}
      <ProblemList what="edit" problems={made.problems} />
      {props.input === null || props.input === undefined || editor.summary === undefined
        ? null
        : editor.summary(view, props.input)}
      <h3>The files</h3>
      {made.edits.map((e) => <FileDiff path={e.path} before={e.before} after={e.after ?? ""} />)}
      <form method="post" action={editor.action(view)}>
        <CsrfField token={c.get("csrf")} />
        <input type="hidden" name="base" value={String(view.meta.version)} />
        <KeptFields form={form} />
        <div class="actions">
          {made.problems.length > 0
            ? null
            : needsReview
            ? (
              <button type="submit" name="step" value="propose" aria-describedby="edit-impact">
                Propose for review
              </button>
            )
            : <button type="submit" name="step" value="commit">Commit version</button>}
          <button type="submit" name="step" value="edit" class="secondary">Edit again</button>
        </div>
      </form>
    </section>
  );
}

/** Every input of the posted form as hidden fields, but those that steer the flow. */
function KeptFields(props: { form: ReadonlyMap<string, string> }) {
  return (
    <>
      {[...props.form].filter(([name]) => !FLOW_FIELDS.has(name)).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
    </>
  );
}

/** A conflict: what was committed since the form's version, and the edit made again on the head. */
function EditConflict<I>(
  props: {
    c: Context<ConsoleEnv>;
    editor: Editor<I>;
    outcome: Extract<EditOutcome, { kind: "conflict" }>;
    input: I | null;
    form: ReadonlyMap<string, string>;
  },
) {
  const { c, editor, outcome, input, form } = props;
  const { head, theirs, again } = outcome;
  return (
    <>
      <Notice kind="error">
        <p>
          Not committed: version {head.meta.version} was committed after the version{"  "}
          {outcome.view.meta.version} your form was made on.
        </p>
      </Notice>
      <section aria-labelledby="theirs-title">
        <h2 id="theirs-title">Committed since</h2>
        <ul>
          {theirs.map((v) => (
            <li>
              <a href={ui.version(head.tenant, head.namespace, v.version)}>
                version {v.version}
              </a>{" "}
              (<Time iso={v.created_at} />){v.message === null ? null : <>: {v.message}</>}
            </li>
          ))}
        </ul>
      </section>
      {again.kind === "preview"
        ? (
          <EditPreview
            c={c}
            editor={editor}
            view={head}
            made={again}
            form={form}
            input={input}
            level={3}
          />
        )
        : again.kind === "unchanged"
        ? (
          <Notice>
            <p>Version {head.meta.version} has what your edit asks for already: nothing to do.</p>
          </Notice>
        )
        : (
          <>
            <Notice kind="error">
              <p>
                Your edit no longer applies on version {head.meta.version}: {again.error.message}.
              </p>
            </Notice>
            {editor.form({ ...stateOf(c, head, input), refusal: again.error, status: 412 })}
          </>
        )}
    </>
  );
}

/** A form's state on a version, inputs and message kept. */
function stateOf<I>(c: Context<ConsoleEnv>, view: NamespaceView, input: I | null) {
  const posted: ReadonlyMap<string, string> = c.get("form") ?? new Map();
  return { view, input, csrf: c.get("csrf"), message: posted.get("message") ?? "", posted };
}

/**
 * The frame of an editor's form: the CSRF token, the version it is made
 * on, the refusal (named field or not), the editor's fields, the message
 * and the preview button.
 *
 * @param props the action, the state, the fields, the message's hint
 * @returns the form
 *
 * @example
 * ```tsx ignore
 * <EditorForm action={url} state={state}>{fields}</EditorForm>
 * ```
 */
export function EditorForm<I>(
  props: {
    action: string;
    state: FormState<I>;
    children: Child;
    messageHint?: string;
    /** The message proposed while the person has written none. */
    suggested?: string;
  },
) {
  const { state } = props;
  const field = (state.refusal?.details as { field?: string } | undefined)?.field;
  return (
    <form method="post" action={props.action} class="editor">
      <CsrfField token={state.csrf} />
      <input type="hidden" name="base" value={String(state.view.meta.version)} />
      {state.unchanged
        ? (
          <Notice>
            <p>This edit changes nothing: version {state.view.meta.version} has it already.</p>
          </Notice>
        )
        : null}
      {state.refusal === undefined ? null : (
        <Notice kind="error">
          <p id="edit-refusal" role="alert">{state.refusal.message}</p>
        </Notice>
      )}
      {props.children}
      <Field
        id="edit-message"
        label="Message"
        hint={props.messageHint ?? "Why: the version history and the review show it."}
      >
        <input
          id="edit-message"
          name="message"
          type="text"
          required
          maxlength={4096}
          value={state.message !== "" || state.posted.size > 0
            ? state.message
            : props.suggested ?? ""}
          aria-describedby={field === "message"
            ? "edit-refusal edit-message-hint"
            : "edit-message-hint"}
          {...(field === "message" ? { "aria-invalid": "true" } : {})}
        />
      </Field>
      <div class="actions">
        <button type="submit" name="step" value="preview">Preview</button>
      </div>
    </form>
  );
}

/** The form's `base` (the version it was made on); 400 without it. */
function baseOf(form: ReadonlyMap<string, string>): number {
  const raw = form.get("base");
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) {
    throw new InvalidRequestError("base must be the version the form was made on", {
      details: { field: "base" },
    });
  }
  return Number(raw);
}
