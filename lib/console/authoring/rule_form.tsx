/**
 * A rule's controls (the add and replace editors share them): the segment
 * ("Everyone" or one of the manifest's segments), what it serves — one
 * variation, or a rollout: a weight per variation of the flag, summed as
 * you type by the console's script and drawn as a bar, and what it buckets
 * by — and the reading of the posted form into the library's
 * {@linkcode RuleInput}. Weight rows post as `rollout.<row>.variation`
 * (hidden) and `rollout.<row>.weight`; an empty weight leaves the
 * variation out of the rollout.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";
import { ROLLOUT_TOTAL } from "../../flags/model.ts";
import type { RuleAsWritten, RuleInput } from "../../flags/authoring/mod.ts";
import type { FormState } from "../edit_flow.tsx";
import { Field, Options } from "../form_fields.tsx";
import { WeightBar } from "../widgets.tsx";
import { RadioChoice } from "./radio_choice.tsx";
import { fieldAttributes, refusedField, rowIndices, shown, text, wholeNumber } from "./fields.ts";

/** The most variations a rollout posts. */
const MAX_ROWS = 100;

/** A rule as read from the form, and the form row of each rollout entry. */
export interface ReadRule {
  rule: RuleInput;
  /** The row of each rollout entry, in order (refusals name rows). */
  rows: number[];
}

/**
 * Reads a rule from a posted form: `segment` (empty: everyone), `serve`
 * (`variation` or `rollout`), then `variation`, or the weight rows and
 * `bucket_by`.
 *
 * @param form the posted form
 * @returns the rule and the row of each rollout entry
 * @throws {InvalidRequestError} naming `serve`, `variation` or `rollout.<row>.weight`
 *
 * @example
 * ```ts
 * import { readRule } from "./rule_form.tsx";
 * const form = new Map([["serve", "rollout"], ["rollout.0.variation", "on"], ["rollout.0.weight", "30"],
 *   ["rollout.1.variation", "off"], ["rollout.1.weight", "70"], ["rollout.2.variation", "x"], ["rollout.2.weight", ""]]);
 * const { rule, rows } = readRule(form);
 * if (rule.rollout?.length !== 2 || rows.join() !== "0,1" || rule.segment !== undefined) throw new Error();
 * ```
 */
export function readRule(form: ReadonlyMap<string, string>): ReadRule {
  const segment = text(form, "segment");
  const base: RuleInput = segment === "" ? {} : { segment };
  const serve = text(form, "serve");
  if (serve === "variation") {
    const variation = text(form, "variation");
    if (variation === "") {
      throw new InvalidRequestError("Choose the variation the rule serves", {
        details: { field: "variation" },
      });
    }
    return { rule: { ...base, variation }, rows: [] };
  }
  if (serve !== "rollout") {
    throw new InvalidRequestError("Choose what the rule serves: a variation or a rollout", {
      details: { field: "serve" },
    });
  }
  const rollout: { variation: string; weight: number }[] = [];
  const rows: number[] = [];
  for (const row of rowIndices(form, "rollout", MAX_ROWS)) {
    if (text(form, `rollout.${row}.weight`) === "") continue;
    const variation = text(form, `rollout.${row}.variation`);
    const weight = wholeNumber(
      form,
      `rollout.${row}.weight`,
      0,
      ROLLOUT_TOTAL,
      `The weight of ${variation}`,
    );
    rollout.push({ variation, weight });
    rows.push(row);
  }
  if (rollout.length === 0) {
    throw new InvalidRequestError("Give at least one variation a weight", {
      details: { field: "weights" },
    });
  }
  const bucketBy = text(form, "bucket_by");
  return { rule: { ...base, rollout, ...(bucketBy === "" ? {} : { bucket_by: bucketBy }) }, rows };
}

/**
 * The rule's controls, as written (a fresh form) or as posted.
 *
 * @param props the form's state, the manifest's segments, the flag's
 * variations, the rule as written (none: a new rule)
 * @returns the fields
 *
 * @example
 * ```tsx
 * import { RuleFields } from "./rule_form.tsx";
 * const html = String(await (<RuleFields state={{ posted: new Map() } as never} segments={["beta"]} variations={["on", "off"]} />));
 * if (!html.includes("data-weights") || !html.includes('name="rollout.1.weight"')) throw new Error(html);
 * ```
 */
export function RuleFields(
  props: {
    state: FormState<unknown>;
    segments: readonly string[];
    variations: readonly string[];
    written?: RuleAsWritten | undefined;
  },
) {
  const { state, segments, variations, written } = props;
  const serve = shown(state, "serve", written?.rollout === undefined ? "variation" : "rollout");
  return (
    <>
      <Field
        id="rule-segment"
        label="Who it applies to"
        hint="Everyone, or the contexts in one segment."
      >
        <select
          id="rule-segment"
          name="segment"
          {...fieldAttributes(state, "segment", "rule-segment-hint")}
        >
          <Options
            choices={[["", "Everyone"], ...segments]}
            selected={shown(state, "segment", written?.segment ?? "")}
          />
        </select>
      </Field>
      <fieldset>
        <legend>What it serves</legend>
        <RadioChoice
          state={state}
          id="rule-serve-variation"
          name="serve"
          value="variation"
          checked={serve === "variation"}
        >
          One variation, to every context it applies to
        </RadioChoice>
        <Field id="rule-variation" label="The variation">
          <select id="rule-variation" name="variation" {...fieldAttributes(state, "variation")}>
            <Options
              choices={variations}
              selected={shown(state, "variation", written?.variation ?? "")}
              any="Choose a variation"
            />
          </select>
        </Field>
        <RadioChoice
          state={state}
          id="rule-serve-rollout"
          name="serve"
          value="rollout"
          checked={serve === "rollout"}
        >
          A rollout: each variation to a share of them
        </RadioChoice>
        <RolloutFields state={state} variations={variations} written={written} />
      </fieldset>
    </>
  );
}

/** The weights (one row per variation, the written rollout's order first) and `bucket_by`. */
function RolloutFields(
  props: {
    state: FormState<unknown>;
    variations: readonly string[];
    written?: RuleAsWritten | undefined;
  },
) {
  const { state, written } = props;
  const entries = written?.rollout ?? [];
  const order = [
    ...entries.map((e) => e.variation).filter((v) => props.variations.includes(v)),
    ...props.variations.filter((v) => !entries.some((e) => e.variation === v)),
  ];
  const weightOf = (row: number, variation: string) => {
    const w = entries.find((e) => e.variation === variation)?.weight;
    return shown(state, `rollout.${row}.weight`, w === undefined ? "" : String(w));
  };
  const shownRows = order.map((variation, row) => ({ variation, raw: weightOf(row, variation) }));
  const valid = shownRows.every((r) => r.raw.trim() === "" || /^\d{1,6}$/.test(r.raw.trim()));
  const sum = shownRows.reduce((s, r) => s + (Number(r.raw.trim()) || 0), 0);
  const named = refusedField(state);
  const sumRefused = named === "weights" || named === "rollout";
  return (
    <fieldset data-weights class="rows" aria-describedby="rule-weights-hint">
      <legend>The rollout's weights</legend>
      <p id="rule-weights-hint" class="small muted">
        Whole numbers adding up to 100 (percent), or to {ROLLOUT_TOTAL}{" "}
        for finer splits. Leave a variation empty to leave it out.
      </p>
      {shownRows.map(({ variation, raw }, row) => (
        <div class="field">
          <input type="hidden" name={`rollout.${row}.variation`} value={variation} />
          <label for={`rule-weight-${row}`}>Weight of {variation}</label>
          <input
            id={`rule-weight-${row}`}
            type="text"
            inputmode="numeric"
            name={`rollout.${row}.weight`}
            value={raw}
            data-weight
            autocomplete="off"
            {...weightAttributes(state, row, sumRefused)}
          />
        </div>
      ))}
      <p>
        <span id="rule-weight-sum" data-weight-sum aria-live="polite">
          The weights add up to {valid ? String(sum) : "?"}.
        </span>
      </p>
      {valid && sum > 0
        ? (
          <WeightBar
            entries={shownRows.filter((r) => r.raw.trim() !== "").map((r) => ({
              variation: r.variation,
              weight: Number(r.raw.trim()),
            }))}
          />
        )
        : null}
      <Field
        id="rule-bucket-by"
        label="Bucket by (optional)"
        hint="The dotted context path that keeps a context in the same share, such as user.id; empty: targeting_key."
      >
        <input
          id="rule-bucket-by"
          type="text"
          name="bucket_by"
          maxlength={256}
          autocomplete="off"
          value={shown(state, "bucket_by", written?.bucket_by ?? "")}
          {...fieldAttributes(state, "bucket_by", "rule-bucket-by-hint")}
        />
      </Field>
    </fieldset>
  );
}

/** A weight's attributes: invalid when the refusal names it or the sum. */
function weightAttributes(
  state: FormState<unknown>,
  row: number,
  sumRefused: boolean,
): Record<string, string> {
  const own = fieldAttributes(state, `rollout.${row}.weight`);
  if (!sumRefused) return own;
  return {
    "aria-invalid": "true",
    "aria-describedby": "edit-refusal rule-weight-sum",
  };
}
