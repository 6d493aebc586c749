/**
 * The key and description fields the authoring forms share (a new flag,
 * a new segment or a segment's edit, an environment, a flag's edit): the
 * key a file or section is named by, required, at most 63 characters,
 * and the optional description of at most 1024, each marked invalid when
 * a refusal names it.
 *
 * @module
 */
import type { FormState } from "../edit_flow.tsx";
import { Field } from "../form_fields.tsx";
import { fieldAttributes, shown } from "./fields.ts";

/**
 * The required key field (`name="key"`), its hint under it.
 *
 * @example
 * ```tsx
 * import { KeyField } from "./key_fields.tsx";
 * const state = { posted: new Map() } as never;
 * const html = String(await <KeyField state={state} id="flag-key" hint="Lower-case" value="beta" />);
 * if (!html.includes('name="key"') || !html.includes('aria-describedby="flag-key-hint"')) throw new Error(html);
 * ```
 */
export function KeyField(
  props: { state: Pick<FormState<unknown>, "refusal">; id: string; hint: string; value: string },
) {
  return (
    <Field id={props.id} label="Key" hint={props.hint}>
      <input
        id={props.id}
        type="text"
        name="key"
        required
        maxlength={63}
        autocomplete="off"
        value={props.value}
        {...fieldAttributes(props.state, "key", `${props.id}-hint`)}
      />
    </Field>
  );
}

/**
 * The optional description field (`name="description"`): as posted, else
 * as written; described by its hint when it has one.
 *
 * @example
 * ```tsx
 * import { DescriptionField } from "./key_fields.tsx";
 * const state = { posted: new Map() } as never;
 * const html = String(await <DescriptionField state={state} id="flag-description" written="Beta" />);
 * if (!html.includes('value="Beta"') || !html.includes("Description (optional)")) throw new Error(html);
 * ```
 */
export function DescriptionField(
  props: {
    state: Pick<FormState<unknown>, "refusal" | "posted">;
    id: string;
    written: string;
    hint?: string;
  },
) {
  return (
    <Field id={props.id} label="Description (optional)" hint={props.hint}>
      <input
        id={props.id}
        type="text"
        name="description"
        maxlength={1024}
        value={shown(props.state, "description", props.written)}
        {...fieldAttributes(
          props.state,
          "description",
          props.hint === undefined ? undefined : `${props.id}-hint`,
        )}
      />
    </Field>
  );
}
