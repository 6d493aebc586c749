/**
 * `cfgtool export --to flagd <dir>`: a manifest directory, as in force in
 * one environment, as a flagd flag definition (lib/import/export_flagd.ts),
 * printed or written to a file. What could not be exported is listed on
 * standard error.
 *
 * @module
 */
import type { Command } from "commander";
import { CfgtoolError, UsageError } from "../errors.ts";

/** What `cfgtool export` was asked for. */
export interface ExportCommandOptions {
  /** The format: `flagd`. */
  to: string;
  /** The manifest directory. */
  dir: string;
  /** The environment (default: the first declared). */
  env?: string | undefined;
}

/** The exported text and the lines for standard error. */
export interface ExportOutput {
  /** The flag definition. */
  text: string;
  /** One line per construct not exported, and notes. */
  report: string[];
}

/**
 * Exports a manifest directory (after the checks of `flags lint`).
 *
 * @throws {UsageError} for an unknown format or environment, or a bad directory
 * @throws {ProblemsError} when the manifest does not lint
 *
 * @example
 * ```ts
 * import { exportDir } from "./export.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/flags`);
 * await Deno.writeTextFile(`${dir}/namespace.toml`, "schema_version = 1\n[namespace.environments.production]\n");
 * await Deno.writeTextFile(`${dir}/flags/a.toml`,
 *   'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n');
 * const out = await exportDir({ to: "flagd", dir });
 * await Deno.remove(dir, { recursive: true });
 * if (JSON.parse(out.text).flags.a.defaultVariant !== "off") throw new Error(out.text);
 * ```
 */
export async function exportDir(opts: ExportCommandOptions): Promise<ExportOutput> {
  if (opts.to !== "flagd") {
    throw new UsageError(`unknown --to ${JSON.stringify(opts.to)} (one of flagd)`);
  }
  // lazy: the manifest reader, validator and exporter load only for export
  const [{ readManifestDir }, { parseManifest }, { exportFlagd }] = await Promise.all([
    import("../flags/files.ts"),
    import("../flags/validate.ts"),
    import("../import/export_flagd.ts"),
  ]);
  const manifest = parseManifest(await readManifestDir(opts.dir));
  const envs = Object.keys(manifest.namespace.environments);
  const env = opts.env ?? envs[0];
  if (env === undefined || !envs.includes(env)) {
    throw new UsageError(
      env === undefined
        ? `${opts.dir}: namespace.toml declares no environment to export`
        : `unknown environment "${env}" (namespace.toml declares ${envs.join(", ") || "none"})`,
    );
  }
  const out = exportFlagd(manifest, env);
  const report: string[] = [];
  for (const item of out.items) {
    for (const u of item.unmapped) report.push(`${item.kind} ${item.key}: ${u.what}: ${u.why}`);
    for (const n of item.notes) report.push(`${item.kind} ${item.key}: note: ${n}`);
  }
  for (const n of out.notes) report.push(`note: ${n}`);
  return { text: out.text, report };
}

/**
 * Registers `cfgtool export`.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerExportCommand } from "./export.ts";
 * const program = new Command();
 * registerExportCommand(program);
 * if (program.commands[0]?.name() !== "export") throw new Error();
 * ```
 */
export function registerExportCommand(program: Command): void {
  program.command("export")
    .summary("Write a manifest directory as another tool's flag definition (flagd)")
    .description(
      "Write a manifest directory, as in force in one environment, as a flagd flag\n" +
        "definition, for flagd's in-process providers in other languages. Variations, the\n" +
        "default, enabled = false, rules and segments are exported; a rollout keeps its\n" +
        "weights, but flagd hashes differently, so a context may get another variation there.\n" +
        "A rule whose segment uses matches, before or after (no flagd operator) is left out\n" +
        "and listed on standard error. See docs/import.md.",
    )
    .argument("<dir>", "the manifest directory")
    .requiredOption("--to <format>", "the format to write: flagd")
    .option(
      "--env <env>",
      "the environment whose rules and overrides are exported (default: the first declared)",
    )
    .option("--out <file>", "write the definition to this file instead of standard output")
    .option("--force", "overwrite --out when it exists")
    .addHelpText(
      "after",
      "\nOutput: the flag definition (JSON) on standard output or in --out; on standard error\n" +
        "one line per construct not exported, and notes.\n\n" +
        "Exit status:\n" +
        "  0  exported\n" +
        "  1  the manifest has problems (listed as by flags lint), or --out exists\n" +
        "  2  usage error: an unknown --to or --env, no such directory\n\n" +
        "Examples:\n" +
        "  cfgtool export --to flagd checkout-flags > flags.json\n" +
        "  cfgtool export --to flagd checkout-flags --env staging --out flags.staging.json\n",
    )
    .action(async (dir: string, opts) => {
      const out = await exportDir({ to: opts.to, dir, env: opts.env });
      if (opts.out !== undefined) {
        try {
          await Deno.writeTextFile(opts.out, out.text, { createNew: opts.force !== true });
        } catch (err) {
          if (err instanceof Deno.errors.AlreadyExists) {
            throw new CfgtoolError(
              "file_exists",
              `${opts.out} exists; give --force to overwrite it`,
              {
                status: 409,
              },
            );
          }
          throw err;
        }
      } else Deno.stdout.writeSync(new TextEncoder().encode(out.text));
      for (const line of out.report) console.error(line);
    });
}
