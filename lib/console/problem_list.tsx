/**
 * The problems a manifest would have after an edit or a quick change, as
 * an error notice: where each stands (file, line and column, key) and
 * what it is. Shown in place of the commit it stops.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { Notice } from "./widgets.tsx";

/**
 * The notice listing `problems`, or nothing when there are none.
 *
 * @example
 * ```tsx
 * import { ProblemList } from "./problem_list.tsx";
 * const problems = [{ path: "flags/a.toml", line: 3, key: "default", message: "no such variation" }];
 * const html = String(await (<ProblemList what="edit" problems={problems as never} />));
 * if (!html.includes("With this edit the manifest is not valid, so it cannot be committed (1 problem):")) {
 *   throw new Error(html);
 * }
 * if (!html.includes(":3:1") || String(await (<ProblemList what="edit" problems={[]} />)) !== "") {
 *   throw new Error(html);
 * }
 * ```
 */
export function ProblemList(props: { what: "edit" | "change"; problems: readonly Problem[] }) {
  const { problems } = props;
  if (problems.length === 0) return null;
  return (
    <Notice kind="error">
      <p>
        With this {props.what} the manifest is not valid, so it cannot be committed (
        {problems.length} problem{problems.length === 1 ? "" : "s"}):
      </p>
      <ul>
        {problems.map((p) => (
          <li>
            <code class="wrap">{p.path}</code>
            {p.line === undefined ? null : `:${p.line}:${p.column ?? 1}`}
            {p.key === undefined || p.key === "" ? null : (
              <>
                {" "}
                <code class="wrap">{p.key}</code>
              </>
            )}: {p.message}
          </li>
        ))}
      </ul>
    </Notice>
  );
}
