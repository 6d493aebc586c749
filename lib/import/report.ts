/**
 * The report `cfgtool import` prints: a summary line, then each flag and
 * segment of the source with what mapped, what did not and why, and notes;
 * then the notes on the export as a whole. `--json` prints the same as one
 * JSON object.
 *
 * @example
 * ```ts
 * import { reportLines } from "./report.ts";
 * const lines = reportLines({
 *   source: "flagd", file: "flags.json", out: "out",
 *   written: ["namespace.toml", "flags/a.toml"], replaced: [],
 *   result: { files: new Map(), notes: [], items: [{
 *     kind: "flag", key: "a", sourceKey: "A", written: true,
 *     mapped: ["variants: on, off (boolean)"], unmapped: [{ what: "metadata", why: "no place for it" }], notes: [],
 *   }] },
 * });
 * if (lines[0] !== "imported flags.json (flagd) into out: 1 flag written, 1 item with unmapped parts") throw new Error(lines[0]);
 * if (lines[1] !== "flag a (A in the source): written") throw new Error(lines[1]);
 * if (lines[3] !== "  unmapped: metadata: no place for it") throw new Error(lines[3]);
 * ```
 *
 * @module
 */
import type { ImportResult, ItemReport } from "./types.ts";

/** What one import did, for the report. */
export interface ImportRun {
  /** The tool (`--from`). */
  source: string;
  /** The export's file. */
  file: string;
  /** The output directory. */
  out: string;
  /** The files written, relative to `out`. */
  written: string[];
  /** The files `--force` replaced. */
  replaced: string[];
  /** The importer's result. */
  result: ImportResult;
}

function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The summary line: what was written, what was not. */
export function summaryLine(run: ImportRun): string {
  const items = run.result.items;
  const parts: string[] = [];
  const flags = items.filter((i) => i.kind === "flag" && i.written).length;
  const segments = items.filter((i) => i.kind === "segment" && i.written).length;
  parts.push(
    `${count(flags, "flag")}${segments > 0 ? ` and ${count(segments, "segment")}` : ""} written`,
  );
  const notWritten = items.filter((i) => !i.written).length;
  if (notWritten > 0) parts.push(`${count(notWritten, "item")} not written`);
  const partial = items.filter((i) => i.written && i.unmapped.length > 0).length;
  if (partial > 0) parts.push(`${count(partial, "item")} with unmapped parts`);
  return `imported ${run.file} (${run.source}) into ${run.out}: ${parts.join(", ")}`;
}

/** A name from the export as the report shows it: quoted (JSON) unless it is plain. */
function named(name: string): string {
  return /^[A-Za-z0-9._-]{1,200}$/.test(name) ? name : JSON.stringify(name);
}

function itemLines(item: ItemReport): string[] {
  const from = item.sourceKey !== undefined ? ` (${named(item.sourceKey)} in the source)` : "";
  const lines = [
    `${item.kind} ${named(item.key)}${from}: ${item.written ? "written" : "NOT written"}`,
  ];
  for (const m of item.mapped) lines.push(`  mapped: ${m}`);
  for (const u of item.unmapped) lines.push(`  unmapped: ${u.what}: ${u.why}`);
  for (const n of item.notes) lines.push(`  note: ${n}`);
  return lines;
}

/**
 * The report as lines of text: the summary, each item, the export's notes,
 * and the files `--force` replaced.
 */
export function reportLines(run: ImportRun): string[] {
  const lines = [summaryLine(run)];
  for (const item of run.result.items) lines.push(...itemLines(item));
  for (const n of run.result.notes) lines.push(`note: ${n}`);
  for (const r of run.replaced) lines.push(`replaced: ${r}`);
  return lines;
}

/**
 * The report as one JSON value (`--json`): `{source, file, out, summary,
 * written, replaced, items, notes}`, items as {@linkcode ItemReport}.
 *
 * @example
 * ```ts
 * import { reportJson } from "./report.ts";
 * const j = reportJson({ source: "flipt", file: "f.yml", out: "o", written: [], replaced: [],
 *   result: { files: new Map(), items: [], notes: ["x"] } });
 * if (j.notes[0] !== "x" || j.summary !== "imported f.yml (flipt) into o: 0 flags written") throw new Error(j.summary);
 * ```
 */
export function reportJson(run: ImportRun): {
  source: string;
  file: string;
  out: string;
  summary: string;
  written: string[];
  replaced: string[];
  items: ItemReport[];
  notes: string[];
} {
  return {
    source: run.source,
    file: run.file,
    out: run.out,
    summary: summaryLine(run),
    written: run.written,
    replaced: run.replaced,
    items: run.result.items,
    notes: run.result.notes,
  };
}
