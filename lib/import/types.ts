/**
 * What every importer (`cfgtool import --from <tool>`) returns: the
 * manifest directory's files as text, and a report of each flag and
 * segment — what mapped, what did not and why, and notes such as the
 * bucketing difference of a percentage rollout. Nothing is dropped
 * silently: whatever an importer cannot map is in the report.
 *
 * @module
 */

/** One thing of the source that did not come along, and why. */
export interface Unmapped {
  /** What it is, in the source tool's words (`prerequisite on flag x`, `operator semVerGt`). */
  what: string;
  /** Why it could not be mapped, and what was written instead if anything. */
  why: string;
}

/** The report of one flag or segment. */
export interface ItemReport {
  /** `flag` or `segment`. */
  kind: "flag" | "segment";
  /** Its key in the manifest written (its source key when it was not written). */
  key: string;
  /** Its key in the source, when it differs (keys are made slugs). */
  sourceKey?: string;
  /** Whether a file was written for it. */
  written: boolean;
  /** What mapped, one line each (`rule 1: segment beta → variation on`). */
  mapped: string[];
  /** What did not map. */
  unmapped: Unmapped[];
  /** Other things to know (a rollout's users may land in another bucket; semantics that differ). */
  notes: string[];
}

/** What an importer returns. */
export interface ImportResult {
  /** The manifest directory: relative path (`namespace.toml`, `flags/x.toml`) → text. */
  files: Map<string, string>;
  /** One report per flag and segment of the source, in source order. */
  items: ItemReport[];
  /** Problems of the export as a whole (an environment with nothing in it, a top-level field ignored). */
  notes: string[];
}

/** What an importer is told. */
export interface ImportOptions {
  /** The export's file name, for messages. */
  file: string;
  /** Source environment name → the environment to write it as (`--env-map a=b`); unlisted names are kept. */
  envMap: ReadonlyMap<string, string>;
}

/** An importer: the export's text in, the manifest and its report out (throws {@linkcode ImportError} for a bad export). */
export type Importer = (text: string, options: ImportOptions) => ImportResult;

/** The tools `cfgtool import --from` reads. */
export const IMPORT_SOURCES = ["flagd", "unleash", "launchdarkly", "growthbook", "flipt"] as const;

/** One of {@linkcode IMPORT_SOURCES}. */
export type ImportSource = typeof IMPORT_SOURCES[number];
