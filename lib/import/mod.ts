/**
 * The importers by source tool (`cfgtool import --from <tool>`). Each is
 * loaded when asked for, so the CLI loads only the one it runs.
 *
 * @example
 * ```ts
 * import { importerFor } from "./mod.ts";
 * const run = await importerFor("flagd");
 * const r = run('{"flags": {}}', { file: "flags.json", envMap: new Map() });
 * if (!r.files.has("namespace.toml")) throw new Error();
 * ```
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { IMPORT_SOURCES, type Importer, type ImportSource } from "./types.ts";

export { IMPORT_SOURCES, type ImportSource } from "./types.ts";

/** Whether `s` names a tool `import --from` reads. */
export function isImportSource(s: string): s is ImportSource {
  return (IMPORT_SOURCES as readonly string[]).includes(s);
}

/** Each importer, loaded when asked for. */
const LOADERS: Record<ImportSource, () => Promise<Importer>> = {
  flagd: async () => (await import("./flagd.ts")).importFlagd,
  flipt: async () => (await import("./flipt.ts")).importFlipt,
  unleash: async () => (await import("./unleash.ts")).importUnleash,
  launchdarkly: async () => (await import("./launchdarkly.ts")).importLaunchDarkly,
  growthbook: async () => (await import("./growthbook.ts")).importGrowthBook,
};

/**
 * The importer of a source tool.
 *
 * @param source `flagd`, `unleash`, `launchdarkly`, `growthbook` or `flipt`
 * @returns the importer
 * @throws {UsageError} for another name
 */
export async function importerFor(source: string): Promise<Importer> {
  if (!isImportSource(source)) {
    throw new UsageError(
      `unknown --from ${JSON.stringify(source)} (one of ${IMPORT_SOURCES.join(", ")})`,
    );
  }
  return await LOADERS[source]();
}
