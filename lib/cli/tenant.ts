/**
 * `cfgtool tenant …`: tenants and their human admins on a remote service
 * (create, list, show, delete; admin list, add, remove), and their login
 * policies (`login set|show`, lib/cli/tenant_login.ts). The commands but
 * `list` and `login` are built as for namespaces (lib/cli/scope_commands.ts).
 *
 * @module
 */
import type { Command } from "commander";
import { printList } from "./listing.ts";
import { cell, openClient, withRemoteOptions } from "./remote_options.ts";
import * as scoped from "./scope_commands.ts";
import { registerTenantLoginCommands } from "./tenant_login.ts";

const EXAMPLES = "\nExamples:\n" +
  "  export CFGTOOL_SERVER=https://flags.example.com CFGTOOL_TOKEN=svc_admin_…\n" +
  '  cfgtool tenant create acme --description "ACME Corp"\n' +
  "  cfgtool tenant list\n" +
  "  cfgtool tenant show acme --json\n" +
  "  cfgtool tenant admin add usr_01J0… --tenant acme\n" +
  "  cfgtool tenant login set acme --method email --domain acme.com\n" +
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

  scoped.registerCreateCommand(
    tenant,
    "tenant",
    "Create a tenant.",
    'cfgtool tenant create acme --description "ACME Corp"',
  );

  withRemoteOptions(tenant.command("list").description("List the tenants you can see."))
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool tenant list\n  cfgtool tenant list --json\n")
    .action(async (opts) => {
      const tenants = await (await openClient(opts)).listTenants();
      printList(
        tenants,
        opts.json === true,
        ["SLUG", "DESCRIPTION", "CREATED"],
        (t) => [t.slug, cell(t.description), cell(t.created_at)],
      );
    });

  scoped.registerShowCommand(tenant, "tenant");
  scoped.registerDeleteCommand(
    tenant,
    "tenant",
    "Delete a tenant with all its namespaces, their manifest versions and admins; every " +
      "token bound to it is revoked. Asks you to type the slug on a terminal; elsewhere " +
      "pass --yes.",
  );
  scoped.registerAdminCommands(tenant, "tenant");
  registerTenantLoginCommands(tenant);
}
