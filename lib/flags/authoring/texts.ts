/**
 * What every authoring edit takes and gives: the texts of the manifest
 * version being edited ({@linkcode ManifestTexts}, path → text) and the
 * files an edit changes ({@linkcode FileEdits}, path → new text, or `null`
 * to delete the file). An edit lists only the files it must change; the
 * caller applies the edits ({@linkcode applyFileEdits}), validates the
 * whole manifest and commits it.
 *
 * @module
 */
import { InvalidRequestError } from "../../errors.ts";

/** The files of the manifest version being edited: path → text. */
export type ManifestTexts = ReadonlyMap<string, string>;

/** What an edit changes: path → new text, or `null` to delete the file. */
export type FileEdits = Map<string, string | null>;

/** The path of the namespace file. */
export const NAMESPACE_FILE = "namespace.toml";

/**
 * The path of a flag's file.
 *
 * @param key the flag key
 * @returns `flags/<key>.toml`
 *
 * @example
 * ```ts
 * import { flagFile } from "./texts.ts";
 * if (flagFile("new-checkout") !== "flags/new-checkout.toml") throw new Error();
 * ```
 */
export function flagFile(key: string): string {
  return `flags/${key}.toml`;
}

/**
 * The path of a segment's file.
 *
 * @param key the segment key
 * @returns `segments/<key>.toml`
 *
 * @example
 * ```ts
 * import { segmentFile } from "./texts.ts";
 * if (segmentFile("beta") !== "segments/beta.toml") throw new Error();
 * ```
 */
export function segmentFile(key: string): string {
  return `segments/${key}.toml`;
}

/**
 * The texts after an edit: `texts` with each edited file replaced, and
 * each file edited to `null` removed. Edits compose: apply one, then make
 * the next on the result.
 *
 * @param texts the version's texts
 * @param edits what an edit returned
 * @returns a new map (the arguments are not changed)
 *
 * @example
 * ```ts
 * import { applyFileEdits } from "./texts.ts";
 * const texts = new Map([["namespace.toml", "schema_version = 1\n"], ["flags/a.toml", "x"]]);
 * const out = applyFileEdits(texts, new Map([["flags/a.toml", null], ["flags/b.toml", "y"]]));
 * if ([...out.keys()].join() !== "namespace.toml,flags/b.toml") throw new Error();
 * ```
 */
export function applyFileEdits(
  texts: ManifestTexts,
  edits: ReadonlyMap<string, string | null>,
): Map<string, string> {
  const out = new Map(texts);
  for (const [path, text] of edits) {
    if (text === null) out.delete(path);
    else out.set(path, text);
  }
  return out;
}

/**
 * The texts of a manifest's files (as the validator and the store hold
 * them: path → bytes), decoded as UTF-8.
 *
 * @param files path → bytes
 * @returns path → text
 * @throws {InvalidRequestError} when a file is not UTF-8 (the edit cannot keep it as it is)
 *
 * @example
 * ```ts
 * import { textsOf } from "./texts.ts";
 * const texts = textsOf(new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]));
 * if (texts.get("namespace.toml") !== "schema_version = 1\n") throw new Error();
 * ```
 */
export function textsOf(files: ReadonlyMap<string, Uint8Array>): Map<string, string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  const out = new Map<string, string>();
  for (const [path, bytes] of files) {
    try {
      out.set(path, decoder.decode(bytes));
    } catch (err) {
      throw new InvalidRequestError(`${path} is not UTF-8 text`, {
        details: { file: path },
        cause: err,
      });
    }
  }
  return out;
}

/**
 * The files of a set of texts as bytes (what the validator and the store
 * take).
 *
 * @param texts path → text
 * @returns path → UTF-8 bytes
 *
 * @example
 * ```ts
 * import { filesOf } from "./texts.ts";
 * if (filesOf(new Map([["namespace.toml", "é"]])).get("namespace.toml")?.length !== 2) throw new Error();
 * ```
 */
export function filesOf(texts: ManifestTexts): Map<string, Uint8Array> {
  const encoder = new TextEncoder();
  return new Map([...texts].map(([path, text]) => [path, encoder.encode(text)]));
}
