/**
 * Quick changes that become versions: turn a flag on or off in an
 * environment, change the variation it serves by default, or set the
 * weights of a rollout, from a form, without editing files. Each change
 * goes form → preview → commit. The form carries the head version it was
 * built from (`base`); the preview shows the line diff of the flag file
 * and every problem the whole manifest would have; the commit pushes all
 * files of `base` with the edited flag file through the same service as a
 * push (`pushManifest`, `If-Match: base`), so permissions, validation and
 * history are the API's. When someone pushed in between, the page says
 * what they changed and re-applies the person's change on the new head as
 * a new preview, message kept. The edit itself is lib/flags/quick_change.ts.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { authorize, can } from "../auth/permissions.ts";
import {
  CfgtoolError,
  ForbiddenError,
  InvalidRequestError,
  type Problem,
  ProblemsError,
} from "../errors.ts";
import { effectiveFlag } from "../flags/effective.ts";
import type { Flag } from "../flags/model.ts";
import { applyQuickChange, type QuickChange, rulesAsWritten } from "../flags/quick_change.ts";
import { validateManifest } from "../flags/validate.ts";
import { type NamespaceRef, pushManifest } from "../services/manifests.ts";
import { MAX_MESSAGE_LENGTH } from "../store/limits.ts";
import { listVersions, type VersionMeta } from "../store/versions.ts";
import { authDeps } from "../http/authn.ts";
import type { AppDeps } from "../http/deps.ts";
import { FileDiff } from "./diff_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { diffFileSets } from "./file_set_diff.ts";
import { Field, GetForm, InlineField, Options } from "./form_fields.tsx";
import { consolePage, namespaceCrumbs, type PageOptions } from "./layout.tsx";
import { environmentIn, flagIn, type ManifestViews, type NamespaceView } from "./manifest_view.ts";
import { peopleNames } from "./people_names.ts";
import { namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { CsrfField, Fact, Facts, Notice, ProblemNotice, Time, WeightBar } from "./widgets.tsx";

/** The quick changes, by `?kind=`. */
const KINDS = {
  toggle: "Turn on or off",
  default: "Default variation",
  weights: "Rollout weights",
} as const;

type Kind = keyof typeof KINDS;

/** A page's HTTP status. */
type Status = NonNullable<PageOptions["status"]>;

/** What the person asked for, as typed: kept whole to draw the form again. */
interface ChangeInput {
  kind: Kind;
  /** The environment; undefined: the flag's own default or rules. */
  env: string | undefined;
  /** The head version the form was built from. */
  base: number;
  message: string;
  /** toggle: "true" or "false". */
  enabled?: string | undefined;
  /** default: the variation. */
  variation?: string | undefined;
  /** weights: the rule's index, as typed. */
  rule?: string | undefined;
  /** weights: variation → weight as typed, in form order. */
  weights: [string, string][];
}

/** A refusal to show beside the form. */
interface FormError {
  message: string;
  /** The field it is about (`weight.<variation>`, `weights`, `rule`, `message`, …). */
  field?: string;
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * The quick-change routes, mounted at `/ui/t/:tenant/ns/:ns`:
 * `GET /flags/:flag/change?env=&kind=` (the form, or a choice of changes
 * without `kind`) and `POST` to the same address with `step=preview`,
 * `step=commit` or `step=edit` (back to the form, inputs kept).
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", changeRoutes(deps, views));
 * ```
 */
export function changeRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const { kv } = deps;
  const app = new Hono<ConsoleEnv>();

  app.get("/flags/:flag/change", async (c) => {
    const person = c.get("person");
    const ref = namespaceRef(c);
    const view = await views.load(deps, person, ref);
    if (!await can(kv, person, "manifest.write", ref)) {
      throw new ForbiddenError(
        `You can read ${ref.namespace} but not change it: a namespace admin of ` +
          `${ref.tenant}/${ref.namespace} can`,
      );
    }
    const flag = flagIn(view, c.req.param("flag"));
    const env = envIn(view, c.req.query("env"));
    const raw = c.req.query("kind");
    if (raw === undefined || raw === "" || (raw === "toggle" && env === undefined)) {
      return choicePage(c, view, flag, env); // a toggle needs an environment
    }
    const input: ChangeInput = {
      kind: kindOf(raw),
      env,
      base: view.head.version,
      message: "",
      rule: c.req.query("rule"),
      weights: [],
    };
    return formPage(c, view, flag, input);
  });

  app.post("/flags/:flag/change", async (c) => {
    const person = c.get("person");
    const ref = namespaceRef(c);
    await authorize(kv, person, "manifest.write", ref); // a forged post stops here
    const form = c.get("form");
    const base = Number(form.get("base"));
    if (!Number.isInteger(base) || base < 0) {
      throw new InvalidRequestError("base must be the version the form was built from", {
        details: { field: "base" },
      });
    }
    const view = await views.load(deps, person, ref, base);
    const flag = flagIn(view, c.req.param("flag"));
    const input = inputOf(c, view, base);
    const step = form.get("step") ?? "preview";
    if (step === "edit") return formPage(c, view, flag, input);
    if (step !== "preview" && step !== "commit") {
      throw new InvalidRequestError("step must be preview, commit or edit");
    }
    const refusal = messageProblem(input.message);
    if (refusal !== undefined) return formPage(c, view, flag, input, refusal, 400);
    // A preview on an old version is already a conflict; a commit finds out from the push.
    if (step === "preview" && view.head.version !== base) {
      return conflictPage(c, view, flag, input);
    }
    const path = flagPath(flag.key);
    const before = textOf(view, path);
    let after: string;
    try {
      after = applyQuickChange(before, changeOf(input));
    } catch (err) {
      if (!(err instanceof InvalidRequestError)) throw err;
      return formPage(c, view, flag, input, refusalOf(err), 400);
    }
    if (after === before) return formPage(c, view, flag, input, undefined, 200, true);
    const files = withFile(view.files, path, after);
    if (step === "preview") {
      const { problems } = validateManifest(files);
      return previewPage(c, view, flag, input, before, after, problems);
    }
    let result;
    const bytes = jsonUpload(files, input.message);
    try {
      result = await pushManifest(deps, person, ref, {
        ifMatch: base,
        upload: { format: "json", bytes },
      }, { requestId: c.get("requestId") });
    } catch (err) {
      if (err instanceof CfgtoolError && err.code === "precondition_failed") {
        return conflictPage(c, view, flag, input);
      }
      if (err instanceof ProblemsError) {
        return previewPage(c, view, flag, input, before, after, err.problems, 422);
      }
      throw err;
    }
    deps.runtime.metrics.pushed(bytes.length, result.changed);
    if (!result.changed) {
      return formPage(c, view, flag, input, undefined, 200, true);
    }
    return c.redirect(ui.version(ref.tenant, ref.namespace, result.version.version), 303);
  });

  /** The page of a change's form. */
  function formPage(
    c: Context<ConsoleEnv>,
    view: NamespaceView,
    flag: Flag,
    input: ChangeInput,
    error?: FormError,
    status: Status = 200,
    unchanged = false,
  ) {
    return page(
      c,
      view,
      flag,
      input,
      { title: `Change ${flag.key}`, status },
      <>
        {unchanged ? <NothingChanged view={view} flag={flag} input={input} /> : null}
        <ChangeForm c={c} view={view} flag={flag} input={input} error={error} />
      </>,
    );
  }

  /** The preview: the diff, the problems, and the confirm form. */
  function previewPage(
    c: Context<ConsoleEnv>,
    view: NamespaceView,
    flag: Flag,
    input: ChangeInput,
    before: string,
    after: string,
    problems: Problem[],
    status: Status = 200,
  ) {
    return page(
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
      />,
    );
  }

  /**
   * Someone pushed after `input.base`: what they changed, and the person's
   * change re-applied on the head as a new preview (or, when it no longer
   * applies, their inputs kept in the form).
   */
  async function conflictPage(
    c: Context<ConsoleEnv>,
    baseView: NamespaceView,
    flag: Flag,
    input: ChangeInput,
  ) {
    const ref = { tenant: baseView.tenant, namespace: baseView.namespace };
    const head = await views.load(deps, c.get("person"), ref);
    const path = flagPath(flag.key);
    const theirs = await versionsBetween(c, baseView.meta.version, head.meta.version, ref);
    const others = diffFileSets(baseView.files, head.files).filter((p) => p.path !== path);
    const headFlag = Object.hasOwn(head.manifest.flags, flag.key)
      ? head.manifest.flags[flag.key]!
      : undefined;
    const again: ChangeInput = { ...input, base: head.meta.version };
    let mine;
    if (headFlag === undefined) {
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
    } else if (
      input.env !== undefined && !Object.hasOwn(head.manifest.namespace.environments, input.env)
    ) {
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
    } else {
      const before = textOf(head, path);
      let after: string | FormError;
      try {
        after = applyQuickChange(before, changeOf(input));
      } catch (err) {
        if (!(err instanceof InvalidRequestError)) throw err;
        after = refusalOf(err);
      }
      mine = typeof after !== "string"
        ? (
          <>
            <Notice kind="error">
              <p>
                Your change cannot be made on version {head.meta.version} as it was entered:{" "}
                {after.message}. Your inputs are below: adjust them and preview again.
              </p>
            </Notice>
            <KeptInputs input={input} />
            <ChangeForm
              c={c}
              view={head}
              flag={headFlag}
              input={again}
              error={after}
              level={3}
            />
          </>
        )
        : after === before
        ? (
          <>
            <NothingChanged view={head} flag={headFlag} input={again} />
            <ChangeForm c={c} view={head} flag={headFlag} input={again} level={3} />
          </>
        )
        : (
          <Preview
            c={c}
            view={head}
            flag={headFlag}
            input={again}
            before={before}
            after={after}
            problems={validateManifest(withFile(head.files, path, after)).problems}
            level={3}
          />
        );
    }
    const base = baseView.meta.version;
    const { tenant, namespace } = ref;
    return page(
      c,
      head,
      flag,
      input,
      { title: "Someone changed this since you opened it", status: 412 },
      <>
        <Notice kind="error">
          <p>
            You opened this form on version {base}; {namespace} is now at version{" "}
            {head.meta.version}. Nothing of yours was committed. Here is what changed, and your
            change made again on version {head.meta.version}, with your message.
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
          {textOf(baseView, path) === textOf(head, path)
            ? (
              <p>
                The flag file <code>{path}</code> did not change.
              </p>
            )
            : <FileDiff path={path} before={textOf(baseView, path)} after={textOf(head, path)} />}
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

  /** The versions after `from` up to `to`, newest first (at most 20), with their authors. */
  async function versionsBetween(
    c: Context<ConsoleEnv>,
    from: number,
    to: number,
    ref: NamespaceRef,
  ) {
    const { items } = await listVersions(kv, ref.tenant, ref.namespace, {
      limit: 20,
      after: to + 1,
    });
    const names = peopleNames(authDeps(deps), c.get("person"));
    const out: (VersionMeta & { author: string })[] = [];
    for (const v of items.filter((v) => v.version > from && v.version <= to)) {
      out.push({ ...v, author: (await names.email(v.created_by)) ?? v.created_by });
    }
    return out;
  }

  return app;
}

/** A page of this area, with its breadcrumbs. */
function page(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  input: ChangeInput,
  options: { title: string; status: Status },
  body: Child,
) {
  const { tenant, namespace } = view;
  return consolePage(
    c,
    {
      ...options,
      tenant,
      section: "namespaces",
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: flag.key, href: ui.flag(tenant, namespace, flag.key, input.env) },
        { label: KINDS[input.kind] },
      ),
    },
    body,
  );
}

/** Without `?kind=`: the changes there are for this flag. */
function choicePage(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  flag: Flag,
  env: string | undefined,
) {
  const { tenant, namespace } = view;
  const envs = env === undefined ? Object.keys(view.manifest.namespace.environments) : [env];
  const link = (kind: Kind, e: string | undefined) =>
    ui.flagChange(tenant, namespace, flag.key, e, kind);
  return consolePage(
    c,
    {
      title: `Change ${flag.key}`,
      tenant,
      section: "namespaces",
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: flag.key, href: ui.flag(tenant, namespace, flag.key, env) },
        { label: "Change" },
      ),
    },
    <ul>
      {envs.map((e) => (
        <li>
          <a href={link("toggle", e)}>
            Turn {effectiveFlag(flag, e).enabled ? "off" : "on"} in {e}
          </a>
        </li>
      ))}
      <li>
        <a href={link("default", env)}>
          Default variation {env === undefined ? "of the flag" : `in ${env}`}
        </a>
      </li>
      <li>
        <a href={link("weights", env)}>
          Rollout weights {env === undefined ? "of the flag's rules" : `in ${env}`}
        </a>
      </li>
    </ul>,
  );
}

/** The form of a change, with the person's inputs (or the current values). */
function ChangeForm(
  props: {
    c: Context<ConsoleEnv>;
    view: NamespaceView;
    flag: Flag;
    input: ChangeInput;
    error?: FormError | undefined;
    /** Its heading's level: 2 on its own page, 3 inside the conflict page. */
    level?: 2 | 3;
  },
) {
  const { c, view, flag, input, error } = props;
  const Heading = props.level === 3 ? "h3" : "h2";
  const { tenant, namespace } = view;
  const env = input.env;
  const action = ui.flagChange(tenant, namespace, flag.key, env, input.kind);
  const invalid = (field: string) => error?.field === field ? "true" : undefined;
  let fields;
  let submit = "Preview";
  switch (input.kind) {
    case "toggle": {
      const on = effectiveFlag(flag, env!).enabled;
      const enabled = input.enabled ?? String(!on);
      submit = `Turn ${enabled === "true" ? "on" : "off"} in ${env}`;
      fields = (
        <>
          <p>
            <code>{flag.key}</code> is{" "}
            {on ? <span class="badge on">on</span> : <span class="badge off">off</span>} in {env}
            {" "}
            (version {view.meta.version}). {on
              ? `Turned off, it serves its default variation, ${
                effectiveFlag(flag, env!).default
              }, to everyone in ${env}, with reason DISABLED.`
              : `Turned on, its rules apply again in ${env}.`}
          </p>
          <input type="hidden" name="enabled" value={enabled} />
        </>
      );
      break;
    }
    case "default": {
      const e = env === undefined ? undefined : effectiveFlag(flag, env);
      const current = e?.default ?? flag.default;
      const choices = Object.entries(flag.variations).map(([name, value]) =>
        [name, `${name} (${JSON.stringify(value)})`] as const
      );
      fields = (
        <>
          <p>
            {env === undefined
              ? (
                <>
                  The flag serves <code>{flag.default}</code>{" "}
                  when no rule matches, in every environment without a default of its own.
                </>
              )
              : e!.defaultOverridden
              ? (
                <>
                  In {env} the flag serves <code>{current}</code> when no rule matches.
                </>
              )
              : (
                <>
                  {env} has no default of its own: it serves the flag's,{" "}
                  <code>{current}</code>. Choosing one here gives {env} its own.
                </>
              )}
          </p>
          <Field
            id="change-variation"
            label={`Default variation ${env === undefined ? "of the flag" : `in ${env}`}`}
          >
            <select id="change-variation" name="variation" aria-invalid={invalid("variation")}>
              <Options choices={choices} selected={input.variation ?? current} />
            </select>
          </Field>
        </>
      );
      break;
    }
    case "weights": {
      const rules = rulesAsWritten(textOf(view, flagPath(flag.key)), env);
      const rollouts = rules.filter((r) => r.rollout !== undefined);
      if (rollouts.length === 0) {
        return (
          <Notice>
            <p>
              {env === undefined ? "The flag" : `In ${env}, the flag`}{" "}
              has no rule with a rollout: there are no weights to change.{" "}
              <a href={ui.flag(tenant, namespace, flag.key, env)}>Back to {flag.key}</a>
            </p>
          </Notice>
        );
      }
      const asked = Number(input.rule);
      const rule = rollouts.find((r) => r.index === asked) ?? rollouts[0]!;
      const typed = new Map(input.weights);
      const shared = rule.scope === "flag"
        ? Object.keys(view.manifest.namespace.environments).filter((e) =>
          !effectiveFlag(flag, e).rulesOverridden
        )
        : [];
      const total = rule.rollout!.reduce((s, e) => s + e.weight, 0);
      fields = (
        <>
          {rollouts.length > 1
            ? (
              <div class="card small">
                <p>This flag has {rollouts.length} rules with a rollout. The form shows one:</p>
                <RuleChoice
                  view={view}
                  flag={flag}
                  env={env}
                  rollouts={rollouts}
                  chosen={rule.index}
                />
              </div>
            )
            : null}
          <p>
            Rule {rule.index + 1} {rule.segment === undefined ? "(everyone)" : (
              <>
                (segment <code>{rule.segment}</code>)
              </>
            )} {rule.scope === "environment"
              ? `is one of the rules of ${env} only.`
              : shared.length > 0
              ? `is one of the flag's rules: it applies in ${shared.join(", ")}.`
              : "is one of the flag's rules."} Now:
          </p>
          <WeightBar entries={rule.rollout!} />
          <input type="hidden" name="rule" value={String(rule.index)} />
          <fieldset class="card">
            <legend>Weights</legend>
            <p class="small muted">
              They sum to 100, or to 100000 for finer steps (now {total}).
            </p>
            {rule.rollout!.map((entry, i) => {
              const field = `weight.${entry.variation}`;
              return (
                <Field id={`change-weight-${i}`} label={`Weight of ${entry.variation}`}>
                  <input
                    id={`change-weight-${i}`}
                    type="number"
                    name={field}
                    min="0"
                    step="1"
                    required
                    value={typed.get(entry.variation) ?? String(entry.weight)}
                    aria-invalid={error?.field === field || error?.field === "weights"
                      ? "true"
                      : undefined}
                  />
                </Field>
              );
            })}
          </fieldset>
        </>
      );
      break;
    }
  }
  return (
    <section aria-labelledby="change-form-title">
      <Heading id="change-form-title">
        {KINDS[input.kind]} {env === undefined ? "of the flag" : `in ${env}`}
      </Heading>
      <ProblemNotice id="change-error" message={error?.message} />
      <form method="post" action={action}>
        <CsrfField token={c.get("csrf")} />
        <input type="hidden" name="base" value={String(input.base)} />
        <input type="hidden" name="kind" value={input.kind} />
        {env === undefined ? null : <input type="hidden" name="env" value={env} />}
        {fields}
        <Field id="change-message" label="Message">
          <input
            id="change-message"
            type="text"
            name="message"
            value={input.message}
            required
            maxlength={MAX_MESSAGE_LENGTH}
            placeholder="why: it lands in the version history"
            aria-invalid={invalid("message")}
            aria-describedby={error?.field === "message" ? "change-error" : undefined}
          />
        </Field>
        <p class="small muted">
          Nothing is committed yet: the next page shows the change to the flag file first.
        </p>
        <div class="actions">
          <button type="submit" name="step" value="preview">{submit}</button>
          <a href={ui.flag(tenant, namespace, flag.key, env)}>Cancel</a>
        </div>
      </form>
    </section>
  );
}

/** A plain GET form that picks the rollout rule the weights form shows. */
function RuleChoice(
  props: {
    view: NamespaceView;
    flag: Flag;
    env: string | undefined;
    rollouts: { index: number; segment?: string }[];
    chosen: number;
  },
) {
  const { view, flag, env } = props;
  const choices = props.rollouts.map((r) =>
    [
      String(r.index),
      r.segment === undefined
        ? `Rule ${r.index + 1} (everyone)`
        : `Rule ${r.index + 1} (segment ${r.segment})`,
    ] as const
  );
  return (
    <GetForm
      action={ui.flagChange(view.tenant, view.namespace, flag.key)}
      button="Show its weights"
    >
      {env === undefined ? null : <input type="hidden" name="env" value={env} />}
      <input type="hidden" name="kind" value="weights" />
      <InlineField id="change-rule" label="Rollout rule">
        <select id="change-rule" name="rule">
          <Options choices={choices} selected={String(props.chosen)} />
        </select>
      </InlineField>
    </GetForm>
  );
}

/** The preview of a change: its diff, its problems, and the form that commits it. */
function Preview(
  props: {
    c: Context<ConsoleEnv>;
    view: NamespaceView;
    flag: Flag;
    input: ChangeInput;
    before: string;
    after: string;
    problems: Problem[];
    /** Its heading's level: 2 on its own page, 3 inside the conflict page. */
    level?: 2 | 3;
  },
) {
  const { c, view, flag, input, problems } = props;
  const Heading = props.level === 3 ? "h3" : "h2";
  return (
    <section aria-labelledby="preview-title">
      <Heading id="preview-title">The version this commits</Heading>
      <p>
        On version {view.meta.version} of {view.namespace}, with the message{" "}
        <q class="wrap">{input.message}</q>:
      </p>
      <FileDiff path={flagPath(flag.key)} before={props.before} after={props.after} />
      {problems.length === 0 ? null : (
        <Notice kind="error">
          <p>
            With this change the manifest is not valid, so it cannot be committed ({problems.length}
            {" "}
            problem{problems.length === 1 ? "" : "s"}):
          </p>
          <ul>
            {problems.map((p) => (
              <li>
                <code class="wrap">{p.path}</code>
                {p.line === undefined ? null : `:${p.line}:${p.column ?? 1}`}
                {p.key === undefined || p.key === "" ? null : (
                  <>
                    {" "}
                    <code class="wrap">{p.key}</code>
                  </>
                )}: {p.message}
              </li>
            ))}
          </ul>
        </Notice>
      )}
      <form
        method="post"
        action={ui.flagChange(view.tenant, view.namespace, flag.key, input.env, input.kind)}
      >
        <CsrfField token={c.get("csrf")} />
        <HiddenInputs input={input} />
        <div class="actions">
          {problems.length === 0
            ? <button type="submit" name="step" value="commit">Commit version</button>
            : null}
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

/** The person's inputs, shown when the change cannot be made at all (nothing is lost). */
function KeptInputs(props: { input: ChangeInput }) {
  const { input } = props;
  const rows: [string, string][] = [["Message", input.message]];
  if (input.env !== undefined) rows.push(["Environment", input.env]);
  if (input.enabled !== undefined) {
    rows.push(["Change", input.enabled === "true" ? "turn on" : "turn off"]);
  }
  if (input.variation !== undefined) rows.push(["Default variation", input.variation]);
  if (input.rule !== undefined) rows.push(["Rule", String(Number(input.rule) + 1)]);
  for (const [v, w] of input.weights) rows.push([`Weight of ${v}`, w]);
  return (
    <Facts class="card">
      {rows.map(([k, v]) => <Fact label={k} class="wrap">{v}</Fact>)}
    </Facts>
  );
}

function NothingChanged(props: { view: NamespaceView; flag: Flag; input: ChangeInput }) {
  return (
    <Notice>
      <p>
        Nothing changed: version {props.view.meta.version} of <code>{props.flag.key}</code>{" "}
        already has this. No version was made.
      </p>
    </Notice>
  );
}

/** The form's fields as typed. */
function inputOf(c: Context<ConsoleEnv>, view: NamespaceView, base: number): ChangeInput {
  const form = c.get("form");
  const field = (name: string) => form.get(name) ?? c.req.query(name);
  const weights: [string, string][] = [];
  for (const [k, v] of form) if (k.startsWith("weight.")) weights.push([k.slice(7), v]);
  const kind = kindOf(field("kind"));
  const env = envIn(view, field("env"));
  if (kind === "toggle" && env === undefined) {
    throw new InvalidRequestError("Choose the environment to turn the flag on or off in", {
      details: { field: "env" },
    });
  }
  return {
    kind,
    env,
    base,
    message: form.get("message") ?? "",
    enabled: form.get("enabled"),
    variation: form.get("variation"),
    rule: form.get("rule"),
    weights,
  };
}

/** The change the inputs ask for (400 for a field that cannot be read). */
function changeOf(input: ChangeInput): QuickChange {
  const env = input.env;
  switch (input.kind) {
    case "toggle":
      if (env === undefined) {
        throw new InvalidRequestError("Choose the environment to turn the flag on or off in", {
          details: { field: "env" },
        });
      }
      if (input.enabled !== "true" && input.enabled !== "false") {
        throw new InvalidRequestError("enabled must be true or false", {
          details: { field: "enabled" },
        });
      }
      return { kind: "toggle", environment: env, enabled: input.enabled === "true" };
    case "default":
      return { kind: "default", environment: env, variation: input.variation ?? "" };
    case "weights": {
      if (input.rule === undefined || !/^\d+$/.test(input.rule)) {
        throw new InvalidRequestError("Choose the rollout rule whose weights change", {
          details: { field: "rule" },
        });
      }
      const weights: Record<string, number> = {};
      for (const [variation, raw] of input.weights) {
        const text = raw.trim();
        if (!/^-?\d+(\.\d+)?$/.test(text)) {
          throw new InvalidRequestError(
            `The weight of ${JSON.stringify(variation)} must be a whole number of 0 or more, not ${
              JSON.stringify(raw)
            }`,
            { details: { field: `weight.${variation}` } },
          );
        }
        weights[variation] = Number(text);
      }
      return { kind: "weights", environment: env, rule: Number(input.rule), weights };
    }
  }
}

function messageProblem(message: string): FormError | undefined {
  if (message.trim() === "") {
    return {
      message: "Write a message: it says in the version history why this changed",
      field: "message",
    };
  }
  if (message.length > MAX_MESSAGE_LENGTH) {
    return {
      message: `The message is ${message.length} characters; at most ${MAX_MESSAGE_LENGTH}`,
      field: "message",
    };
  }
  return undefined;
}

function refusalOf(err: InvalidRequestError): FormError {
  const field = err.details?.field;
  return typeof field === "string" ? { message: err.message, field } : { message: err.message };
}

function kindOf(raw: string | undefined): Kind {
  if (raw !== undefined && Object.hasOwn(KINDS, raw)) return raw as Kind;
  throw new InvalidRequestError(
    `kind must be one of ${Object.keys(KINDS).join(", ")}, not ${JSON.stringify(raw ?? "")}`,
    { details: { field: "kind" } },
  );
}

/** The environment a form or query names, if any (404 for one the version does not declare). */
function envIn(view: NamespaceView, raw: string | undefined): string | undefined {
  return raw === undefined || raw === "" ? undefined : environmentIn(view, raw);
}

function flagPath(key: string): string {
  return `flags/${key}.toml`;
}

function textOf(view: NamespaceView, path: string): string {
  const bytes = view.files.get(path);
  return bytes === undefined ? "" : decoder.decode(bytes);
}

function withFile(
  files: ReadonlyMap<string, Uint8Array>,
  path: string,
  text: string,
): Map<string, Uint8Array> {
  const out = new Map(files);
  out.set(path, encoder.encode(text));
  return out;
}

/** A push's JSON body: every file as text, and the message. */
function jsonUpload(files: ReadonlyMap<string, Uint8Array>, message: string): Uint8Array {
  const texts: Record<string, string> = {};
  for (const [path, bytes] of files) texts[path] = decoder.decode(bytes);
  return encoder.encode(JSON.stringify({ files: texts, message }));
}
