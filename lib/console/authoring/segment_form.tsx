/**
 * The editors of a segment's contents: a new segment (`createSegment`: its
 * key, description, `match` and predicates) and an existing one
 * (`editSegment`: the same but the key, prefilled from the file as written,
 * only what differs rewritten, so the file's comments and layout stay).
 * References to other segments are predicates `segment.<key>`; a cycle or
 * a chain too deep is refused by the library, naming the row.
 *
 * @module
 */
import type { Context } from "hono";
import {
  createSegment,
  editSegment,
  type ManifestTexts,
  type PredicateAsWritten,
  type PredicateInput,
  type SegmentAsWritten,
  segmentAsWritten,
} from "../../flags/authoring/mod.ts";
import { InvalidRequestError } from "../../errors.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { DescriptionField, KeyField } from "./key_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { fieldAttributes, shown, text, textsAt } from "./fields.ts";
import { predicateRowErrors, PredicateRows, readPredicateRows } from "./predicate_rows.tsx";

/** A segment as the form entered it, and the form row of each predicate. */
export interface SegmentInput {
  /** The segment's key (the URL's for an edit, the form's for a new one). */
  key: string;
  description: string;
  match: "all" | "any";
  predicates: PredicateInput[];
  /** The form row of each predicate, in order (refusals name rows). */
  rows: number[];
}

/**
 * The new-segment editor.
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/segments/_new", deps, views, () => newSegmentEditor);
 * ```
 */
export const newSegmentEditor: Editor<SegmentInput> = {
  title: () => "New segment",
  action: (view) => ui.edit.newSegment(view.tenant, view.namespace),
  read: (form) => readSegmentForm(form, text(form, "key")),
  make: (view, input) =>
    predicateRowErrors(input.rows, () =>
      createSegment(textsAt(view), {
        key: input.key,
        description: input.description,
        match: input.match,
        predicates: input.predicates,
      })),
  form: (state) => <SegmentForm state={state} segment={null} />,
  done: (view, input) => ui.segment(view.tenant, view.namespace, input.key),
};

/**
 * The editor of the segment the path names (`:segment`).
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/segments/:segment", deps, views, editSegmentEditor);
 * ```
 */
// deno-lint-ignore no-explicit-any
export function editSegmentEditor(c: Context<ConsoleEnv, any>): Editor<SegmentInput> {
  const key: string = c.req.param("segment") ?? "";
  return {
    title: () => `Edit segment ${key}`,
    action: (view) => ui.edit.segment(view.tenant, view.namespace, key),
    read: (form) => readSegmentForm(form, key),
    make: (view, input) =>
      predicateRowErrors(input.rows, () =>
        editSegment(textsAt(view), {
          segment: key,
          description: input.description,
          match: input.match,
          predicates: input.predicates,
        })),
    form: (state) => <SegmentForm state={state} segment={key} />,
    done: (view) => ui.segment(view.tenant, view.namespace, key),
  };
}

/** Reads the posted form (throws naming the field). */
function readSegmentForm(form: ReadonlyMap<string, string>, key: string): SegmentInput {
  const match = text(form, "match");
  if (match !== "all" && match !== "any") {
    throw new InvalidRequestError("Choose whether every predicate or any one must hold", {
      details: { field: "match" },
    });
  }
  const { predicates, rows } = readPredicateRows(form);
  return { key, description: text(form, "description"), match, predicates, rows };
}

/** Segments as written, per version held in memory (a 10,000-value list parses once). */
const WRITTEN = new WeakMap<ManifestTexts, Map<string, SegmentAsWritten | null>>();

/** The segment as written, or null when the version has none of that key. */
function writtenOn(view: NamespaceView, key: string): SegmentAsWritten | null {
  const texts = textsAt(view);
  let known = WRITTEN.get(texts);
  if (known === undefined) WRITTEN.set(texts, known = new Map());
  if (known.has(key)) return known.get(key)!;
  let written: SegmentAsWritten | null;
  try {
    written = segmentAsWritten(texts, key);
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    written = null;
  }
  known.set(key, written);
  return written;
}

/** The form: the key (a new segment), description, match, predicates. */
function SegmentForm(props: { state: FormState<SegmentInput>; segment: string | null }) {
  const { state, segment } = props;
  const { view } = state;
  const { tenant, namespace } = view;
  const written = segment === null ? null : writtenOn(view, segment);
  if (segment !== null && written === null) {
    return (
      <Notice kind="error">
        <p id="edit-refusal" role="alert">
          Version {view.meta.version} of {namespace} has no segment <code>{segment}</code>.{" "}
          <a href={ui.segments(tenant, namespace)}>Its segments</a>
        </p>
      </Notice>
    );
  }
  const key = segment ?? shown(state, "key", "");
  const predicates: readonly PredicateAsWritten[] = written?.predicates ?? [];
  const match = shown(state, "match", written?.match ?? "all");
  const others = Object.keys(view.manifest.segments).filter((s) => s !== segment).sort();
  return (
    <EditorForm
      action={segment === null
        ? ui.edit.newSegment(tenant, namespace)
        : ui.edit.segment(tenant, namespace, segment)}
      state={state}
      suggested={key === "" ? "" : segment === null ? `Add segment ${key}` : `Edit segment ${key}`}
    >
      {segment === null
        ? (
          <KeyField
            state={state}
            id="segment-key"
            hint="What flag rules name: lower-case letters, digits, dots, dashes and underscores. It names the file segments/<key>.toml and cannot be changed later."
            value={key}
          />
        )
        : (
          <p>
            Segment <a href={ui.segment(tenant, namespace, segment)}>{segment}</a>, file{" "}
            <code>segments/{segment}.toml</code>: its comments and layout are kept.{" "}
            <a href={ui.edit.segmentDelete(tenant, namespace, segment)}>Delete it</a>
          </p>
        )}
      <DescriptionField
        state={state}
        id="segment-description"
        written={written?.description ?? ""}
      />
      <fieldset {...fieldAttributes(state, "match")}>
        <legend>A context is in the segment when</legend>
        <div class="field check">
          <input
            id="segment-match-all"
            type="radio"
            name="match"
            value="all"
            checked={match !== "any"}
          />
          <label for="segment-match-all">every predicate holds (all)</label>
        </div>
        <div class="field check">
          <input
            id="segment-match-any"
            type="radio"
            name="match"
            value="any"
            checked={match === "any"}
          />
          <label for="segment-match-any">at least one predicate holds (any)</label>
        </div>
      </fieldset>
      <PredicateRows state={state} written={predicates} segments={others} />
    </EditorForm>
  );
}
