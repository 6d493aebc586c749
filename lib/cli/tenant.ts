/**
 * `cfgtool tenant …`: tenants and their human admins on a remote service
 * (create, list, show, delete; admin add, admin remove).
 *
 * @module
 */
import type { Command } from "commander";
import { confirmDeletion } from "./confirm.ts";
import { revokedSuffix, tenantDeletionDetails } from "./deletion_details.ts";
import {
  cell,
  openClient,
  printFields,
  printJson,
  printTable,
  withRemoteOptions,
} from "./remote_options.ts";

const EXAMPLES = "\nExamples:\n" +
  "  export CFGTOOL_SERVER=https://flags.example.com CFGTOOL_TOKEN=svc_admin_…\n" +
  '  cfgtool tenant create acme --description "ACME Corp"\n' +
  "  cfgtool tenant list\n" +
  "  cfgtool tenant show acme --json\n" +
  "  cfgtool tenant admin add usr_01J0… --tenant acme\n" +
  "  cfgtool tenant delete acme --yes\n";

/**
 * Registers `tenant` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerTenantCommands } from "./tenant.ts";
 * const program = new Command();
 * registerTenantCommands(program);
 * if (!program.commands.some((c) => c.name() === "tenant")) throw new Error();
 * ```
 */
export function registerTenantCommands(program: Command): void {
  const tenant = program
    .command("tenant")
    .description(
      "Manage tenants on a cfgtool service (superadmin; tenant principals see their own).",
    )
    .addHelpText("after", EXAMPLES);

  withRemoteOptions(
    tenant.command("create")
      .description("Create a tenant.")
      .argument("<slug>", "tenant slug ([a-z0-9][a-z0-9._-]*)"),
  )
    .option("--description <text>", "a note shown in listings")
    .option("--json", "print the tenant as JSON")
    .addHelpText("after", '\nExamples:\n  cfgtool tenant create acme --description "ACME Corp"\n')
    .action(async (slug, opts) => {
      const client = await openClient(opts);
      const t = await client.createTenant({
        slug,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      if (opts.json) printJson(t);
      else console.log(`created tenant ${t.slug}`);
    });

  withRemoteOptions(tenant.command("list").description("List the tenants you can see."))
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool tenant list\n  cfgtool tenant list --json\n")
    .action(async (opts) => {
      const tenants = await (await openClient(opts)).listTenants();
      if (opts.json) return printJson(tenants);
      printTable(
        ["SLUG", "DESCRIPTION", "CREATED"],
        tenants.map((t) => [t.slug, cell(t.description), cell(t.created_at)]),
      );
    });

  withRemoteOptions(
    tenant.command("show").description("Show one tenant.").argument("<slug>", "tenant slug"),
  )
    .option("--json", "print the tenant as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool tenant show acme\n")
    .action(async (slug, opts) => {
      const t = await (await openClient(opts)).getTenant(slug);
      if (opts.json) printJson(t);
      else printFields(Object.entries(t).filter(([k]) => k !== "request_id"));
    });

  withRemoteOptions(
    tenant.command("delete")
      .description(
        "Delete a tenant with all its namespaces, their manifest versions and admins; every " +
          "token bound to it is revoked. Asks you to type the slug on a terminal; elsewhere " +
          "pass --yes.",
      )
      .argument("<slug>", "tenant slug"),
  )
    .option("--yes", "delete without asking (required when stdin is not a terminal)")
    .option("--json", "print the service's answer as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool tenant delete acme\n  cfgtool tenant delete acme --yes\n",
    )
    .action(async (slug, opts) => {
      const client = await openClient(opts);
      await confirmDeletion({
        yes: opts.yes,
        summary: `tenant delete removes ${slug} with all its namespaces and their manifest ` +
          "versions, and revokes every token bound to it",
        answer: slug,
        details: () => tenantDeletionDetails(client, slug),
      });
      const res = await client.deleteTenant(slug);
      if (opts.json) printJson(res);
      else console.log(`deleted tenant ${slug}${revokedSuffix(res)}`);
    });

  const admin = tenant.command("admin")
    .description("Manage the human admins of a tenant.")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool tenant admin add usr_01J0… --tenant acme\n" +
        "  cfgtool tenant admin list --tenant acme\n" +
        "  cfgtool tenant admin remove usr_01J0… --tenant acme\n",
    );
  withRemoteOptions(admin.command("list").description("List the admins of a tenant."))
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool tenant admin list --tenant acme\n")
    .action(async (opts) => {
      const admins = await (await openClient(opts)).listTenantAdmins(opts.tenant);
      if (opts.json) return printJson(admins);
      printTable(
        ["USER", "ADDED BY", "ADDED"],
        admins.map((a) => [cell(a.user_id), cell(a.added_by), cell(a.added_at ?? a.created_at)]),
      );
    });
  for (const verb of ["add", "remove"] as const) {
    withRemoteOptions(
      admin.command(verb)
        .description(verb === "add" ? "Make a user a tenant admin." : "Remove a tenant admin.")
        .argument("<user>", "user id (usr_…) or email"),
    )
      .requiredOption("--tenant <slug>", "the tenant")
      .option("--json", "print the service's answer as JSON")
      .addHelpText("after", `\nExamples:\n  cfgtool tenant admin ${verb} usr_01J0… --tenant acme\n`)
      .action(async (userId, opts) => {
        const client = await openClient(opts);
        const res = verb === "add"
          ? await client.addTenantAdmin(opts.tenant, userId)
          : await client.removeTenantAdmin(opts.tenant, userId);
        if (opts.json) printJson(res);
        else {
          console.log(
            verb === "add"
              ? `${userId} is now an admin of tenant ${opts.tenant}`
              : `${userId} is no longer an admin of tenant ${opts.tenant}`,
          );
        }
      });
  }
}
