/**
 * Small pieces every console page uses: times, notices (and the notice of
 * a refused form), the hidden CSRF field, a stacked bar of rollout weights
 * (SVG attributes, since the Content-Security-Policy forbids inline
 * styles), a description list of facts, a table with its headings, the
 * pager under a list, and the environment switcher of namespace pages.
 *
 * @module
 */
import type { Child } from "hono/jsx";
import { CSRF_FIELD } from "../http/auth/session_cookie.ts";

/**
 * A time, readable, with the exact instant in `datetime`.
 *
 * @example
 * ```tsx
 * import { Time } from "./widgets.tsx";
 * const html = String(await (<Time iso="2026-11-24T06:00:00.000Z" />));
 * if (!html.includes("2026-11-24 06:00 UTC")) throw new Error(html);
 * ```
 */
export function Time(props: { iso: string }) {
  const text = props.iso.replace("T", " ").replace(/:\d\d(\.\d+)?Z$/, " UTC");
  return <time datetime={props.iso}>{text}</time>;
}

/**
 * The hidden field that carries the page's CSRF token in a form.
 *
 * @example
 * ```tsx
 * import { CsrfField } from "./widgets.tsx";
 * if (!String(await (<CsrfField token="abc" />)).includes('value="abc"')) throw new Error();
 * ```
 */
export function CsrfField(props: { token: string }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.token} />;
}

/**
 * A notice: `error` ones are announced as alerts.
 *
 * @example
 * ```tsx
 * import { Notice } from "./widgets.tsx";
 * if (!String(await (<Notice kind="error">No</Notice>)).includes('role="alert"')) throw new Error();
 * ```
 */
export function Notice(props: { kind?: "info" | "error"; children: Child }) {
  return props.kind === "error"
    ? <div class="notice error" role="alert">{props.children}</div>
    : <div class="notice" role="status">{props.children}</div>;
}

/**
 * The notice of a refused form, above the form: nothing when `message` is
 * undefined. Its paragraph carries `id`, so a field can point at it with
 * `aria-describedby`.
 *
 * @example
 * ```tsx
 * import { ProblemNotice } from "./widgets.tsx";
 * const html = String(await (<ProblemNotice id="x-error" message="Too long" />));
 * if (!html.includes('<p id="x-error">Too long</p>') || !html.includes('role="alert"')) throw new Error(html);
 * if (String(await (<ProblemNotice message={undefined} />)) !== "") throw new Error();
 * ```
 */
export function ProblemNotice(props: { message: string | undefined; id?: string }) {
  if (props.message === undefined) return null;
  return (
    <Notice kind="error">
      <p id={props.id}>{props.message}</p>
    </Notice>
  );
}

/**
 * Rollout weights as one stacked bar with a legend (weights out of
 * 100000, shown as percentages).
 *
 * @example
 * ```tsx
 * import { WeightBar } from "./widgets.tsx";
 * const html = String(await (<WeightBar entries={[{ variation: "on", weight: 25000 }, { variation: "off", weight: 75000 }]} />));
 * if (!html.includes("on 25%") || !html.includes('width="75%"')) throw new Error(html);
 * ```
 */
export function WeightBar(props: { entries: readonly { variation: string; weight: number }[] }) {
  let x = 0;
  const total = props.entries.reduce((s, e) => s + e.weight, 0) || 1;
  const label = props.entries.map((e) => `${e.variation} ${percent(e.weight, total)}`).join(", ");
  return (
    <div>
      <svg
        class="bar"
        role="img"
        aria-label={`Rollout: ${label}`}
        viewBox="0 0 100 4"
        preserveAspectRatio="none"
      >
        {props.entries.map((e) => {
          const w = (e.weight / total) * 100;
          const rect = <rect x={`${x}%`} y="0" width={`${round(w)}%`} height="100%" />;
          x += w;
          return rect;
        })}
      </svg>
      <ul class="legend">
        {props.entries.map((e) => <li>{e.variation} {percent(e.weight, total)}</li>)}
      </ul>
    </div>
  );
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

function percent(weight: number, total: number): string {
  return `${round((weight / total) * 100)}%`;
}

/**
 * Facts about one thing as a description list (`dl.facts`: label and
 * value side by side, stacked at 390 px); its children are
 * {@linkcode Fact}s.
 *
 * @example
 * ```tsx
 * import { Fact, Facts } from "./widgets.tsx";
 * const html = String(await (<Facts><Fact label="Type">boolean</Fact></Facts>));
 * if (html !== '<dl class="facts"><dt>Type</dt><dd>boolean</dd></dl>') throw new Error(html);
 * ```
 */
export function Facts(props: { children: Child; class?: string }) {
  return <dl class={props.class ? `facts ${props.class}` : "facts"}>{props.children}</dl>;
}

/**
 * One fact of a {@linkcode Facts} list: its label and its value.
 *
 * @example
 * ```tsx
 * import { Fact } from "./widgets.tsx";
 * const html = String(await (<Fact label="Files" class="wrap">7</Fact>));
 * if (html !== '<dt>Files</dt><dd class="wrap">7</dd>') throw new Error(html);
 * ```
 */
export function Fact(props: { label: Child; class?: string; children?: Child }) {
  return (
    <>
      <dt>{props.label}</dt>
      {props.class ? <dd class={props.class}>{props.children}</dd> : <dd>{props.children}</dd>}
    </>
  );
}

/** A column of a {@linkcode DataTable}: its heading, and whether it is hidden at 390 px. */
export type Column = string | { label: string; secondary: true };

/**
 * A table in its scrolling frame: a caption (shown small, or only to screen
 * readers with `captionHidden`), a heading row of column headers
 * (`scope="col"`; secondary columns are hidden on narrow screens) and the
 * rows, its children.
 *
 * @example
 * ```tsx
 * import { DataTable } from "./widgets.tsx";
 * const html = String(await (
 *   <DataTable id="t" columns={["Flag", { label: "Type", secondary: true }]} caption="Flags">
 *     <tr><td>a</td><td>b</td></tr>
 *   </DataTable>
 * ));
 * if (!html.includes('<th scope="col" class="hide-narrow">Type</th>')) throw new Error(html);
 * if (!html.startsWith('<div class="table-wrap"><table id="t"><caption class="muted small">Flags')) throw new Error(html);
 * ```
 */
export function DataTable(
  props: {
    columns: readonly Column[];
    id?: string;
    class?: string;
    caption?: Child;
    captionHidden?: boolean;
    children: Child;
  },
) {
  const attributes: Record<string, string> = {};
  if (props.id !== undefined) attributes.id = props.id;
  if (props.class !== undefined) attributes.class = props.class;
  return (
    <div class="table-wrap">
      <table {...attributes}>
        {props.caption === undefined
          ? null
          : (
            <caption class={props.captionHidden ? "sr-only" : "muted small"}>
              {props.caption}
            </caption>
          )}
        <thead>
          <tr>
            {props.columns.map((col) =>
              typeof col === "string"
                ? <th scope="col">{col}</th>
                : <th scope="col" class="hide-narrow">{col.label}</th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

/**
 * The links under a paged list: back to its first page, and on to the next
 * (`rel="next"`); nothing when there is neither.
 *
 * @example
 * ```tsx
 * import { Pager } from "./widgets.tsx";
 * const html = String(await (<Pager label="Pages of versions" next="/v?after=3" />));
 * if (!html.includes('<a href="/v?after=3" rel="next">Older</a>')) throw new Error(html);
 * if (String(await (<Pager label="x" />)) !== "") throw new Error();
 * ```
 */
export function Pager(
  props: {
    label: string;
    /** The first page, when this is not it. */
    first?: string | undefined;
    /** The next page, when there is one. */
    next?: string | undefined;
    firstText?: string;
    nextText?: string;
  },
) {
  if (props.first === undefined && props.next === undefined) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      {props.first === undefined ? null : <a href={props.first}>{props.firstText ?? "Newest"}</a>}
      {props.next === undefined
        ? null
        : <a href={props.next} rel="next">{props.nextText ?? "Older"}</a>}
    </nav>
  );
}

/** One choice of an {@linkcode EnvironmentNav}. */
export interface NavChoice {
  label: string;
  href: string;
  current: boolean;
}

/**
 * The environment switcher of a namespace page: its choices (the current
 * one marked for screen readers and in bold), then more links, each after
 * a middle dot.
 *
 * @example
 * ```tsx
 * import { EnvironmentNav } from "./widgets.tsx";
 * const html = String(await (
 *   <EnvironmentNav choices={[{ label: "prod", href: "/p", current: true }]} links={[<a href="/v">Versions</a>]} />
 * ));
 * if (!html.includes('<a href="/p" aria-current="page">prod</a>') || !html.includes("Versions")) throw new Error(html);
 * ```
 */
export function EnvironmentNav(props: { choices: readonly NavChoice[]; links?: readonly Child[] }) {
  return (
    <nav aria-label="Environments" class="card small">
      <span class="muted">Environment:</span> {props.choices.length === 0
        ? <span class="muted">none declared</span>
        : props.choices.map((choice) => (
          <>
            <a href={choice.href} aria-current={choice.current ? "page" : undefined}>
              {choice.label}
            </a>
            {" "}
          </>
        ))}
      {(props.links ?? []).map((link) => (
        <>
          <span class="muted">·</span> {link}
          {" "}
        </>
      ))}
    </nav>
  );
}
