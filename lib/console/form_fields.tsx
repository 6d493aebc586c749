/**
 * The pieces console forms are made of (Hono JSX): a labelled field with
 * its hint (and the text and select fields made of it), a field of an
 * inline form with its problem, a GET form of inline fields (filters,
 * comparisons) with its submit button, the options of a select, and the
 * required checkbox that confirms a destructive action, with the reader of
 * its answer. Every control gets a
 * `<label for>`; problems and hints have ids derived from the control's,
 * for `aria-describedby`.
 *
 * @module
 */
import type { Child, JSX } from "hono/jsx";

/**
 * A field of a form: its label above the control (the children), and a
 * hint under it whose id is `<id>-hint`.
 *
 * @example
 * ```tsx
 * import { Field } from "./form_fields.tsx";
 * const html = String(await (
 *   <Field id="slug" label="Slug" hint="Lower-case"><input id="slug" name="slug" /></Field>
 * ));
 * if (!html.includes('<label for="slug">Slug</label>') || !html.includes('<p id="slug-hint" class="small muted">')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function Field(props: { id: string; label: Child; hint?: Child; children: Child }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint === undefined
        ? null
        : <p id={`${props.id}-hint`} class="small muted">{props.hint}</p>}
    </div>
  );
}

/**
 * A field of an inline form (`form.inline`): the label above the control
 * (the children), and the problem with the value, if any, under it, whose
 * id is `<id>-problem` (see {@linkcode problemAttributes}).
 *
 * @example
 * ```tsx
 * import { InlineField } from "./form_fields.tsx";
 * const html = String(await (
 *   <InlineField id="f-limit" label="Per page" problem="Too many"><input id="f-limit" /></InlineField>
 * ));
 * if (!html.includes('<span id="f-limit-problem" class="small error">Too many</span>')) throw new Error(html);
 * ```
 */
export function InlineField(
  props: { id: string; label: Child; problem?: string | undefined; children: Child },
) {
  return (
    <div>
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.problem === undefined
        ? null
        : <span id={`${props.id}-problem`} class="small error">{props.problem}</span>}
    </div>
  );
}

/**
 * The attributes of a control whose value has a problem shown by an
 * {@linkcode InlineField} (none without one).
 *
 * @param id the control's id
 * @param problem the problem, if any
 * @returns `aria-describedby` and `aria-invalid`, or nothing
 *
 * @example
 * ```ts
 * import { problemAttributes } from "./form_fields.tsx";
 * const a = problemAttributes("f-limit", "Too many");
 * if (a["aria-describedby"] !== "f-limit-problem" || a["aria-invalid"] !== "true") throw new Error();
 * if (Object.keys(problemAttributes("f-limit", undefined)).length !== 0) throw new Error();
 * ```
 */
export function problemAttributes(
  id: string,
  problem: string | undefined,
): Record<string, string> {
  return problem === undefined
    ? {}
    : { "aria-describedby": `${id}-problem`, "aria-invalid": "true" };
}

/**
 * A plain GET form of inline fields (the children), such as a list's
 * filters: it works without JavaScript; `hx` adds htmx attributes. The
 * submit button comes after the fields, then `after`.
 *
 * @example
 * ```tsx
 * import { GetForm } from "./form_fields.tsx";
 * const html = String(await (<GetForm action="/ui/x" label="Filter x" button="Filter"><div /></GetForm>));
 * if (!html.includes('method="get"') || !html.includes('<button type="submit" class="secondary">Filter</button>')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function GetForm(
  props: {
    button: string;
    children: Child;
    /** Where it goes (default: the page's own address). */
    action?: string;
    /** Its accessible name. */
    label?: string;
    /** A search form (`role="search"`). */
    search?: boolean;
    /** More classes than `inline`. */
    class?: string;
    /** htmx attributes. */
    hx?: Record<string, string>;
    after?: Child;
  },
) {
  const attributes: Record<string, string> = { ...props.hx };
  if (props.action !== undefined) attributes.action = props.action;
  if (props.label !== undefined) attributes["aria-label"] = props.label;
  if (props.search) attributes.role = "search";
  return (
    <form method="get" class={props.class ? `inline ${props.class}` : "inline"} {...attributes}>
      {props.children}
      <div>
        <button type="submit" class="secondary">{props.button}</button>
      </div>
      {props.after}
    </form>
  );
}

/** An option of {@linkcode Options}: a value shown as itself, or a value and its label. */
export type Choice = string | readonly [value: string, label: string];

/**
 * The options of a select, the `selected` one marked; with `any`, first an
 * option of the empty value (no choice) labelled so.
 *
 * @example
 * ```tsx
 * import { Options } from "./form_fields.tsx";
 * const html = String(await (<Options choices={["web", ["app", "The app"]]} selected="app" any="all" />));
 * if (!html.startsWith('<option value="">all</option>') || !html.includes('value="app" selected>The app<')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function Options(
  props: { choices: readonly Choice[]; selected?: string | undefined; any?: string },
) {
  return (
    <>
      {props.any === undefined ? null : <option value="">{props.any}</option>}
      {props.choices.map((choice) => {
        const [value, label] = typeof choice === "string" ? [choice, choice] : choice;
        return <option value={value} selected={value === props.selected}>{label}</option>;
      })}
    </>
  );
}

/**
 * A one-line text field: a {@linkcode Field} around its
 * `<input type="text">`, which keeps the value typed and, when `invalid`,
 * is marked so; `describedby` names what describes it (its hint, its
 * problem).
 *
 * @example
 * ```tsx
 * import { TextField } from "./form_fields.tsx";
 * const html = String(await (
 *   <TextField id="f-url" name="url" label="URL" hint="Where" value="x" required invalid
 *     describedby="f-url-hint" autocomplete="off" />
 * ));
 * const wanted = ['<label for="f-url">URL</label>', 'type="text" name="url" required', 'value="x"',
 *   'aria-invalid="true" aria-describedby="f-url-hint"', '<p id="f-url-hint"'];
 * if (!wanted.every((part) => html.includes(part))) throw new Error(html);
 * ```
 */
export function TextField(
  props: {
    id: string;
    name: string;
    label: Child;
    hint?: Child;
    value: string;
    required?: boolean;
    maxlength?: number;
    inputmode?: JSX.IntrinsicElements["input"]["inputmode"];
    spellcheck?: boolean;
    autocomplete?: string;
    /** Whether the value has a problem (`aria-invalid`). */
    invalid?: boolean;
    /** The ids of what describes the control (`aria-describedby`). */
    describedby?: string;
  },
) {
  return (
    <Field id={props.id} label={props.label} hint={props.hint}>
      <input
        id={props.id}
        type="text"
        name={props.name}
        required={props.required ?? false}
        maxlength={props.maxlength}
        value={props.value}
        inputmode={props.inputmode}
        spellcheck={props.spellcheck}
        autocomplete={props.autocomplete}
        aria-invalid={props.invalid ? "true" : undefined}
        aria-describedby={props.describedby}
      />
    </Field>
  );
}

/**
 * A select field: a {@linkcode Field} around a `<select>` of
 * {@linkcode Options}, the `selected` one marked; when `invalid`, the
 * select is marked so; `describedby` names what describes it.
 *
 * @example
 * ```tsx
 * import { SelectField } from "./form_fields.tsx";
 * const html = String(await (
 *   <SelectField id="f-env" name="env" label="Environment" choices={["dev", "prod"]} selected="prod" invalid />
 * ));
 * if (!html.includes('<select id="f-env" name="env" aria-invalid="true"') ||
 *   !html.includes('<option value="prod" selected>prod</option>')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function SelectField(
  props: {
    id: string;
    name: string;
    label: Child;
    hint?: Child;
    choices: readonly Choice[];
    selected?: string | undefined;
    /** Whether the choice has a problem (`aria-invalid`). */
    invalid?: boolean;
    /** The ids of what describes the control (`aria-describedby`). */
    describedby?: string;
  },
) {
  return (
    <Field id={props.id} label={props.label} hint={props.hint}>
      <select
        id={props.id}
        name={props.name}
        aria-invalid={props.invalid ? "true" : undefined}
        aria-describedby={props.describedby}
      >
        <Options choices={props.choices} selected={props.selected} />
      </select>
    </Field>
  );
}

/** The name of the checkbox that confirms a destructive action. */
export const CONFIRM_FIELD = "confirm";

/**
 * The required checkbox that confirms a destructive action (revoke,
 * rotate, roll back): its label (the children) says what will happen. It
 * works without JavaScript: the server refuses a post without it
 * ({@linkcode confirmed}).
 *
 * @example
 * ```tsx
 * import { ConfirmCheck } from "./form_fields.tsx";
 * const html = String(await (<ConfirmCheck id="revoke-confirm">Revoke ci now</ConfirmCheck>));
 * if (!html.includes('name="confirm" value="yes" required') || !html.includes('<label for="revoke-confirm">')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function ConfirmCheck(
  props: { id: string; children: Child; checked?: boolean; invalid?: boolean },
) {
  return (
    <div class="field check">
      <input
        id={props.id}
        type="checkbox"
        name={CONFIRM_FIELD}
        value="yes"
        required
        checked={props.checked ?? false}
        aria-invalid={props.invalid ? "true" : undefined}
      />
      <label for={props.id}>{props.children}</label>
    </div>
  );
}

/**
 * Whether a posted form confirms its action (the box of
 * {@linkcode ConfirmCheck} ticked, or a confirmation page's hidden field).
 *
 * @param form the posted fields
 * @returns true when `confirm=yes` was sent
 *
 * @example
 * ```ts
 * import { confirmed } from "./form_fields.tsx";
 * if (!confirmed(new Map([["confirm", "yes"]])) || confirmed(new Map())) throw new Error();
 * ```
 */
export function confirmed(form: ReadonlyMap<string, string>): boolean {
  return form.get(CONFIRM_FIELD) === "yes";
}
