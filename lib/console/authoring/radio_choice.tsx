/**
 * One choice of a group of radio buttons in an authoring form: the radio,
 * marked invalid when a refusal names its field, and its label beside it.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import type { FormState } from "../edit_flow.tsx";
import { fieldAttributes } from "./fields.ts";

/**
 * A radio `name=value` with its label (the children).
 *
 * @example
 * ```tsx
 * import { RadioChoice } from "./radio_choice.tsx";
 * const html = String(await (
 *   <RadioChoice state={{} as never} id="serve-rollout" name="serve" value="rollout" checked>
 *     A rollout
 *   </RadioChoice>
 * ));
 * if (!html.includes('type="radio"') || !html.includes('<label for="serve-rollout">A rollout</label>')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function RadioChoice(
  props: {
    state: Pick<FormState<unknown>, "refusal">;
    id: string;
    name: string;
    value: string;
    checked: boolean;
    children: Child;
  },
) {
  return (
    <div class="field check">
      <input
        id={props.id}
        type="radio"
        name={props.name}
        value={props.value}
        checked={props.checked}
        {...fieldAttributes(props.state, props.name)}
      />
      <label for={props.id}>{props.children}</label>
    </div>
  );
}
