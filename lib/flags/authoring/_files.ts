/**
 * The files of the version being edited, read for an edit: a flag's,
 * a segment's, `namespace.toml`; the keys a manifest holds; and the one
 * way an edit writes a file back.
 *
 * @module
 */
import { compareUtf8 } from "../../bytes.ts";
import { parseToml } from "../../toml.ts";
import { MAX_FILE_BYTES, parseManifestPath } from "../model.ts";
import { refuse } from "./_args.ts";
import { type DataPath, type Doc, isTable } from "./_doc.ts";
import { type EditNames, newToml, readData, rewriteToml } from "./edit_toml.ts";
import {
  type FileEdits,
  flagFile,
  type ManifestTexts,
  NAMESPACE_FILE,
  segmentFile,
} from "./texts.ts";

/** A file read for an edit: its path, its text and its data. */
export interface FileData {
  /** The path in the manifest. */
  path: string;
  /** The text as it is; `""` for a file that does not exist yet. */
  text: string;
  /** Its data (a copy the edit may change). */
  doc: Doc;
}

/** How refusals of edits to `path` name it. */
export function namesOf(path: string): EditNames {
  return { file: `file ${path}`, editor: "the console" };
}

/** The flag's file; refused (naming `field`) when there is no such flag. */
export function readFlag(texts: ManifestTexts, key: unknown, field = "flag"): FileData {
  const path = typeof key === "string" ? flagFile(key) : "";
  const text = texts.get(path);
  if (text === undefined) refuse(`There is no flag ${String(key)}`, field);
  return { path, text, doc: readData(text, namesOf(path)) };
}

/** The segment's file; refused (naming `field`) when there is no such segment. */
export function readSegment(texts: ManifestTexts, key: unknown, field = "segment"): FileData {
  const path = typeof key === "string" ? segmentFile(key) : "";
  const text = texts.get(path);
  if (text === undefined) refuse(`There is no segment ${String(key)}`, field);
  return { path, text, doc: readData(text, namesOf(path)) };
}

/** `namespace.toml`, or an empty one (`schema_version = 1`) when the manifest has none. */
export function readNamespace(texts: ManifestTexts): FileData {
  const text = texts.get(NAMESPACE_FILE);
  if (text === undefined) return { path: NAMESPACE_FILE, text: "", doc: { schema_version: 1 } };
  return { path: NAMESPACE_FILE, text, doc: readData(text, namesOf(NAMESPACE_FILE)) };
}

/** The keys of the manifest's flags or segments, sorted. */
export function keysOf(texts: ManifestTexts, kind: "flag" | "segment"): string[] {
  const out: string[] = [];
  for (const path of texts.keys()) {
    const p = parseManifestPath(path);
    if (p !== undefined && p.kind === kind) out.push(p.key);
  }
  return out.sort(compareUtf8);
}

/** The environments `namespace.toml` declares, in file order (none when it cannot be read). */
export function environmentKeys(texts: ManifestTexts): string[] {
  const text = texts.get(NAMESPACE_FILE);
  if (text === undefined) return [];
  const r = parseToml(text, NAMESPACE_FILE);
  if (!r.ok) return [];
  const envs = isTable(r.table.namespace) ? r.table.namespace.environments : undefined;
  return isTable(envs) ? Object.keys(envs) : [];
}

/**
 * Parses every file of one kind that parses (edits that read the whole
 * manifest skip a file they cannot read: the validator reports it).
 */
export function readAll(
  texts: ManifestTexts,
  kind: "flag" | "segment",
): { key: string; path: string; doc: Doc }[] {
  const out: { key: string; path: string; doc: Doc }[] = [];
  for (const key of keysOf(texts, kind)) {
    const path = kind === "flag" ? flagFile(key) : segmentFile(key);
    const r = parseToml(texts.get(path)!, path);
    if (r.ok) out.push({ key, path, doc: r.table as Doc });
  }
  return out;
}

/**
 * The edit of one file: its text rewritten to hold `after` (see
 * edit_toml.ts), or nothing when the text does not change. A file that
 * would grow past the validator's limit is refused, naming `field`.
 */
export function writeFile(
  file: FileData,
  after: Doc,
  field: string,
  ordered: readonly DataPath[] = [],
): FileEdits {
  const text = file.text === ""
    ? newToml(after)
    : rewriteToml(file.text, after, { ...namesOf(file.path), ordered });
  return fileEdit(file.path, file.text, text, field);
}

/** The edit of a file to `text` (nothing when it is unchanged), within the size limit. */
export function fileEdit(path: string, before: string, text: string, field: string): FileEdits {
  if (text === before) return new Map();
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MAX_FILE_BYTES) {
    refuse(
      `${path} would be ${bytes} bytes; the limit is ${MAX_FILE_BYTES} bytes (1 MiB)`,
      field,
      { file: path },
    );
  }
  return new Map([[path, text]]);
}
