/**
 * `cfgtool namespace …`: namespaces of a tenant on a remote service (create,
 * list, show, delete), their human admins, their manifest versions and
 * rollback. `create`, `show`, `delete` and `admin` are built as for tenants
 * (lib/cli/scope_commands.ts); `init`, which starts a manifest directory on
 * disk, lives in lib/cli/scaffold.ts.
 *
 * @module
 */
import type { Command } from "commander";
import { pageQuery, printList, printPage, withPageOptions } from "./listing.ts";
import { headVersion } from "./namespace_head.ts";
import {
  cell,
  openClient,
  parseWholeNumber,
  printJson,
  withRemoteOptions,
} from "./remote_options.ts";
import * as scoped from "./scope_commands.ts";
import { registerProtectCommand } from "./change.ts";
import { registerNamespaceInitCommand } from "./scaffold.ts";

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool namespace init checkout-flags --env production --env staging\n" +
  '  cfgtool namespace create checkout --tenant acme --description "Checkout service"\n' +
  "  cfgtool namespace list --tenant acme\n" +
  "  cfgtool namespace versions --tenant acme --namespace checkout\n" +
  "  cfgtool namespace rollback --tenant acme --namespace checkout --version 3\n" +
  "  cfgtool namespace protect checkout --tenant acme --env production --approvals 1\n" +
  "  cfgtool namespace admin add usr_01J0… --tenant acme --namespace checkout\n";

/**
 * Registers `namespace` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerNamespaceCommands } from "./namespace.ts";
 * const program = new Command();
 * registerNamespaceCommands(program);
 * if (!program.commands.some((c) => c.name() === "namespace")) throw new Error();
 * ```
 */
export function registerNamespaceCommands(program: Command): void {
  const ns = program
    .command("namespace")
    .description(
      "Manage the flag namespaces of a tenant on a cfgtool service; `init` starts a " +
        "namespace's manifest directory on disk.",
    )
    .addHelpText("after", EXAMPLES);

  registerNamespaceInitCommand(ns);

  scoped.registerCreateCommand(
    ns,
    "namespace",
    "Create a namespace (manifest version 0, empty; no tokens are issued).",
    'cfgtool namespace create checkout --tenant acme --description "Checkout"',
  );

  withRemoteOptions(ns.command("list").description("List the namespaces of a tenant."))
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool namespace list --tenant acme\n")
    .action(async (opts) => {
      const list = await (await openClient(opts)).listNamespaces(opts.tenant);
      printList(
        list,
        opts.json === true,
        ["SLUG", "VERSION", "DESCRIPTION", "CREATED"],
        (n) => [n.slug, cell(headVersion(n)), cell(n.description), cell(n.created_at)],
      );
    });

  scoped.registerShowCommand(ns, "namespace");
  scoped.registerDeleteCommand(
    ns,
    "namespace",
    "Delete a namespace with all its manifest versions and admins; every token bound to it " +
      "is revoked. Asks you to type the slug on a terminal; elsewhere pass --yes.",
  );

  withPageOptions(
    withRemoteOptions(
      ns.command("versions").description(
        "List the manifest versions of a namespace, newest first.",
      ),
    )
      .requiredOption("--tenant <slug>", "the tenant")
      .requiredOption("--namespace <slug>", "the namespace"),
  )
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace versions --tenant acme --namespace checkout\n" +
        "  cfgtool namespace versions --tenant acme --namespace checkout --limit 5 --json\n",
    )
    .action(async (opts) => {
      const query = pageQuery(opts);
      const page = await (await openClient(opts)).listVersions(opts.tenant, opts.namespace, query);
      printPage(
        page,
        opts.json === true,
        ["VERSION", "CLOSURE HASH", "CREATED", "BY", "FILES", "MESSAGE"],
        (v) => [
          String(v.version),
          v.closure_hash,
          cell(v.created_at),
          cell(v.created_by),
          cell(v.file_count),
          cell(v.message),
        ],
      );
    });

  withRemoteOptions(
    ns.command("rollback").description(
      "Create a new manifest version whose files equal an earlier version.",
    ),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace")
    .requiredOption("--version <n>", "the version to restore")
    .option("--message <text>", "note recorded on the new version")
    .option("--json", "print the result as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace rollback --tenant acme --namespace checkout --version 3 \\\n" +
        '      --message "revert bad rollout"\n',
    )
    .action(async (opts) => {
      const version = parseWholeNumber(opts.version, "--version");
      const res = await (await openClient(opts)).rollback(opts.tenant, opts.namespace, {
        version,
        ...(opts.message === undefined ? {} : { message: opts.message }),
      });
      if (opts.json) return printJson(res);
      console.log(
        res.changed
          ? `version ${res.version} (${res.closure_hash}), restored from version ${version}`
          : `unchanged at version ${res.version}`,
      );
    });

  registerProtectCommand(ns);
  scoped.registerAdminCommands(ns, "namespace");
}
