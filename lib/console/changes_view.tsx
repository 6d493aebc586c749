/**
 * The difference between two versions, drawn: each file that differs
 * (lib/console/file_set_diff.ts), and for a changed TOML file first
 * the values that changed (lib/console/toml_diff.ts), then its line
 * diff (lib/console/diff_view.tsx). A page draws at most
 * {@linkcode MAX_DIFF_LINES} lines, so it stays small however large the
 * difference; files past that are named, not drawn.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { drawnLines, FileCard, FileDiff, lineDiff } from "./diff_view.tsx";
import type { FileChange } from "./file_set_diff.ts";
import { tomlChanges, tomlChangeText } from "./toml_diff.ts";

/** Most diff lines (line diff and value changes) one page draws; later files are only named. */
export const MAX_DIFF_LINES = 800;
/** Most value changes listed for one TOML file. */
export const MAX_TOML_CHANGES = 100;

/**
 * A byte count, readable.
 *
 * @param bytes the count
 * @returns `512 B`, `1.5 KiB`, `2.0 MiB`
 *
 * @example
 * ```ts
 * import { size } from "./changes_view.tsx";
 * if (size(512) !== "512 B" || size(1536) !== "1.5 KiB") throw new Error();
 * ```
 */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The changes of a diff, drawn: per file, for a changed TOML file the
 * values that changed, then the line diff; within {@linkcode MAX_DIFF_LINES}
 * for the page (a file that does not fit is named with a note), binary
 * and empty files named with a note.
 *
 * @example
 * ```tsx
 * import { Changes } from "./changes_view.tsx";
 * import { diffFileSets } from "./file_set_diff.ts";
 * const t = (s: string) => new TextEncoder().encode(s);
 * const changes = diffFileSets(new Map([["a.toml", t("x = 1\n")]]), new Map([["a.toml", t("x = 2\n")]]));
 * const html = String(await (<Changes changes={changes} />));
 * if (!html.includes("x: 1 → 2") || !html.includes('class="add"')) throw new Error(html);
 * ```
 */
export function Changes(props: { changes: readonly FileChange[] }) {
  let budget = MAX_DIFF_LINES;
  return (
    <>
      {props.changes.map((change) => {
        if (change.binary) {
          return (
            <FileNote change={change}>
              Not text (not valid UTF-8): {sizeOrNone(change.beforeSize)} →{" "}
              {sizeOrNone(change.afterSize)}.
            </FileNote>
          );
        }
        if (change.before === "" && change.after === "") {
          return <FileNote change={change}>An empty file.</FileNote>;
        }
        if (budget <= 0) {
          // the page is full: later files are named, and nothing more is computed for them
          return (
            <FileNote change={change}>
              Not drawn: this page has no room left. Compare fewer versions, or pull both versions
              with the command line tool.
            </FileNote>
          );
        }
        const values = change.status === "changed" && change.path.endsWith(".toml")
          ? tomlChanges(change.before, change.after)
          : null;
        const shownValues = values?.slice(0, MAX_TOML_CHANGES) ?? [];
        const hunks = lineDiff(change.before, change.after);
        const lines = drawnLines(hunks);
        if (lines + shownValues.length > budget) {
          return (
            <FileNote change={change}>
              Not drawn: its {lines}{" "}
              lines of diff are more than this page has room for. Compare fewer versions, or pull
              both versions with the command line tool.
            </FileNote>
          );
        }
        // a file too different to draw cost the search for its diff: it counts as much as a big one
        budget -= hunks === null ? MAX_DIFF_LINES / 4 : Math.max(1, lines + shownValues.length);
        return (
          <FileDiff
            path={change.path}
            before={change.before}
            after={change.after}
            hunks={hunks}
          >
            {values === null
              ? null
              : values.length === 0
              ? <p class="small muted">No value changed: only formatting or comments.</p>
              : (
                <>
                  <p class="small">Values that changed:</p>
                  <ul class="toml-changes" aria-label={`Values that changed in ${change.path}`}>
                    {shownValues.map((v) => <li class="mono small">{tomlChangeText(v)}</li>)}
                    {values.length > shownValues.length
                      ? (
                        <li class="muted small">
                          and {values.length - shownValues.length} more (see the lines below)
                        </li>
                      )
                      : null}
                  </ul>
                </>
              )}
          </FileDiff>
        );
      })}
    </>
  );
}

function sizeOrNone(bytes: number | null): string {
  return bytes === null ? "none" : size(bytes);
}

/** A changed file named, with a note instead of its lines. */
function FileNote(props: { change: FileChange; children: Child }) {
  return (
    <FileCard path={props.change.path} status={props.change.status}>
      <p class="small muted">{props.children}</p>
    </FileCard>
  );
}
