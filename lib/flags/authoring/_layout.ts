/**
 * Where a TOML text writes each thing: its rows (`key = value`, with the
 * offsets of the value), its sections (`[table]` and each `[[array]]`
 * element, with the comment lines just above a header that belong to it),
 * all addressed by data path (`["rule", 1, "segment"]`). Built from
 * toml-patch's syntax tree; line numbers are 1-based, offsets count UTF-16
 * code units as JavaScript strings do.
 *
 * @module
 */
import { parseDocument } from "toml-patch";
import type { DataPath } from "./_doc.ts";

/** A syntax node as toml-patch gives it (only what is read here). */
interface Node {
  type: string;
  loc: { start: { line: number; column: number }; end: { line: number; column: number } };
  // deno-lint-ignore no-explicit-any
  [k: string]: any;
}

/** One `key = value` written as a row of a section (or of the root). */
export interface Row {
  /** Its data path: the section's path and the key's parts. */
  path: DataPath;
  /** Whether the key is dotted (`a.b = 1`). */
  dotted: boolean;
  /** The key node. */
  key: Node;
  /** The value node. */
  value: Node;
  /** First and last line of the row. */
  firstLine: number;
  lastLine: number;
  /** First line of the comment lines just above it that belong to it. */
  ownedStart: number;
  /** Its indentation. */
  indent: string;
  /** The section it is written in. */
  section: Section;
}

/** The root, a `[table]` section or one `[[array]]` element. */
export interface Section {
  /** Data path: `[]` for the root, the table's path, or the array's path and the element's index. */
  path: DataPath;
  /** What it is. */
  kind: "root" | "table" | "element";
  /** The header line (0 for the root). */
  headerLine: number;
  /** The header key node (none for the root). */
  headerKey?: Node;
  /** First line of the comment lines just above the header that belong to it. */
  ownedStart: number;
  /** Last line of its own rows and comments (the header line when it has none). */
  lastLine: number;
  /** Its rows in file order. */
  rows: Row[];
}

const key = (p: DataPath) => JSON.stringify(p);

/** Whether `path` starts with `prefix` (and is longer when `strict`). */
export function under(path: DataPath, prefix: DataPath, strict = false): boolean {
  if (path.length < prefix.length || (strict && path.length === prefix.length)) return false;
  for (let i = 0; i < prefix.length; i++) if (path[i] !== prefix[i]) return false;
  return true;
}

/** The locations of everything a TOML text writes. */
export class Layout {
  /** The text. */
  readonly text: string;
  /** Offset of the start of each line (index 0 is line 1). */
  readonly lineStarts: number[];
  /** Sections in file order, the root first. */
  readonly sections: Section[] = [];
  /** Every row, in file order. */
  readonly rows: Row[] = [];
  readonly #rowByPath = new Map<string, Row>();
  readonly #sectionByPath = new Map<string, Section>();
  readonly #standalone = new Set<number>();
  readonly #lineEnding: string;

  /**
   * Indexes a text; throws what toml-patch throws when it does not parse.
   *
   * @param text TOML
   */
  constructor(text: string) {
    this.text = text;
    this.lineStarts = [0];
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") this.lineStarts.push(i + 1);
    this.#lineEnding = text.includes("\r\n") ? "\r\n" : "\n";
    const cst = parseDocument(text).cst as unknown as Node[];
    // Lines inside a row (multi-line arrays and strings) are never comment lines of their own.
    const inRow = new Set<number>();
    const comments: Node[] = [];
    const visit = (items: Node[]) => {
      for (const n of items) {
        if (n.type === "KeyValue") {
          for (let l = n.loc.start.line + 1; l <= n.loc.end.line; l++) inRow.add(l);
        } else if (n.type === "Comment") comments.push(n);
        else if (n.type === "Table" || n.type === "TableArray") visit(n.items as Node[]);
      }
    };
    visit(cst);
    for (const c of comments) {
      const l = c.loc.start.line;
      if (!inRow.has(l) && this.line(l).slice(0, c.loc.start.column).trim() === "") {
        this.#standalone.add(l);
      }
    }

    const root: Section = {
      path: [],
      kind: "root",
      headerLine: 0,
      ownedStart: 1,
      lastLine: 0,
      rows: [],
    };
    this.#addSection(root);
    const arrays = new Map<string, number>();
    let current = root;
    for (const n of cst) {
      if (n.type === "KeyValue") this.#addRow(current, n);
      else if (n.type === "Comment") {
        if (current === root) root.lastLine = Math.max(root.lastLine, n.loc.end.line);
      } else if (n.type === "Table" || n.type === "TableArray") {
        const parts = n.key.item.value as string[];
        const path: (string | number)[] = [];
        parts.forEach((p, i) => {
          path.push(p);
          const last = i === parts.length - 1;
          const count = arrays.get(key(path));
          if (count !== undefined && !(last && n.type === "TableArray")) path.push(count - 1);
        });
        if (n.type === "TableArray") {
          const count = arrays.get(key(path)) ?? 0;
          arrays.set(key(path), count + 1);
          path.push(count);
        }
        const headerLine = n.loc.start.line;
        const section: Section = {
          path,
          kind: n.type === "Table" ? "table" : "element",
          headerLine,
          headerKey: n.key,
          ownedStart: this.#ownedStart(headerLine),
          lastLine: headerLine,
          rows: [],
        };
        for (const item of n.items as Node[]) {
          if (item.type === "KeyValue") this.#addRow(section, item);
          section.lastLine = Math.max(section.lastLine, item.loc.end.line);
        }
        this.#addSection(section);
        current = section;
      }
    }
    // Comment lines just above a header belong to that header, not to the section before it.
    for (let i = 0; i < this.sections.length; i++) {
      const s = this.sections[i]!;
      const next = this.sections[i + 1];
      if (next !== undefined) s.lastLine = Math.min(s.lastLine, next.ownedStart - 1);
      while (s.lastLine > s.headerLine && this.isBlank(s.lastLine)) s.lastLine--;
    }
  }

  /** The line ending the text uses. */
  get nl(): string {
    return this.#lineEnding;
  }

  /** How many lines the text has (a final line ending does not start another). */
  get lineCount(): number {
    const n = this.lineStarts.length;
    return this.lineStarts[n - 1] === this.text.length && n > 1 ? n - 1 : n;
  }

  /** The text of line `l` without its line ending. */
  line(l: number): string {
    const start = this.lineStarts[l - 1];
    if (start === undefined) return "";
    const end = this.lineStarts[l] ?? this.text.length;
    return this.text.slice(start, end).replace(/\r?\n$/, "");
  }

  /** Whether line `l` holds only whitespace (lines past the end count as blank). */
  isBlank(l: number): boolean {
    return this.line(l).trim() === "";
  }

  /** Whether line `l` is a comment on a line of its own. */
  isCommentLine(l: number): boolean {
    return this.#standalone.has(l);
  }

  /** The offset where line `l` starts (the text's length past the end). */
  lineStart(l: number): number {
    return this.lineStarts[l - 1] ?? this.text.length;
  }

  /** The offset just after line `l` and its line ending. */
  afterLine(l: number): number {
    return this.lineStarts[l] ?? this.text.length;
  }

  /** The offset of a node position. */
  offset(pos: { line: number; column: number }): number {
    return this.lineStart(pos.line) + pos.column;
  }

  /** The row written at exactly this data path. */
  row(path: DataPath): Row | undefined {
    return this.#rowByPath.get(key(path));
  }

  /** The section (or the root, for `[]`) written at exactly this data path. */
  section(path: DataPath): Section | undefined {
    return this.#sectionByPath.get(key(path));
  }

  /** The sections whose path starts with `path`, in file order. */
  sectionsUnder(path: DataPath, strict = false): Section[] {
    return this.sections.filter((s) => s.kind !== "root" && under(s.path, path, strict));
  }

  /** The rows whose path starts with `path`. */
  rowsUnder(path: DataPath, strict = false): Row[] {
    return this.rows.filter((r) => under(r.path, path, strict));
  }

  /** The elements of the array of tables at `path`, by index. */
  elements(path: DataPath): Section[] {
    const out: Section[] = [];
    for (const s of this.sections) {
      if (
        s.kind === "element" && s.path.length === path.length + 1 && under(s.path, path)
      ) out[s.path[path.length] as number] = s;
    }
    return out;
  }

  /** The last line of a section and of the sections right after it that lie under it. */
  familyEnd(section: Section): number {
    const i = this.sections.indexOf(section);
    let end = section.lastLine;
    for (let j = i + 1; j < this.sections.length; j++) {
      const s = this.sections[j]!;
      if (!under(s.path, section.path, true)) break;
      end = s.lastLine;
    }
    return end;
  }

  #addSection(s: Section): void {
    this.sections.push(s);
    // A path written twice is not valid TOML; keep the first.
    if (!this.#sectionByPath.has(key(s.path))) this.#sectionByPath.set(key(s.path), s);
  }

  #addRow(section: Section, n: Node): void {
    const firstLine = n.loc.start.line;
    const row: Row = {
      path: [...section.path, ...(n.key.value as string[])],
      dotted: (n.key.value as string[]).length > 1,
      key: n.key,
      value: n.value,
      firstLine,
      lastLine: n.loc.end.line,
      ownedStart: this.#ownedStart(firstLine),
      indent: /^[ \t]*/.exec(this.line(firstLine))![0],
      section,
    };
    section.rows.push(row);
    this.rows.push(row);
    if (section.kind === "root") section.lastLine = Math.max(section.lastLine, row.lastLine);
    this.#rowByPath.set(key(row.path), row);
  }

  /** The first of the comment lines right above line `l` (no blank line between). */
  #ownedStart(l: number): number {
    let start = l;
    while (start > 1 && this.#standalone.has(start - 1)) start--;
    return start;
  }
}
