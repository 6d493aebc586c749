/**
 * The deletion of a segment (`deleteSegment`): the form says what deleting
 * does and asks to confirm it. While a flag rule (of any scope) or another
 * segment names the segment, there is nothing to confirm: the page names
 * each, linked, and a post is refused by the library all the same.
 *
 * @module
 */
import type { Context } from "hono";
import type { CfgtoolError } from "../../errors.ts";
import { InvalidRequestError } from "../../errors.ts";
import {
  deleteSegment,
  describeReferences,
  type Reference,
  segmentReferences,
} from "../../flags/authoring/mod.ts";
import type { NamespaceView } from "../../services/versions.ts";
import type { Editor, FormState } from "../edit_flow.tsx";
import { EditorForm } from "../edit_flow.tsx";
import type { ConsoleEnv } from "../env.ts";
import { ConfirmCheck, confirmed } from "../form_fields.tsx";
import { ui } from "../urls.ts";
import { Notice } from "../widgets.tsx";
import { textsAt } from "./fields.ts";
import { ReferenceList, refusalReferences } from "./flag_referenced_by.tsx";

/** What the deletion form posts: the segment of the path. */
export interface SegmentDeletion {
  segment: string;
}

/**
 * The deletion editor of the segment the path names (`:segment`).
 *
 * @param c the route's context
 * @returns the editor
 *
 * @example
 * ```ts ignore
 * mountEditor(app, "/edit/segments/:segment/delete", deps, views, deleteSegmentEditor);
 * ```
 */
// deno-lint-ignore no-explicit-any
export function deleteSegmentEditor(c: Context<ConsoleEnv, any>): Editor<SegmentDeletion> {
  const segment: string = c.req.param("segment") ?? "";
  return {
    title: () => `Delete segment ${segment}`,
    action: (view) => ui.edit.segmentDelete(view.tenant, view.namespace, segment),
    read: (form) => {
      if (!confirmed(form)) {
        throw new InvalidRequestError(`Tick the box to confirm the deletion of ${segment}`, {
          details: { field: "confirm" },
        });
      }
      return { segment };
    },
    make: (view) => deleteSegment(textsAt(view), { segment }),
    form: (state) => <DeleteForm state={state} segment={segment} />,
    done: (view) => ui.segments(view.tenant, view.namespace),
  };
}

/** The references of a refusal (`details.referenced_by`), else those of the version. */
function referencesOf(
  view: NamespaceView,
  segment: string,
  refusal: CfgtoolError | undefined,
): Reference[] {
  const given = refusalReferences(refusal?.details);
  if (given !== undefined) return given;
  return Object.hasOwn(view.manifest.segments, segment)
    ? segmentReferences(textsAt(view), segment)
    : [];
}

function DeleteForm(props: { state: FormState<SegmentDeletion>; segment: string }) {
  const { state, segment } = props;
  const { view } = state;
  const { tenant, namespace } = view;
  const exists = Object.hasOwn(view.manifest.segments, segment);
  const refs = referencesOf(view, segment, state.refusal);
  if (!exists || refs.length > 0) {
    const message = state.refusal?.message ??
      (exists
        ? `Segment ${segment} is used by ${describeReferences(refs)}: remove ${
          refs.length === 1 ? "that" : "those"
        } first`
        : `Version ${view.meta.version} of ${namespace} has no segment ${segment}`);
    return (
      <>
        <Notice kind="error">
          <p id="edit-refusal" role="alert">{message}</p>
        </Notice>
        {refs.length === 0 ? null : (
          <>
            <p>
              It cannot be deleted while these name it: change them to stop naming{" "}
              <a href={ui.segment(tenant, namespace, segment)}>{segment}</a>, then come back.
            </p>
            <ReferenceList id="segment-references" view={view} refs={refs} />
          </>
        )}
        <p>
          <a href={ui.segments(tenant, namespace)}>Back to the segments</a>
        </p>
      </>
    );
  }
  return (
    <EditorForm
      action={ui.edit.segmentDelete(tenant, namespace, segment)}
      state={state}
      suggested={`Delete segment ${segment}`}
    >
      <p>
        Deleting removes <code>segments/{segment}.toml</code>{" "}
        from the next version. No flag rule and no other segment names{" "}
        <a href={ui.segment(tenant, namespace, segment)}>{segment}</a>, so no evaluation changes;
        the versions before keep it, and a rollback brings it back.
      </p>
      <ConfirmCheck
        id="segment-delete-confirm"
        checked={state.posted.get("confirm") === "yes"}
        invalid={(state.refusal?.details as { field?: string } | undefined)?.field === "confirm"}
      >
        Delete segment {segment}
      </ConfirmCheck>
    </EditorForm>
  );
}
