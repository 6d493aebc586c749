/**
 * A readable line diff of one file between two texts (jsdiff's
 * `structuredPatch`, three lines of context), drawn as a list of hunks
 * whose added and removed lines are marked in words as well as colour
 * (screen readers hear "added" and "removed").
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { structuredPatch } from "diff";

/** One hunk of a line diff. */
export interface Hunk {
  /** `@@ -a,b +c,d @@` */
  header: string;
  /** Lines with their first character: ` ` kept, `-` removed, `+` added. */
  lines: string[];
}

/** Longest file (in lines, either side) drawn line by line. */
export const MAX_DIFF_INPUT_LINES = 20_000;
/**
 * Most lines added plus removed that a line diff looks for before giving
 * up (a page draws at most 800 diff lines anyway).
 */
export const MAX_EDIT_LENGTH = 800;
/** Longest a line diff may run before giving up, ms (a guard: the edit bound stops it first). */
const DIFF_TIMEOUT_MS = 150;

/**
 * The hunks of a line diff between two texts (empty when equal), or null
 * when the files are too large or too different to draw line by line: the
 * work of a line diff grows with size × differences, and a page must not
 * hold the server for it.
 *
 * @param before the old text ("" for a new file)
 * @param after the new text ("" for a deleted file)
 * @returns the hunks, or null
 *
 * @example
 * ```ts
 * import { lineDiff } from "./diff_view.tsx";
 * const hunks = lineDiff("a = 1\nb = 2\n", "a = 1\nb = 3\n");
 * if (hunks?.length !== 1 || !hunks[0]!.lines.includes("+b = 3")) throw new Error(JSON.stringify(hunks));
 * if (lineDiff("x\n", "x\n")?.length !== 0) throw new Error();
 * const many = (p: string) => Array.from({ length: 3000 }, (_, i) => `${p}${i}`).join("\n");
 * if (lineDiff(many("a"), many("b")) !== null) throw new Error("too different: not drawn");
 * ```
 */
export function lineDiff(before: string, after: string): Hunk[] | null {
  if (lineCount(before) > MAX_DIFF_INPUT_LINES || lineCount(after) > MAX_DIFF_INPUT_LINES) {
    return null;
  }
  const patch = structuredPatch("before", "after", before, after, "", "", {
    context: 3,
    maxEditLength: MAX_EDIT_LENGTH,
    timeout: DIFF_TIMEOUT_MS,
  });
  if (patch === undefined) return null;
  return patch.hunks.map((h) => ({
    header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
    lines: h.lines.filter((l) => !l.startsWith("\\")), // "\ No newline at end of file"
  }));
}

/**
 * How many lines a diff of these hunks draws (null: none).
 *
 * @param hunks from {@linkcode lineDiff}
 * @returns the line count, hunk headers included
 *
 * @example
 * ```ts
 * import { drawnLines, lineDiff } from "./diff_view.tsx";
 * if (drawnLines(lineDiff("a\n", "b\n")) !== 3 || drawnLines(null) !== 0) throw new Error();
 * ```
 */
export function drawnLines(hunks: readonly Hunk[] | null): number {
  return hunks === null ? 0 : hunks.reduce((n, h) => n + h.lines.length + 1, 0);
}

function lineCount(text: string): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * One file's line diff, drawn; `children` (a summary of the change) go
 * under the file's heading, before the lines.
 *
 * @example
 * ```tsx
 * import { FileDiff } from "./diff_view.tsx";
 * const html = String(await (<FileDiff path="flags/a.toml" before={"x = 1\n"} after={"x = 2\n"} />));
 * if (!html.includes('class="add"') || !html.includes("flags/a.toml")) throw new Error(html);
 * ```
 */
export function FileDiff(
  props: {
    path: string;
    before: string;
    after: string;
    /** The line diff, when the caller computed it already. */
    hunks?: Hunk[] | null;
    children?: Child;
  },
) {
  const hunks = props.hunks !== undefined ? props.hunks : lineDiff(props.before, props.after);
  const status = props.before === "" ? "added" : props.after === "" ? "removed" : "changed";
  return (
    <FileCard path={props.path} status={status}>
      {props.children}
      {hunks === null
        ? (
          <p class="muted small">
            Too large or too different to draw line by line: compare the two versions with the
            command line tool (cfgtool pull).
          </p>
        )
        : hunks.length === 0
        ? <p class="muted small">No change.</p>
        : (
          <pre class="diff">{hunks.map((h) => (
          <>
            <span class="hunk">{h.header}</span>
            {h.lines.map((l) =>
              l.startsWith("+")
                ? <span class="add"><span class="sr-only">added: </span>{l}</span>
                : l.startsWith("-")
                ? <span class="del"><span class="sr-only">removed: </span>{l}</span>
                : <span>{l}</span>
            )}
          </>
        ))}</pre>
        )}
    </FileCard>
  );
}

/**
 * The card of one file that differs: a section named by its path and
 * status, with both as its heading, and what is said about it (the
 * children).
 *
 * @example
 * ```tsx
 * import { FileCard } from "./diff_view.tsx";
 * const html = String(await (<FileCard path="a.toml" status="removed"><p>gone</p></FileCard>));
 * if (!html.includes('aria-label="a.toml (removed)"') || !html.includes('<span class="badge">removed</span>')) {
 *   throw new Error(html);
 * }
 * ```
 */
export function FileCard(props: { path: string; status: string; children?: Child }) {
  return (
    <section class="card" aria-label={`${props.path} (${props.status})`}>
      <h3 class="mono small">
        {props.path} <span class="badge">{props.status}</span>
      </h3>
      {props.children}
    </section>
  );
}
