/**
 * The override editor of a flag in one environment (`?env=`): whether the
 * flag is on there (as without an override, on, off), the variation it
 * serves when no rule matches (the flag's default, or another), and whose
 * rules apply (the flag's, or rules of its own: a copy of the flag's to
 * start from). One editor applies the chosen changes in sequence; a field
 * the post leaves out is kept as it is, so the rules page's "give it its
 * own rules" button posts `rules=own` alone.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../../errors.ts";
import {
  applyFileEdits,
  dropOwnRules,
  type FileEdits,
  flagAsWritten,
  giveOwnRules,
  type ManifestTexts,
  setOverrideDefault,
  setOverrideEnabled,
} from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { Field, Options } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { RadioChoice } from "./radio_choice.tsx";
import { fieldAttributes, shown, text, textsAt } from "./fields.ts";
import { namedControls, openScope, rulesUrl } from "./rule_scope.tsx";

/** What the override editor changes (undefined: kept as it is). */
export interface OverrideInput {
  flag: string;
  environment: string;
  /** `null`: as without an override (on). */
  enabled?: boolean | null | undefined;
  /** `null`: the flag's default. */
  default?: string | null | undefined;
  /** Whose rules apply. */
  rules?: "flag" | "own" | undefined;
}

/**
 * Reads the override form: `enabled` (`inherit`, `on`, `off`), `default`
 * (empty: the flag's, else a variation), `rules` (`flag`, `own`); a field
 * left out is kept.
 *
 * @param form the posted form
 * @param flag the flag
 * @param environment the environment
 * @returns the changes asked for
 * @throws {InvalidRequestError} naming `enabled` or `rules`
 *
 * @example
 * ```ts
 * import { readOverride } from "./override_editor.tsx";
 * const input = readOverride(new Map([["enabled", "off"], ["default", ""]]), "a", "staging");
 * if (input.enabled !== false || input.default !== null || input.rules !== undefined) throw new Error();
 * ```
 */
export function readOverride(
  form: ReadonlyMap<string, string>,
  flag: string,
  environment: string,
): OverrideInput {
  const out: OverrideInput = { flag, environment };
  if (form.has("enabled")) {
    const enabled = text(form, "enabled");
    if (!(enabled in ENABLED)) {
      throw new InvalidRequestError("Choose whether the flag is on: inherit, on or off", {
        details: { field: "enabled" },
      });
    }
    out.enabled = ENABLED[enabled as keyof typeof ENABLED];
  }
  if (form.has("default")) {
    const d = text(form, "default");
    out.default = d === "" ? null : d;
  }
  if (form.has("rules")) {
    const rules = text(form, "rules");
    if (rules !== "flag" && rules !== "own") {
      throw new InvalidRequestError("Choose whose rules apply: the flag's or its own", {
        details: { field: "rules" },
      });
    }
    out.rules = rules;
  }
  return out;
}

const ENABLED = { inherit: null, on: true, off: false } as const;

/**
 * Makes the override's changes on a version, one library edit after the
 * other: the files that end up changed.
 *
 * @param texts the version's texts
 * @param input the changes
 * @returns the flag's file, or nothing when nothing changes
 * @throws {InvalidRequestError} naming `enabled`, `default`, `rules` or `environment`
 *
 * @example
 * ```ts
 * import { overrideEdits } from "./override_editor.tsx";
 * const texts = new Map([
 *   ["namespace.toml", "schema_version = 1\n[namespace.environments.staging]\n"],
 *   ["flags/a.toml", 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n'],
 * ]);
 * const out = overrideEdits(texts, { flag: "a", environment: "staging", enabled: false, default: "on" });
 * if (!out.get("flags/a.toml")?.endsWith('[environments.staging]\nenabled = false\ndefault = "on"\n')) throw new Error();
 * if (overrideEdits(texts, { flag: "a", environment: "staging", enabled: null }).size !== 0) throw new Error();
 * ```
 */
export function overrideEdits(texts: ManifestTexts, input: OverrideInput): FileEdits {
  const scope = { flag: input.flag, environment: input.environment };
  const steps: ((t: ManifestTexts) => FileEdits)[] = [];
  if (input.rules !== undefined) {
    const own = hasOwnRules(texts, input.flag, input.environment);
    if (input.rules === "own" && !own) {
      steps.push((t) => namedControls([], () => giveOwnRules(t, scope), { environment: "rules" }));
    }
    if (input.rules === "flag" && own) {
      steps.push((t) => namedControls([], () => dropOwnRules(t, scope), { environment: "rules" }));
    }
  }
  if (input.enabled !== undefined) {
    const enabled = input.enabled;
    steps.push((t) => setOverrideEnabled(t, { ...scope, enabled }));
  }
  if (input.default !== undefined) {
    const variation = input.default;
    steps.push((t) =>
      namedControls([], () => setOverrideDefault(t, { ...scope, variation }), {
        variation: "default",
      })
    );
  }
  let now: ManifestTexts = texts;
  const touched = new Set<string>();
  for (const step of steps) {
    const edits = step(now);
    for (const path of edits.keys()) touched.add(path);
    now = applyFileEdits(now, edits);
  }
  const out: FileEdits = new Map();
  for (const path of touched) {
    if (now.get(path) !== texts.get(path)) out.set(path, now.get(path) ?? null);
  }
  return out;
}

function hasOwnRules(texts: ManifestTexts, flag: string, environment: string): boolean {
  const o = flagAsWritten(texts, flag).overrides.find((x) => x.environment === environment);
  return o?.rules !== undefined;
}

/**
 * The override editor of the flag and environment of a request.
 *
 * @param c the route's context (the flag in the path, `?env=`)
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/flags/:flag/override", deps, views, overrideEditor);
 * ```
 */
export function overrideEditor(c: Context<ConsoleEnv>): Editor<OverrideInput> {
  const flag = c.req.param("flag") ?? "";
  const environment = c.req.query("env") ?? "";
  return {
    title: () =>
      environment === ""
        ? `What an environment overrides of ${flag}`
        : `What ${environment} overrides of ${flag}`,
    action: (view) => ui.edit.override(view.tenant, view.namespace, flag, environment),
    read: (form, view) => {
      const opened = openScope(view, { flag });
      if (!opened.environments.includes(environment)) {
        throw new InvalidRequestError("Choose one of the namespace's environments", {
          details: { field: "environment" },
        });
      }
      return readOverride(form, flag, environment);
    },
    make: (view, input) => overrideEdits(textsAt(view), input),
    form: (state) => <OverrideForm state={state} flag={flag} environment={environment} />,
    done: (view, input) =>
      input.rules === "own" && input.enabled === undefined && input.default === undefined
        ? rulesUrl(view, { flag, environment })
        : ui.flag(view.tenant, view.namespace, flag, environment),
  };
}

function OverrideForm(
  props: { state: FormState<OverrideInput>; flag: string; environment: string },
) {
  const { state, flag, environment } = props;
  const { view } = state;
  const opened = openScope(view, { flag });
  if (!opened.environments.includes(environment)) {
    return <ChooseEnvironment view={view} flag={flag} environments={opened.environments} />;
  }
  const o = opened.flag.overrides.find((x) => x.environment === environment);
  const enabled = shown(
    state,
    "enabled",
    o?.enabled === undefined ? "inherit" : o.enabled ? "on" : "off",
  );
  const rules = shown(state, "rules", o?.rules === undefined ? "flag" : "own");
  const scope = { flag, environment };
  return (
    <EditorForm
      action={ui.edit.override(view.tenant, view.namespace, flag, environment)}
      state={state}
      suggested={`Change what ${environment} overrides of ${flag}`}
    >
      <p>
        What {environment} says of {flag} itself; anything it does not say comes from{" "}
        <a href={ui.flag(view.tenant, view.namespace, flag)}>the flag</a>.
      </p>
      <fieldset aria-describedby="override-enabled-hint">
        <legend>Is {flag} on in {environment}?</legend>
        <p id="override-enabled-hint" class="small muted">
          Off: every context gets the default, with the reason DISABLED.
        </p>
        {(
          [["inherit", "As without an override: on"], ["on", "On"], ["off", "Off"]] as const
        ).map(([value, label]) => (
          <RadioChoice
            state={state}
            id={`override-enabled-${value}`}
            name="enabled"
            value={value}
            checked={enabled === value}
          >
            {label}
          </RadioChoice>
        ))}
      </fieldset>
      <Field
        id="override-default"
        label="Served when no rule matches (and when off)"
        hint={`The flag's default is ${opened.flag.default}.`}
      >
        <select
          id="override-default"
          name="default"
          {...fieldAttributes(state, "default", "override-default-hint")}
        >
          <Options
            choices={[
              ["", `The flag's default (${opened.flag.default})`],
              ...opened.flag.variations.map((v) => v.name),
            ]}
            selected={shown(state, "default", o?.default ?? "")}
          />
        </select>
      </Field>
      <fieldset aria-describedby="override-rules-hint">
        <legend>Whose rules apply in {environment}?</legend>
        <p id="override-rules-hint" class="small muted">
          Rules of its own start as a copy of the flag's ({opened.flag.rules.length}); going back to
          the flag's drops them.
        </p>
        <RadioChoice
          state={state}
          id="override-rules-flag"
          name="rules"
          value="flag"
          checked={rules === "flag"}
        >
          The flag's rules
        </RadioChoice>
        <RadioChoice
          state={state}
          id="override-rules-own"
          name="rules"
          value="own"
          checked={rules === "own"}
        >
          Rules of its own
          {o?.rules === undefined ? null : <>({o.rules.length})</>}
        </RadioChoice>
        <p class="small">
          <a href={rulesUrl(view, o?.rules === undefined ? { flag } : scope)}>
            {o?.rules === undefined ? "Edit the flag's rules" : `Edit ${environment}'s own rules`}
          </a>
        </p>
      </fieldset>
    </EditorForm>
  );
}

function ChooseEnvironment(
  props: { view: NamespaceView; flag: string; environments: readonly string[] },
) {
  const { view, flag, environments } = props;
  if (environments.length === 0) {
    return (
      <Notice>
        <p>
          The namespace declares no environment.{" "}
          <a href={ui.edit.environments(view.tenant, view.namespace)}>Add one</a>.
        </p>
      </Notice>
    );
  }
  return (
    <form
      method="get"
      action={ui.edit.override(view.tenant, view.namespace, flag, "")}
      class="editor"
    >
      <Field id="override-env" label="The environment">
        <select id="override-env" name="env">
          <Options choices={environments} />
        </select>
      </Field>
      <div class="actions">
        <button type="submit">Continue</button>
      </div>
    </form>
  );
}
