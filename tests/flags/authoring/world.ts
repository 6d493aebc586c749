/**
 * What the authoring tests share: the example namespace of docs/flags.md
 * (examples/flags, comments and all) as texts, a check that a set of texts
 * is a valid manifest (its model returned), applying edits, asserting a
 * refusal by message and form field, and the lines a diff adds and
 * removes.
 *
 * @module
 */
import { diffLines } from "diff";
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../../assert.ts";
import { InvalidRequestError } from "../../../lib/errors.ts";
import { readManifestDir } from "../../../lib/flags/files.ts";
import type { Manifest } from "../../../lib/flags/model.ts";
import { validateManifest } from "../../../lib/flags/validate.ts";
import {
  applyFileEdits,
  type FileEdits,
  filesOf,
  type ManifestTexts,
  textsOf,
} from "../../../lib/flags/authoring/texts.ts";

/** The texts of examples/flags. */
export async function exampleTexts(): Promise<Map<string, string>> {
  return textsOf(
    await readManifestDir(new URL("../../../examples/flags", import.meta.url).pathname),
  );
}

/** The model of a set of texts, failing with the validator's problems when it is not valid. */
export function valid(texts: ManifestTexts): Manifest {
  const { problems, manifest } = validateManifest(filesOf(texts));
  assertEquals(problems, [], [...texts].map(([p, t]) => `--- ${p}\n${t}`).join("\n"));
  return manifest!;
}

/** Applies edits and checks the result is a valid manifest. */
export function applied(texts: ManifestTexts, edits: FileEdits): Map<string, string> {
  const out = applyFileEdits(texts, edits);
  valid(out);
  return out;
}

/** What a refusal must say. */
export interface Refusal {
  /** A part of the message (or a pattern it matches). */
  message: string | RegExp;
  /** The form field it names. */
  field: string;
}

/** Asserts that `f` refuses with an InvalidRequestError naming `field`; returns the error. */
export function refused(f: () => unknown, want: Refusal): InvalidRequestError {
  const err = assertThrows(f, InvalidRequestError);
  if (typeof want.message === "string") assertStringIncludes(err.message, want.message);
  else assert(want.message.test(err.message), err.message);
  assertEquals(err.details?.field, want.field, err.message);
  assertEquals(err.status, 400);
  return err;
}

/** The lines a line diff adds and removes, in order. */
export function changedLines(
  before: string,
  after: string,
): { added: string[]; removed: string[] } {
  const out = { added: [] as string[], removed: [] as string[] };
  for (const part of diffLines(before, after)) {
    const lines = part.value.replace(/\n$/, "").split("\n");
    if (part.added) out.added.push(...lines);
    if (part.removed) out.removed.push(...lines);
  }
  return out;
}

/** The one file an edit changes: its path and new text. */
export function only(edits: FileEdits): [string, string] {
  assertEquals(edits.size, 1, [...edits.keys()].join(", "));
  const [path, text] = [...edits][0]!;
  assert(typeof text === "string", `${path} is deleted`);
  return [path, text];
}

/** A small namespace with two environments, for tests that write their own files. */
export const NAMESPACE = `schema_version = 1

[namespace.environments.production]
public_evaluate = false

[namespace.environments.staging]
public_evaluate = true
`;
