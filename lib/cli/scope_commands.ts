/**
 * The subcommands `cfgtool tenant …` and `cfgtool namespace …` have in
 * common, built from the scope: `create`, `show` and `delete` of one tenant
 * or namespace, and `admin list|add|remove` of its human admins. A tenant is
 * named by its slug; a namespace by its slug and `--tenant`. The admins of a
 * tenant are named by `--tenant`, those of a namespace by `--tenant` and
 * `--namespace`.
 *
 * @module
 */
import type { Command, OptionValues } from "commander";
import type { ServiceClient } from "../client/api.ts";
import { confirmDeletion } from "./confirm.ts";
import {
  namespaceDeletionDetails,
  revokedSuffix,
  tenantDeletionDetails,
} from "./deletion_details.ts";
import { printList } from "./listing.ts";
import {
  cell,
  openClient,
  printFields,
  printJson,
  type RemoteOptionValues,
  withRemoteOptions,
} from "./remote_options.ts";

/** Which command group: tenants, or the namespaces of a tenant. */
export type Scope = "tenant" | "namespace";

/** The remote options and those that name a tenant or namespace, as commander parses them. */
type ScopeOptionValues = RemoteOptionValues & {
  tenant?: string | undefined;
  namespace?: string | undefined;
  json?: true | undefined;
};

/** One tenant, or one namespace of a tenant. */
interface Target {
  tenant: string;
  namespace: string | null;
}

/** How help examples name a tenant or namespace after its slug argument. */
const EXAMPLE_TARGET: Readonly<Record<Scope, string>> = {
  tenant: "acme",
  namespace: "checkout --tenant acme",
};

/** How help examples name a tenant or namespace with options only (admin commands). */
const EXAMPLE_SCOPE: Readonly<Record<Scope, string>> = {
  tenant: "--tenant acme",
  namespace: "--tenant acme --namespace checkout",
};

/** What a delete removes besides the tenant or namespace itself, for the refusal line. */
const DELETES_WITH: Readonly<Record<Scope, string>> = {
  tenant: "all its namespaces and their manifest versions, and revokes",
  namespace: "all its manifest versions and revokes",
};

/**
 * Registers `create <slug>` (with `--description`) under the `tenant` or
 * `namespace` command; a namespace is created in `--tenant`.
 *
 * @param group the `tenant` or `namespace` command
 * @param scope which of the two it is
 * @param description the command's description
 * @param example one example command line, for the help
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerCreateCommand } from "./scope_commands.ts";
 * const ns = new Command("namespace");
 * registerCreateCommand(ns, "namespace", "Create a namespace.", "cfgtool namespace create web");
 * const longs = ns.commands[0]!.options.map((o) => o.long).join(" ");
 * if (longs !== "--server --token --profile --tenant --description --json") throw new Error(longs);
 * ```
 */
export function registerCreateCommand(
  group: Command,
  scope: Scope,
  description: string,
  example: string,
): void {
  withScopeOptions(
    group.command("create")
      .description(description)
      .argument("<slug>", `${scope} slug ([a-z0-9][a-z0-9._-]*)`),
    scope === "namespace" ? [["--tenant <slug>", "the owning tenant"]] : [],
  )
    .option("--description <text>", "a note shown in listings")
    .option("--json", `print the ${scope} as JSON`)
    .addHelpText("after", `\nExamples:\n  ${example}\n`)
    .action(async (slug, opts) => {
      const input = {
        slug,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      };
      const client = await openClient(opts);
      const target = targetOf(scope, slug, opts);
      const created = target.namespace === null
        ? await client.createTenant(input)
        : await client.createNamespace(target.tenant, input);
      if (opts.json) return printJson(created);
      console.log(`created ${scope} ${pathOf(targetOf(scope, created.slug ?? slug, opts))}`);
    });
}

/**
 * Registers `show <slug>` under the `tenant` or `namespace` command: the
 * service's fields, or its JSON with `--json`.
 *
 * @param group the `tenant` or `namespace` command
 * @param scope which of the two it is
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerShowCommand } from "./scope_commands.ts";
 * const tenant = new Command("tenant");
 * registerShowCommand(tenant, "tenant");
 * if (tenant.commands[0]!.description() !== "Show one tenant.") throw new Error();
 * ```
 */
export function registerShowCommand(group: Command, scope: Scope): void {
  withScopeOptions(
    group.command("show").description(`Show one ${scope}.`).argument("<slug>", `${scope} slug`),
    parentOptions(scope),
  )
    .option("--json", `print the ${scope} as JSON`)
    .addHelpText("after", `\nExamples:\n  cfgtool ${scope} show ${EXAMPLE_TARGET[scope]}\n`)
    .action(async (slug, opts) => {
      const client = await openClient(opts);
      const target = targetOf(scope, slug, opts);
      const shown = target.namespace === null
        ? await client.getTenant(target.tenant)
        : await client.getNamespace(target.tenant, target.namespace);
      if (opts.json) return printJson(shown);
      printFields(Object.entries(shown).filter(([k]) => k !== "request_id"));
    });
}

/**
 * Registers `delete <slug>` under the `tenant` or `namespace` command. It
 * asks for the slug on a terminal, after listing what goes with it
 * (lib/cli/deletion_details.ts); elsewhere it needs `--yes`
 * (lib/cli/confirm.ts).
 *
 * @param group the `tenant` or `namespace` command
 * @param scope which of the two it is
 * @param description the command's description
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerDeleteCommand } from "./scope_commands.ts";
 * const tenant = new Command("tenant");
 * registerDeleteCommand(tenant, "tenant", "Delete a tenant.");
 * if (!tenant.commands[0]!.options.some((o) => o.long === "--yes")) throw new Error();
 * ```
 */
export function registerDeleteCommand(group: Command, scope: Scope, description: string): void {
  const example = `cfgtool ${scope} delete ${EXAMPLE_TARGET[scope]}`;
  withScopeOptions(
    group.command("delete").description(description).argument("<slug>", `${scope} slug`),
    parentOptions(scope),
  )
    .option("--yes", "delete without asking (required when stdin is not a terminal)")
    .option("--json", "print the service's answer as JSON")
    .addHelpText("after", `\nExamples:\n  ${example}\n  ${example} --yes\n`)
    .action(async (slug, opts) => {
      const client = await openClient(opts);
      const target = targetOf(scope, slug, opts);
      await confirmDeletion({
        yes: opts.yes,
        summary: `${scope} delete removes ${pathOf(target)} with ${DELETES_WITH[scope]} ` +
          "every token bound to it",
        answer: slug,
        details: () =>
          target.namespace === null
            ? tenantDeletionDetails(client, target.tenant)
            : namespaceDeletionDetails(client, target.tenant, target.namespace),
      });
      const res = target.namespace === null
        ? await client.deleteTenant(target.tenant)
        : await client.deleteNamespace(target.tenant, target.namespace);
      if (opts.json) return printJson(res);
      console.log(`deleted ${scope} ${pathOf(target)}${revokedSuffix(res)}`);
    });
}

/**
 * Registers `admin list`, `admin add <user>` and `admin remove <user>` under
 * the `tenant` or `namespace` command.
 *
 * @param group the `tenant` or `namespace` command
 * @param scope which of the two it is
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerAdminCommands } from "./scope_commands.ts";
 * const ns = new Command("namespace");
 * registerAdminCommands(ns, "namespace");
 * const admin = ns.commands.find((c) => c.name() === "admin");
 * const verbs = admin?.commands.map((c) => c.name()).join(" ");
 * if (verbs !== "list add remove") throw new Error(verbs);
 * ```
 */
export function registerAdminCommands(group: Command, scope: Scope): void {
  const where = EXAMPLE_SCOPE[scope];
  const names: [string, string][] = scope === "namespace"
    ? [["--tenant <slug>", "the tenant"], ["--namespace <slug>", "the namespace"]]
    : [["--tenant <slug>", "the tenant"]];
  const admin = group.command("admin")
    .description(`Manage the human admins of a ${scope}.`)
    .addHelpText(
      "after",
      `\nExamples:\n  cfgtool ${scope} admin add usr_01J0… ${where}\n` +
        `  cfgtool ${scope} admin list ${where}\n` +
        `  cfgtool ${scope} admin remove usr_01J0… ${where}\n`,
    );
  withScopeOptions(admin.command("list").description(`List the admins of a ${scope}.`), names)
    .option("--json", "print a JSON array")
    .addHelpText("after", `\nExamples:\n  cfgtool ${scope} admin list ${where}\n`)
    .action(async (opts) => {
      const client = await openClient(opts);
      const target = adminTargetOf(opts);
      const admins = target.namespace === null
        ? await client.listTenantAdmins(target.tenant)
        : await client.listNamespaceAdmins(target.tenant, target.namespace);
      printList(
        admins,
        opts.json === true,
        ["USER", "ADDED BY", "ADDED"],
        (a) => [cell(a.user_id), cell(a.added_by), cell(a.added_at ?? a.created_at)],
      );
    });
  for (const verb of ["add", "remove"] as const) {
    withScopeOptions(
      admin.command(verb)
        .description(verb === "add" ? `Make a user a ${scope} admin.` : `Remove a ${scope} admin.`)
        .argument("<user>", "user id (usr_…) or email"),
      names,
    )
      .option("--json", "print the service's answer as JSON")
      .addHelpText("after", `\nExamples:\n  cfgtool ${scope} admin ${verb} usr_01J0… ${where}\n`)
      .action(async (userId, opts) => {
        const target = adminTargetOf(opts);
        const res = await changeAdmin(await openClient(opts), verb, target, userId);
        if (opts.json) return printJson(res);
        const named = `${scope} ${pathOf(target)}`;
        console.log(
          verb === "add"
            ? `${userId} is now an admin of ${named}`
            : `${userId} is no longer an admin of ${named}`,
        );
      });
  }
}

/**
 * Adds the remote options, then the given required options naming the
 * tenant or namespace (`[flags, description]` pairs).
 */
function withScopeOptions<
  A extends unknown[],
  O extends OptionValues,
  G extends OptionValues,
>(
  cmd: Command<A, O, G>,
  names: readonly (readonly [string, string])[],
): Command<A, O & ScopeOptionValues, G> {
  const remote = withRemoteOptions(cmd);
  for (const [flags, help] of names) remote.requiredOption(flags, help);
  return remote as unknown as Command<A, O & ScopeOptionValues, G>;
}

/** The options naming what a namespace belongs to: `--tenant` (none for a tenant). */
function parentOptions(scope: Scope): [string, string][] {
  return scope === "namespace" ? [["--tenant <slug>", "the tenant"]] : [];
}

/** The tenant or namespace a `create`, `show` or `delete` names. */
function targetOf(scope: Scope, slug: string, opts: ScopeOptionValues): Target {
  return scope === "tenant"
    ? { tenant: slug, namespace: null }
    : { tenant: opts.tenant!, namespace: slug };
}

/** The tenant or namespace whose admins an `admin` command names. */
function adminTargetOf(opts: ScopeOptionValues): Target {
  return { tenant: opts.tenant!, namespace: opts.namespace ?? null };
}

/** `acme` or `acme/checkout`. */
function pathOf(target: Target): string {
  return target.namespace === null ? target.tenant : `${target.tenant}/${target.namespace}`;
}

/** Adds or removes an admin of a tenant or namespace. */
function changeAdmin(
  client: ServiceClient,
  verb: "add" | "remove",
  { tenant, namespace }: Target,
  userId: string,
): Promise<Record<string, unknown>> {
  if (namespace === null) {
    return verb === "add"
      ? client.addTenantAdmin(tenant, userId)
      : client.removeTenantAdmin(tenant, userId);
  }
  return verb === "add"
    ? client.addNamespaceAdmin(tenant, namespace, userId)
    : client.removeNamespaceAdmin(tenant, namespace, userId);
}
