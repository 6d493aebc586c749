/**
 * One environment's override of a flag, opened for an edit (overrides.ts,
 * promotion.ts).
 *
 * @module
 */
import { checkKnown } from "./_args.ts";
import { type Doc, isTable, OVERRIDE_ORDER, withOrder } from "./_doc.ts";
import { environmentKeys, type FileData, readFlag } from "./_files.ts";
import { writeFlag } from "./_flag_file.ts";
import type { FileEdits, ManifestTexts } from "./texts.ts";

/** One environment's override of one flag. */
export interface OverrideScope {
  /** The flag key. */
  flag: string;
  /** A declared environment. */
  environment: string;
}

/** An override opened for an edit: its table (changed in place) and how to write it back. */
interface OpenOverride {
  file: FileData;
  table: Doc;
  write(field: string): FileEdits;
}

/** The environment's override table of a flag (a new, empty one when there is none). */
export function openOverride(texts: ManifestTexts, scope: OverrideScope): OpenOverride {
  const file = readFlag(texts, scope.flag);
  const env = checkKnown(
    scope.environment,
    environmentKeys(texts),
    "environment",
    "environment",
    "environments",
  );
  const doc = file.doc;
  const envs: Doc = isTable(doc.environments) ? doc.environments : {};
  const table: Doc = isTable(envs[env]) ? envs[env] : {};
  return {
    file,
    table,
    write: (field) => {
      if (Object.keys(table).length === 0) delete envs[env];
      else envs[env] = withOrder(table, OVERRIDE_ORDER);
      if (Object.keys(envs).length === 0) delete doc.environments;
      else doc.environments = envs;
      return writeFlag(
        texts,
        scope.flag,
        file,
        doc,
        field,
        (key) =>
          /(^|\.)default$/.test(key) ? "variation" : /rule/.test(key) ? "environment" : field,
      );
    },
  };
}
