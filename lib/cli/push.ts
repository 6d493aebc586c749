/**
 * `cfgtool push <dir>`: uploads a manifest directory as a new version of a
 * namespace. The directory is read and validated locally first, with the
 * same reader and validator as `cfgtool flags lint` and the service; any
 * problem is printed and nothing is sent.
 *
 * @module
 */
import type { Command } from "commander";
import { ProblemsError, UsageError } from "../errors.ts";
import { problemsFromCwd } from "./problem_output.ts";
import { parseWholeNumber, printJson, resolveRemote, withRemoteOptions } from "./remote_options.ts";

/**
 * Registers `push`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerPushCommand } from "./push.ts";
 * const program = new Command();
 * registerPushCommand(program);
 * if (!program.commands.some((c) => c.name() === "push")) throw new Error();
 * ```
 */
export function registerPushCommand(program: Command): void {
  withRemoteOptions(
    program
      .command("push")
      .description(
        "Validate a manifest directory locally, then upload it as the next version of a " +
          "namespace. Prints `version N (closure_hash)` or `unchanged at version N`.",
      )
      .argument("<dir>", "manifest directory (namespace.toml, flags/, segments/)"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace")
    .option("--message <text>", "note recorded on the new version")
    .option(
      "--if-match <version>",
      "upload only if the current version is still this one (else exit 1, 412)",
    )
    .option(
      "--propose",
      "open a change request with these files instead of committing them (for review; " +
        "protected environments need it); prints the request",
    )
    .option(
      "--json",
      "print {changed, version, closure_hash, created_at} (with --propose: {change_request}) as JSON",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        '  cfgtool push ./flags --tenant acme --namespace checkout --message "enable beta"\n' +
        "  cfgtool push ./flags --tenant acme --namespace checkout --if-match 7\n" +
        '  cfgtool push ./flags --tenant acme --namespace checkout --propose --message "50% in prod"\n',
    )
    .action(async (dir, opts) => {
      // lazy: the manifest reader and validator (TOML, re2js, semver) load only when push runs
      const [{ scanManifestDir }, { validateManifest, compareProblems }] = await Promise.all([
        import("../flags/files.ts"),
        import("../flags/validate.ts"),
      ]);
      const remote = resolveRemote(opts);
      const ifMatch = opts.ifMatch === undefined
        ? undefined
        : parseWholeNumber(opts.ifMatch, "--if-match");
      const scan = await scanManifestDir(dir);
      const problems = [...scan.problems, ...validateManifest(scan.files).problems].sort(
        compareProblems,
      );
      if (problems.length > 0) {
        throw new ProblemsError(
          problemsFromCwd(dir, problems),
          "invalid_manifest",
          `${dir}: not pushed, ${problems.length} problem${problems.length === 1 ? "" : "s"}`,
        );
      }
      // lazy: the HTTP client loads only when there is something to send
      const { ServiceClient } = await import("../client/api.ts");
      const client = new ServiceClient(remote);
      if (opts.propose) {
        if (opts.message === undefined) {
          throw new UsageError("--propose needs --message: say what the change does and why");
        }
        const request = await client.openChangeRequest(opts.tenant, opts.namespace, scan.files, {
          message: opts.message,
          ...(ifMatch === undefined ? {} : { baseVersion: ifMatch }),
        });
        if (opts.json) return printJson({ change_request: request });
        console.log(
          `change request ${request.id} (${request.status}): ${request.changed_paths.length} ` +
            `file${request.changed_paths.length === 1 ? "" : "s"}, affects ${
              request.impact.length === 0 ? "no environment" : request.impact.join(", ")
            }, needs ${request.required_approvals} approval${
              request.required_approvals === 1 ? "" : "s"
            }`,
        );
        return;
      }
      const res = await client.putManifest(
        opts.tenant,
        opts.namespace,
        scan.files,
        {
          ...(opts.message === undefined ? {} : { message: opts.message }),
          ...(ifMatch === undefined ? {} : { ifMatch }),
        },
      );
      if (opts.json) return printJson(res);
      console.log(
        res.changed
          ? `version ${res.version} (${res.closure_hash})`
          : `unchanged at version ${res.version}`,
      );
    });
}
