/**
 * Rewrites a TOML text so that it reads as new data while everything the
 * change does not touch keeps its text: the old and the new data are
 * compared table by table, and only what differs is written, where the
 * file already writes it.
 *
 * - A changed value is replaced in place (the rest of its line, a comment
 *   included, stays). In an array written one item a line, only the items
 *   that differ are rewritten, added or removed, so a diff of one id of a
 *   long list is one line.
 * - A removed key takes its row (and the comment lines right above it)
 *   with it; a removed table or array element takes its sections.
 * - A new key is written as a row of its table, before the next key of the
 *   new data that the file already has, or after the table's last row. A
 *   new table becomes a section of its own unless it fits on a row of a
 *   table that has a header; a new array of tables becomes `[[…]]`
 *   sections, placed before the sections of the next key or after the
 *   sections of its parent.
 * - Elements of an array of tables are matched by content (a longest
 *   common subsequence): an element that moved keeps its text, comments
 *   included; one that changed is edited in place.
 * - A key renamed with its value unchanged keeps its row or sections, with
 *   only the key rewritten.
 *
 * Blank lines around what changed are tidied to one (none at either end of
 * the file). A layout this cannot edit (a table written inline that gains
 * a section, dotted keys that a table must grow around) gives `undefined`:
 * the caller falls back to toml-patch.
 *
 * @module
 */
import { canonical, type DataPath, type Doc, isTable, sameValue, tomlKey } from "./_doc.ts";
import type { Layout, Row, Section } from "./_layout.ts";
import {
  fitsInline,
  headerKey,
  inlineValue,
  isTableArray,
  renderRow,
  renderSection,
  renderValue,
  type SectionArrays,
} from "./_render.ts";

/** Thrown inside the rewriter when the layout is not one it edits. */
const UNSUPPORTED: unique symbol = Symbol("unsupported");

function unsupported(): never {
  throw UNSUPPORTED;
}

/** Most cells of the table of a longest common subsequence before elements are matched by position. */
const MAX_LCS_CELLS = 250_000;

/**
 * The text rewritten to read as `after`, or undefined when its layout is
 * not one this module edits.
 *
 * @param layout the text's layout
 * @param before the text's data (as lib/toml.ts parses it)
 * @param after the data wanted
 * @returns the new text, or undefined
 */
export function rewriteText(
  layout: Layout,
  before: Doc,
  after: Doc,
  arrays: SectionArrays,
): string | undefined {
  const r = new Rewriter(layout, arrays);
  try {
    r.table([], before, after);
    return r.result();
  } catch (err) {
    if (err === UNSUPPORTED) return undefined;
    throw err;
  }
}

interface Splice {
  start: number;
  end: number;
  text: string;
  seq: number;
  /** Rows (-1) go before sections (0) inserted at the same offset. */
  rank: number;
}

class Rewriter {
  readonly #layout: Layout;
  readonly #splices: Splice[] = [];
  readonly #deleted = new Set<number>();
  /** Sections that get new rows. */
  readonly #rowsAdded = new Set<Section>();
  /** Headers written for tables that only their sub-tables implied, by path. */
  readonly #headers = new Map<string, { rows: string[]; splice: Splice }>();
  readonly #blank: boolean;
  readonly #nl: string;
  readonly #arrays: SectionArrays;
  #seq = 0;

  constructor(layout: Layout, arrays: SectionArrays) {
    this.#layout = layout;
    this.#arrays = arrays;
    this.#nl = layout.nl;
    const headed = layout.sections.filter((s) => s.kind !== "root" && s.ownedStart > 1);
    this.#blank = headed.length === 0 || headed.some((s) => layout.isBlank(s.ownedStart - 1));
  }

  /** Makes table `path` read `after` instead of `before`. */
  table(path: DataPath, before: Doc, after: Doc): void {
    const removed = Object.keys(before).filter((k) => !Object.hasOwn(after, k));
    const renamedFrom = new Map<string, string>();
    for (const k of Object.keys(after)) {
      if (Object.hasOwn(before, k)) continue;
      const from = removed.find((r) =>
        ![...renamedFrom.values()].includes(r) && sameValue(before[r], after[k]) &&
        this.#canRename([...path, r])
      );
      if (from !== undefined) renamedFrom.set(k, from);
    }
    const renamed = new Set(renamedFrom.values());
    // A value whose kind changes where the file writes it as a section
    // (a table that becomes a list) is removed, then written anew.
    const retyped = new Set<string>();
    for (const k of Object.keys(before)) {
      if (!Object.hasOwn(after, k)) {
        if (!renamed.has(k)) this.#remove([...path, k]);
      } else if (!sameValue(before[k], after[k])) {
        if (this.#retyped([...path, k], before[k], after[k])) {
          this.#remove([...path, k]);
          retyped.add(k);
        } else this.#change([...path, k], before[k], after[k]);
      }
    }
    const written = (k: string) =>
      (Object.hasOwn(before, k) && !retyped.has(k)) || renamedFrom.has(k);
    const keys = Object.keys(after);
    keys.forEach((k, i) => {
      if (Object.hasOwn(before, k) && !retyped.has(k)) return;
      const from = renamedFrom.get(k);
      if (from !== undefined) return this.#rename([...path, from], k);
      const next = keys.slice(i + 1).find(written);
      this.#add(path, k, after[k], next === undefined ? undefined : renamedFrom.get(next) ?? next);
    });
    // A header left with no rows, over a table its sub-tables still imply, goes too.
    const own = path.length > 0 ? this.#layout.section(path) : undefined;
    if (
      own !== undefined && own.kind === "table" && keys.length > 0 &&
      own.ownedStart === own.headerLine && !this.#rowsAdded.has(own) &&
      this.#emptied(own.headerLine + 1, own.lastLine)
    ) this.#deleteLines(own.headerLine, own.headerLine);
    // A table that only its sub-tables implied, and that keeps none, needs a header of its own.
    if (keys.length === 0 && path.length > 0 && this.#where(path) === "implicit") {
      const first = this.#layout.sectionsUnder(path, true)[0];
      if (first === undefined || path.some((p) => typeof p === "number")) unsupported();
      this.#insertBefore(first.ownedStart, this.#headed(path, []));
    }
  }

  /** The text with every edit applied and the blank lines around them tidied. */
  result(): string {
    const L = this.#layout;
    // Lines removed as a whole go as one splice per run; an insertion that
    // falls inside a run goes to its start.
    const lines = [...this.#deleted].sort((a, b) => a - b);
    const runs: [number, number][] = [];
    for (let i = 0; i < lines.length;) {
      let j = i;
      while (j + 1 < lines.length && lines[j + 1] === lines[j]! + 1) j++;
      runs.push([L.lineStart(lines[i]!), L.afterLine(lines[j]!)]);
      i = j + 1;
    }
    for (const s of this.#splices) {
      if (s.start !== s.end) continue;
      const run = runs.find(([a, b]) => a < s.start && s.start < b);
      if (run !== undefined) s.start = s.end = run[0];
    }
    for (const [start, end] of runs) {
      this.#splices.push({ start, end, text: "", seq: -1, rank: 0 });
    }
    // One pass from the start; at one offset, insertions (rows first, then
    // in the order they were made) go before a removal.
    const order = [...this.#splices].sort((a, b) =>
      a.start - b.start || (a.end - a.start) - (b.end - b.start) || a.rank - b.rank ||
      a.seq - b.seq
    );
    let text = "";
    let cursor = 0;
    const touched: [number, number][] = [];
    for (const s of order) {
      if (s.start < cursor) unsupported();
      text += L.text.slice(cursor, s.start);
      touched.push([text.length, text.length + s.text.length]);
      text += s.text;
      cursor = s.end;
    }
    text += L.text.slice(cursor);
    return tidy(text, touched, this.#nl, L.text);
  }

  // --- what is written where

  #where(path: DataPath): "row" | "section" | "elements" | "implicit" | "absent" {
    const L = this.#layout;
    if (L.row(path) !== undefined) return "row";
    if (path.length === 0 || L.section(path) !== undefined) return "section";
    if (L.elements(path).length > 0) return "elements";
    if (L.sectionsUnder(path, true).length > 0 || L.rowsUnder(path, true).length > 0) {
      return "implicit";
    }
    return "absent";
  }

  // --- removals

  #remove(path: DataPath): void {
    const L = this.#layout;
    const sections = L.sectionsUnder(path);
    const rows = L.rowsUnder(path).filter((r) => !sections.includes(r.section));
    if (sections.length === 0 && rows.length === 0) unsupported();
    for (const s of sections) this.#deleteLines(s.ownedStart, s.lastLine);
    for (const r of rows) this.#deleteLines(r.ownedStart, r.lastLine);
  }

  /** Whether every line from `from` to `to` is removed or blank. */
  #emptied(from: number, to: number): boolean {
    for (let l = from; l <= to; l++) {
      if (!this.#deleted.has(l) && !this.#layout.isBlank(l)) return false;
    }
    return true;
  }

  #deleteLines(from: number, to: number): void {
    for (let l = from; l <= to; l++) this.#deleted.add(l);
  }

  // --- changes

  #change(path: DataPath, before: unknown, after: unknown): void {
    switch (this.#where(path)) {
      case "row": {
        const row = this.#layout.row(path)!;
        if (Array.isArray(before) && Array.isArray(after) && row.value.type === "InlineArray") {
          this.#array(row, before, after);
        } else this.#replaceValue(row, after);
        return;
      }
      case "section":
      case "implicit":
        if (isTable(before) && isTable(after)) return this.table(path, before, after);
        return unsupported();
      case "elements":
        if (!Array.isArray(before) || !before.every(isTable)) return unsupported();
        return this.#elements(path, before, after as Doc[]);
      case "absent":
        return unsupported();
    }
  }

  /** Whether a new value cannot be written where the file writes the old one. */
  #retyped(path: DataPath, before: unknown, after: unknown): boolean {
    switch (this.#where(path)) {
      case "section":
      case "implicit":
        return !(isTable(before) && isTable(after));
      case "elements":
        return !(Array.isArray(after) && after.length > 0 && after.every(isTable));
      default:
        return false;
    }
  }

  #replaceValue(row: Row, value: unknown): void {
    const L = this.#layout;
    const start = L.offset(row.value.loc.start);
    const text = renderValue(value, {
      indent: row.indent,
      column: row.value.loc.start.column,
      nl: this.#nl,
    });
    this.#splice(start, L.offset(row.value.loc.end), text);
  }

  /** An array value written inline: only the items that differ change. */
  #array(row: Row, before: unknown[], after: unknown[]): void {
    const L = this.#layout;
    // deno-lint-ignore no-explicit-any
    const items = row.value.items as any[];
    if (items.length !== before.length) return this.#replaceValue(row, after);
    let p = 0;
    while (p < before.length && p < after.length && sameValue(before[p], after[p])) p++;
    let s = 0;
    while (
      s < before.length - p && s < after.length - p &&
      sameValue(before[before.length - 1 - s], after[after.length - 1 - s])
    ) s++;
    const oldMid = before.length - p - s;
    const newMid = after.length - p - s;
    const multiline = items.length > 0 &&
      row.value.loc.start.line !== row.value.loc.end.line &&
      items.every((it, i) =>
        it.loc.start.line > (i === 0 ? row.value.loc.start.line : items[i - 1].loc.end.line)
      ) && items[items.length - 1].loc.end.line < row.value.loc.end.line;
    if (!multiline) {
      if (oldMid !== newMid) return this.#replaceValue(row, after);
      for (let i = p; i < p + oldMid; i++) this.#replaceItem(items[i], after[i]);
      return;
    }
    const paired = Math.min(oldMid, newMid);
    for (let i = p; i < p + paired; i++) this.#replaceItem(items[i], after[i]);
    // Removed items take their lines with them.
    for (let i = p + paired; i < p + oldMid; i++) {
      const it = items[i];
      this.#deleteLines(it.loc.start.line, it.loc.end.line);
    }
    if (newMid > paired) {
      const added = after.slice(p + paired, p + newMid);
      const prev = p + paired - 1;
      const indent = /^[ \t]*/.exec(L.line(items[0].loc.start.line))![0];
      const atEnd = s === 0;
      const trailingComma = items[items.length - 1].comma === true;
      const lines = added.map((v, i) => {
        const last = atEnd && i === added.length - 1;
        return `${indent}${inlineValue(v)}${last && !trailingComma ? "" : ","}${this.#nl}`;
      });
      if (prev >= 0) {
        const it = items[prev];
        if (atEnd && !it.comma) {
          this.#splice(L.offset(it.item.loc.end), L.offset(it.item.loc.end), ",");
        }
        this.#insertBefore(it.loc.end.line + 1, lines.join(""));
      } else {
        this.#insertBefore(row.value.loc.start.line + 1, lines.join(""));
      }
    }
  }

  // deno-lint-ignore no-explicit-any
  #replaceItem(item: any, value: unknown): void {
    const L = this.#layout;
    this.#splice(L.offset(item.item.loc.start), L.offset(item.item.loc.end), inlineValue(value));
  }

  /** The elements of an array of tables: kept, moved, edited in place, removed or added. */
  #elements(path: DataPath, before: Doc[], after: Doc[]): void {
    const L = this.#layout;
    const els = L.elements(path);
    if (els.length !== before.length || els.some((e) => e === undefined)) unsupported();
    const co = before.map(canonical);
    const cn = after.map(canonical);
    type Source = { kind: "keep" | "modify" | "move"; from: number } | { kind: "new" };
    const src: (Source | undefined)[] = new Array(after.length).fill(undefined);
    const used: boolean[] = new Array(before.length).fill(false);
    const pairs = commonSubsequence(co, cn);
    for (const [i, j] of pairs) {
      src[j] = { kind: "keep", from: i };
      used[i] = true;
    }
    cn.forEach((c, j) => {
      if (src[j] !== undefined) return;
      const i = co.findIndex((x, k) => !used[k] && x === c);
      if (i === -1) return;
      src[j] = { kind: "move", from: i };
      used[i] = true;
    });
    // Between two kept elements, what was there and what is there now pair up in order.
    let prevI = -1;
    let prevJ = -1;
    for (const [i, j] of [...pairs, [before.length, after.length] as const]) {
      const olds: number[] = [];
      for (let k = prevI + 1; k < i; k++) if (!used[k]) olds.push(k);
      const news: number[] = [];
      for (let k = prevJ + 1; k < j; k++) if (src[k] === undefined) news.push(k);
      for (let k = 0; k < Math.min(olds.length, news.length); k++) {
        src[news[k]!] = { kind: "modify", from: olds[k]! };
        used[olds[k]!] = true;
      }
      prevI = i;
      prevJ = j;
    }
    for (let j = 0; j < after.length; j++) src[j] ??= { kind: "new" };
    const moved = new Set(src.flatMap((x) => x?.kind === "move" ? [x.from] : []));
    before.forEach((_, i) => {
      if (!used[i] || moved.has(i)) {
        for (const s of L.sectionsUnder([...path, i])) this.#deleteLines(s.ownedStart, s.lastLine);
      }
    });
    src.forEach((x, j) => {
      if (x?.kind === "modify") this.table([...path, x.from], before[x.from]!, after[j]!);
    });
    // Elements that are new here go before the next element that stays in place.
    const inPlace = (x: Source | undefined) =>
      x !== undefined && (x.kind === "keep" || x.kind === "modify");
    let pending: string[] = [];
    const flush = (boundary: number) => {
      if (pending.length === 0) return;
      const sep = this.#blank ? this.#nl + this.#nl : this.#nl;
      const blank = this.#blank ? this.#nl : "";
      this.#insertBefore(boundary, blank + pending.join(sep) + this.#nl + blank);
      pending = [];
    };
    let lastInPlace: Section | undefined;
    src.forEach((x, j) => {
      if (inPlace(x)) {
        const el = els[(x as { from: number }).from]!;
        flush(el.ownedStart);
        lastInPlace = el;
        return;
      }
      if (x!.kind === "move") {
        const el = els[(x as { from: number }).from]!;
        const end = L.familyEnd(el);
        pending.push(
          L.text.slice(L.lineStart(el.ownedStart), L.afterLine(end)).replace(/\r?\n$/, ""),
        );
      } else {
        pending.push(renderSection([...path, j], after[j]!, this.#sectionOptions(true)));
      }
    });
    flush(lastInPlace !== undefined ? L.familyEnd(lastInPlace) + 1 : els[0]!.ownedStart);
  }

  // --- additions

  #add(path: DataPath, key: string, value: unknown, anchor: string | undefined): void {
    const L = this.#layout;
    const full = [...path, key];
    const indexed = path.some((p) => typeof p === "number");
    const section = L.section(path);
    if (isTableArray(value) && !indexed && this.#arrays(full)) {
      const blocks = value.map((item, i) =>
        renderSection([...full, i], item, this.#sectionOptions(true))
      );
      return this.#insertBlocks(path, blocks, anchor);
    }
    const headed = section !== undefined && section.kind !== "root";
    const indent = section?.rows[section.rows.length - 1]?.indent ?? "";
    if (isTable(value) && !indexed && !(headed && fitsInline(key, value, indent))) {
      return this.#insertBlocks(
        path,
        [renderSection(full, value, this.#sectionOptions(false))],
        anchor,
      );
    }
    const row = renderRow(key, value, indent, this.#nl);
    if (section === undefined) {
      // The table exists only through its sub-tables: give it a header
      // before them (one header, however many rows it gets).
      if (indexed) unsupported();
      const made = this.#headers.get(JSON.stringify(path));
      if (made !== undefined) {
        made.rows.push(row);
        made.splice.text = this.#headed(path, made.rows);
        return;
      }
      const first = L.sectionsUnder(path, true)[0];
      if (first === undefined) unsupported();
      this.#insertBefore(first.ownedStart, this.#headed(path, [row]));
      this.#headers.set(JSON.stringify(path), {
        rows: [row],
        splice: this.#splices[this.#splices.length - 1]!,
      });
      return;
    }
    this.#rowsAdded.add(section);
    const anchorRow = anchor === undefined ? undefined : L.row([...path, anchor]);
    if (anchorRow !== undefined && anchorRow.section === section) {
      return this.#insertBefore(anchorRow.ownedStart, row + this.#nl, -1);
    }
    const last = section.rows[section.rows.length - 1];
    if (last !== undefined) return this.#insertBefore(last.lastLine + 1, row + this.#nl, -1);
    if (section.kind !== "root") {
      return this.#insertBefore(section.headerLine + 1, row + this.#nl, -1);
    }
    // The root without rows: after its comments, before the first section.
    const first = L.sections[1];
    const blank = first !== undefined && this.#blank && !L.isBlank(first.ownedStart - 1)
      ? this.#nl
      : "";
    const line = first === undefined
      ? section.lastLine + 1
      : Math.min(section.lastLine + 1, first.ownedStart);
    this.#insertBefore(line, row + this.#nl + blank, -1);
  }

  /** A new header for a table with its rows, as a block. */
  #headed(path: DataPath, rows: string[]): string {
    const blank = this.#blank ? this.#nl : "";
    return `[${headerKey(path)}]${this.#nl}${rows.map((r) => r + this.#nl).join("")}${blank}`;
  }

  /** New sections under `path`: before the sections of `anchor`, else after the last under `path`. */
  #insertBlocks(path: DataPath, blocks: string[], anchor: string | undefined): void {
    const L = this.#layout;
    const anchored = anchor === undefined ? [] : L.sectionsUnder([...path, anchor]);
    let boundary: number;
    if (anchored.length > 0) boundary = anchored[0]!.ownedStart;
    else {
      const family = L.sectionsUnder(path);
      if (family.length > 0) boundary = Math.max(...family.map((s) => s.lastLine)) + 1;
      else if (path.length === 0) boundary = L.lineCount + 1;
      else return unsupported();
    }
    const sep = this.#blank ? this.#nl + this.#nl : this.#nl;
    const blank = this.#blank ? this.#nl : "";
    this.#insertBefore(boundary, blank + blocks.join(sep) + this.#nl + blank);
  }

  #sectionOptions(element: boolean) {
    return { element, nl: this.#nl, blank: this.#blank, arrays: this.#arrays };
  }

  // --- renames

  #canRename(path: DataPath): boolean {
    const L = this.#layout;
    const row = L.row(path);
    if (row !== undefined) return !row.dotted;
    const sections = L.sectionsUnder(path);
    return sections.length > 0 &&
      L.rowsUnder(path).every((r) => sections.includes(r.section));
  }

  #rename(path: DataPath, to: string): void {
    const L = this.#layout;
    const row = L.row(path);
    if (row !== undefined) {
      return this.#splice(L.offset(row.key.loc.start), L.offset(row.key.loc.end), tomlKey(to));
    }
    const at = path.length - 1;
    for (const s of L.sectionsUnder(path)) {
      const renamed = s.path.map((p, i) => i === at ? to : p);
      const name = s.kind === "element"
        ? `[[${headerKey(renamed.slice(0, -1))}]]`
        : `[${headerKey(renamed)}]`;
      this.#splice(L.offset(s.headerKey!.loc.start), L.offset(s.headerKey!.loc.end), name);
    }
  }

  // --- splices

  #splice(start: number, end: number, text: string, rank = 0): void {
    this.#splices.push({ start, end, text, seq: this.#seq++, rank });
  }

  /**
   * Inserts text at the start of line `line` (past the last line: at the
   * end); `rank` -1 for a row, which goes before sections inserted there.
   */
  #insertBefore(line: number, text: string, rank = 0): void {
    const L = this.#layout;
    // Never inside lines being removed: at the start of the run instead.
    while (this.#deleted.has(line) && this.#deleted.has(line - 1)) line--;
    if (line > L.lineCount) {
      const end = L.text.length;
      const needsNl = end > 0 && !L.text.endsWith("\n");
      return this.#splice(end, end, (needsNl ? this.#nl : "") + text, rank);
    }
    const at = L.lineStart(line);
    this.#splice(at, at, text, rank);
  }
}

/**
 * Pairs of indices of a longest common subsequence of two lists of
 * strings; lists too long for the table are matched at their common
 * start and end only.
 */
function commonSubsequence(a: string[], b: string[]): [number, number][] {
  if (a.length * b.length > MAX_LCS_CELLS) {
    const out: [number, number][] = [];
    let p = 0;
    while (p < a.length && p < b.length && a[p] === b[p]) out.push([p, p++]);
    let s = 0;
    const tail: [number, number][] = [];
    while (
      s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]
    ) {
      tail.unshift([a.length - 1 - s, b.length - 1 - s]);
      s++;
    }
    return [...out, ...tail];
  }
  const n = a.length;
  const m = b.length;
  const t: number[][] = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i]![j] = a[i] === b[j] ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
    }
  }
  const out: [number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) out.push([i++, j++]);
    else if (t[i + 1]![j]! >= t[i]![j + 1]!) i++;
    else j++;
  }
  return out;
}

/**
 * Blank lines around the edits: a run of them touching an edit becomes one
 * line, or none at the start or end of the file; the file ends with a line
 * ending when it has any content.
 */
function tidy(text: string, touched: [number, number][], nl: string, original: string): string {
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  const starts: number[] = [];
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.length + (text.startsWith("\r\n", at + l.length) ? 2 : 1);
  }
  const near = new Set<number>();
  for (const [a, b] of touched) {
    let i = upperBound(starts, a) - 1;
    do {
      near.add(i - 1);
      near.add(i);
      near.add(i + 1);
      i++;
    } while (i < lines.length && starts[i]! <= b);
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length;) {
    if (lines[i]!.trim() !== "") {
      out.push(lines[i++]!);
      continue;
    }
    let j = i;
    while (j < lines.length && lines[j]!.trim() === "") j++;
    let edited = false;
    for (let k = i - 1; k <= j; k++) if (near.has(k)) edited = true;
    if (!edited) out.push(...lines.slice(i, j));
    else if (i > 0 && j < lines.length) out.push("");
    i = j;
  }
  if (out.length === 0) return "";
  const end = original === "" || /\r?\n$/.test(original) || text.endsWith("\n") ? nl : "";
  return out.join(nl) + end;
}

/** The index of the first item greater than `x` in a sorted list. */
function upperBound(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
