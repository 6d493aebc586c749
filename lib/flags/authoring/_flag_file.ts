/**
 * Reading and writing a flag's file for an edit: its variation names, its
 * type, and the one way an edit writes it back (checked with the
 * validator's rules, keys in the order files write them).
 *
 * @module
 */
import { FLAG_TYPES, type FlagType } from "../model.ts";
import { refuse } from "./_args.ts";
import { type Doc, FLAG_ORDER, isTable, withOrder } from "./_doc.ts";
import { writeFile } from "./_files.ts";
import { guardFlag } from "./_guard.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

/** Tables of a flag file whose key order matters. */
const ORDERED = [["variations"]] as const;

/** The variation names of a flag file's data, in file order. */
export function variationNames(doc: Doc): string[] {
  return isTable(doc.variations) ? Object.keys(doc.variations) : [];
}

/** The flag's type as written; a file without a valid one cannot be given values. */
export function flagTypeOf(doc: Doc): FlagType {
  if (!(FLAG_TYPES as readonly unknown[]).includes(doc.type)) {
    refuse("The flag's type is not one of boolean, string, number, object: fix its file", "value");
  }
  return doc.type as FlagType;
}

/** Checks a flag's new data with the validator's rules and writes it. */
export function writeFlag(
  texts: ManifestTexts,
  key: string,
  file: { path: string; text: string },
  doc: Doc,
  field: string,
  fields?: (key: string) => string,
): FileEdits {
  const after = withOrder(doc, FLAG_ORDER);
  guardFlag(texts, key, after, fields ?? flagField(after));
  return writeFile({ ...file, doc: after }, after, field, ORDERED);
}

/**
 * Form fields for a flag's key paths: `variations.<name>` becomes
 * `variations.<i>.value` (the variation's position), rules as in
 * {@linkcode formField}.
 */
export function flagField(doc: Doc): (key: string) => string {
  const names = variationNames(doc);
  return (key) => {
    const m = /^variations\.(.+)$/.exec(key);
    if (m) {
      const name = m[1]!.startsWith('"') ? JSON.parse(m[1]!) as string : m[1]!;
      const i = names.indexOf(name);
      if (i !== -1) return `variations.${i}.value`;
    }
    return key.replace(/(^|\.)rule\[(\d+)\]/g, "$1rules.$2").replace(/\[(\d+)\]/g, ".$1");
  };
}
