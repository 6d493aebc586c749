/**
 * `cfgtool namespace …`: namespaces of a tenant on a remote service (create,
 * list, show, delete), their human admins, their manifest versions and
 * rollback.
 *
 * @module
 */
import type { Command } from "commander";
import { confirmDeletion } from "./confirm.ts";
import { namespaceDeletionDetails, revokedSuffix } from "./deletion_details.ts";
import { headVersion } from "./namespace_head.ts";
import {
  cell,
  openClient,
  parseWholeNumber,
  printFields,
  printJson,
  printTable,
  withRemoteOptions,
} from "./remote_options.ts";

const EXAMPLES = "\nExamples:\n" +
  '  cfgtool namespace create checkout --tenant acme --description "Checkout service"\n' +
  "  cfgtool namespace list --tenant acme\n" +
  "  cfgtool namespace versions --tenant acme --namespace checkout\n" +
  "  cfgtool namespace rollback --tenant acme --namespace checkout --version 3\n" +
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
    .description("Manage the flag namespaces of a tenant on a cfgtool service.")
    .addHelpText("after", EXAMPLES);

  withRemoteOptions(
    ns.command("create")
      .description("Create a namespace (manifest version 0, empty; no tokens are issued).")
      .argument("<slug>", "namespace slug ([a-z0-9][a-z0-9._-]*)"),
  )
    .requiredOption("--tenant <slug>", "the owning tenant")
    .option("--description <text>", "a note shown in listings")
    .option("--json", "print the namespace as JSON")
    .addHelpText(
      "after",
      '\nExamples:\n  cfgtool namespace create checkout --tenant acme --description "Checkout"\n',
    )
    .action(async (slug, opts) => {
      const created = await (await openClient(opts)).createNamespace(opts.tenant, {
        slug,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      if (opts.json) printJson(created);
      else console.log(`created namespace ${opts.tenant}/${created.slug ?? slug}`);
    });

  withRemoteOptions(ns.command("list").description("List the namespaces of a tenant."))
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool namespace list --tenant acme\n")
    .action(async (opts) => {
      const list = await (await openClient(opts)).listNamespaces(opts.tenant);
      if (opts.json) return printJson(list);
      printTable(
        ["SLUG", "VERSION", "DESCRIPTION", "CREATED"],
        list.map((n) => [n.slug, cell(headVersion(n)), cell(n.description), cell(n.created_at)]),
      );
    });

  withRemoteOptions(
    ns.command("show").description("Show one namespace.").argument("<slug>", "namespace slug"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print the namespace as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool namespace show checkout --tenant acme\n")
    .action(async (slug, opts) => {
      const n = await (await openClient(opts)).getNamespace(opts.tenant, slug);
      if (opts.json) printJson(n);
      else printFields(Object.entries(n).filter(([k]) => k !== "request_id"));
    });

  withRemoteOptions(
    ns.command("delete")
      .description(
        "Delete a namespace with all its manifest versions and admins; every token bound to it " +
          "is revoked. Asks you to type the slug on a terminal; elsewhere pass --yes.",
      )
      .argument("<slug>", "namespace slug"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--yes", "delete without asking (required when stdin is not a terminal)")
    .option("--json", "print the service's answer as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace delete checkout --tenant acme\n" +
        "  cfgtool namespace delete checkout --tenant acme --yes\n",
    )
    .action(async (slug, opts) => {
      const client = await openClient(opts);
      await confirmDeletion({
        yes: opts.yes,
        summary: `namespace delete removes ${opts.tenant}/${slug} with all its manifest ` +
          "versions and revokes every token bound to it",
        answer: slug,
        details: () => namespaceDeletionDetails(client, opts.tenant, slug),
      });
      const res = await client.deleteNamespace(opts.tenant, slug);
      if (opts.json) printJson(res);
      else console.log(`deleted namespace ${opts.tenant}/${slug}${revokedSuffix(res)}`);
    });

  withRemoteOptions(
    ns.command("versions").description("List the manifest versions of a namespace, newest first."),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace")
    .option("--limit <n>", "page size")
    .option("--after <cursor>", "continue after this cursor (printed at the end of a page)")
    .option("--json", "print {items, next} as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace versions --tenant acme --namespace checkout\n" +
        "  cfgtool namespace versions --tenant acme --namespace checkout --limit 5 --json\n",
    )
    .action(async (opts) => {
      const limit = opts.limit === undefined ? undefined : parseWholeNumber(
        opts.limit,
        "--limit",
        1,
      );
      const page = await (await openClient(opts)).listVersions(opts.tenant, opts.namespace, {
        ...(limit === undefined ? {} : { limit }),
        ...(opts.after === undefined ? {} : { after: opts.after }),
      });
      if (opts.json) return printJson(page);
      printTable(
        ["VERSION", "CLOSURE HASH", "CREATED", "BY", "FILES", "MESSAGE"],
        page.items.map((v) => [
          String(v.version),
          v.closure_hash,
          cell(v.created_at),
          cell(v.created_by),
          cell(v.file_count),
          cell(v.message),
        ]),
      );
      if (page.next !== null) console.error(`(more: --after ${page.next})`);
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

  const admin = ns.command("admin")
    .description("Manage the human admins of a namespace.")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace admin add usr_01J0… --tenant acme --namespace checkout\n" +
        "  cfgtool namespace admin list --tenant acme --namespace checkout\n" +
        "  cfgtool namespace admin remove usr_01J0… --tenant acme --namespace checkout\n",
    );
  withRemoteOptions(admin.command("list").description("List the admins of a namespace."))
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace")
    .option("--json", "print a JSON array")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace admin list --tenant acme --namespace checkout\n",
    )
    .action(async (opts) => {
      const admins = await (await openClient(opts)).listNamespaceAdmins(
        opts.tenant,
        opts.namespace,
      );
      if (opts.json) return printJson(admins);
      printTable(
        ["USER", "ADDED BY", "ADDED"],
        admins.map((a) => [cell(a.user_id), cell(a.added_by), cell(a.added_at ?? a.created_at)]),
      );
    });
  for (const verb of ["add", "remove"] as const) {
    withRemoteOptions(
      admin.command(verb)
        .description(
          verb === "add" ? "Make a user a namespace admin." : "Remove a namespace admin.",
        )
        .argument("<user>", "user id (usr_…) or email"),
    )
      .requiredOption("--tenant <slug>", "the tenant")
      .requiredOption("--namespace <slug>", "the namespace")
      .option("--json", "print the service's answer as JSON")
      .addHelpText(
        "after",
        `\nExamples:\n  cfgtool namespace admin ${verb} usr_01J0… --tenant acme --namespace checkout\n`,
      )
      .action(async (userId, opts) => {
        const client = await openClient(opts);
        const res = verb === "add"
          ? await client.addNamespaceAdmin(opts.tenant, opts.namespace, userId)
          : await client.removeNamespaceAdmin(opts.tenant, opts.namespace, userId);
        if (opts.json) printJson(res);
        else {
          const where = `namespace ${opts.tenant}/${opts.namespace}`;
          console.log(
            verb === "add"
              ? `${userId} is now an admin of ${where}`
              : `${userId} is no longer an admin of ${where}`,
          );
        }
      });
  }
}
