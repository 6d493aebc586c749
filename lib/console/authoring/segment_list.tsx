/**
 * The segments of a namespace, for everyone who may read it: each key
 * (linked to its page), description, `match`, how many predicates, and how
 * many flags reach it (naming it, or a segment that refers to it) and how
 * many segments refer to it; a person who may change the namespace gets
 * the "New segment" button. An empty namespace says what a segment is.
 *
 * @module
 */
import type { Manifest } from "../../flags/model.ts";
import { flagSegments, segmentRefs } from "../../flags/reach.ts";
import type { NamespaceView } from "../../services/versions.ts";
import { ui } from "../urls.ts";
import { DataTable } from "../widgets.tsx";

/** How a segment is used: the flags that reach it, the segments that refer to it. */
export interface SegmentUse {
  flags: number;
  segments: number;
}

const USES = new WeakMap<Manifest, Map<string, SegmentUse>>();

/**
 * How each segment of a manifest is used, computed once per version held
 * in memory: a flag counts once per segment it reaches, directly or
 * through other segments (as the segment's page lists them); a segment
 * counts when one of its predicates names the segment.
 *
 * @param manifest a validated manifest
 * @returns segment key → its use
 *
 * @example
 * ```ts
 * import { segmentUses } from "./segment_list.tsx";
 * const seg = (key: string, attribute: string) => ({ key, description: "", match: "all" as const,
 *   predicates: [{ attribute, op: "eq" as const, value: true }] });
 * const uses = segmentUses({
 *   namespace: { description: "", environments: {} },
 *   flags: { f: { key: "f", description: "", type: "boolean", default: "off", variations: { on: true, off: false },
 *     rules: [{ segment: "eu", variation: "on", bucket_by: "targeting_key" }], environments: {} } },
 *   segments: { eu: seg("eu", "segment.paying"), paying: seg("paying", "plan") },
 * });
 * if (JSON.stringify(uses.get("paying")) !== '{"flags":1,"segments":1}') throw new Error();
 * ```
 */
export function segmentUses(manifest: Manifest): Map<string, SegmentUse> {
  const known = USES.get(manifest);
  if (known !== undefined) return known;
  const uses = new Map<string, SegmentUse>();
  for (const key of Object.keys(manifest.segments)) uses.set(key, { flags: 0, segments: 0 });
  const reach = new Map<string, Set<string>>();
  const closure = (key: string): Set<string> => {
    let seen = reach.get(key);
    if (seen !== undefined) return seen;
    seen = new Set([key]);
    const queue = [key];
    while (queue.length > 0) {
      const s = manifest.segments[queue.pop()!];
      for (const r of s === undefined ? [] : segmentRefs(s)) {
        if (!seen.has(r)) {
          seen.add(r);
          queue.push(r);
        }
      }
    }
    reach.set(key, seen);
    return seen;
  };
  for (const [key, segment] of Object.entries(manifest.segments)) {
    for (const r of segmentRefs(segment)) {
      const use = uses.get(r);
      if (use !== undefined && r !== key) use.segments++;
    }
  }
  for (const flag of Object.values(manifest.flags)) {
    const reached = new Set<string>();
    for (const s of flagSegments(flag)) for (const r of closure(s)) reached.add(r);
    for (const r of reached) {
      const use = uses.get(r);
      if (use !== undefined) use.flags++;
    }
  }
  USES.set(manifest, uses);
  return uses;
}

/**
 * The page's body.
 *
 * @param props the version, whether the person may change it
 * @returns the list, or what a segment is when there is none
 *
 * @example
 * ```tsx ignore
 * <SegmentList view={view} writer={true} />
 * ```
 */
export function SegmentList(props: { view: NamespaceView; writer: boolean }) {
  const { view, writer } = props;
  const { tenant, namespace, manifest } = view;
  const keys = Object.keys(manifest.segments).sort();
  const newButton = writer
    ? (
      <p class="actions">
        <a class="button" href={ui.edit.newSegment(tenant, namespace)}>New segment</a>
      </p>
    )
    : null;
  if (keys.length === 0) {
    return (
      <div class="card" id="empty-segments">
        <p>
          No segment yet: a segment names a group of contexts (the customers in the EU, the people
          in a beta, the accounts created after a date) that flag rules can target.{" "}
          {writer ? null : "A namespace admin can add one, or push a manifest with the CLI."}
        </p>
        {newButton}
      </div>
    );
  }
  const uses = segmentUses(manifest);
  return (
    <>
      <p class="small muted">
        Version <a href={ui.version(tenant, namespace, view.meta.version)}>{view.meta.version}</a>
        {" · "}
        {keys.length} segment{keys.length === 1 ? "" : "s"}
      </p>
      {newButton}
      <DataTable
        id="segments"
        class="keyed"
        columns={[
          "Segment",
          { label: "Description", secondary: true },
          "Match",
          "Predicates",
          "Used by",
        ]}
      >
        {keys.map((key) => {
          const s = manifest.segments[key]!;
          const use = uses.get(key) ?? { flags: 0, segments: 0 };
          return (
            <tr>
              <th scope="row" class="wrap">
                <a href={ui.segment(tenant, namespace, key)}>{key}</a>
              </th>
              <td class="hide-narrow wrap">{s.description}</td>
              <td>{s.match}</td>
              <td>{s.predicates.length}</td>
              <td class="small">
                {use.flags === 0 && use.segments === 0 ? <span class="muted">nothing</span> : [
                  use.flags === 0 ? "" : `${use.flags} flag${use.flags === 1 ? "" : "s"}`,
                  use.segments === 0
                    ? ""
                    : `${use.segments} segment${use.segments === 1 ? "" : "s"}`,
                ].filter((t) => t !== "").join(", ")}
              </td>
            </tr>
          );
        })}
      </DataTable>
    </>
  );
}
