/**
 * `cfgtool token …`: service tokens on a remote service (create, list, show,
 * rotate, revoke). A new secret is printed once, alone on the last line of
 * stdout, so `| tail -n1` captures it; everything else about it goes before
 * it or to stderr. Creating or rotating a token whose lifetime exceeds the
 * recommended maximum (docs/api.md, "Tokens"), or that never expires, prints
 * a warning on stderr (see {@linkcode RECOMMENDED_MAX_LIFETIME_DAYS}), and so
 * does every warning the service answers with (a `namespace-client` token of
 * an environment that is not public).
 *
 * @module
 */
import { type Command, Option } from "commander";
import type { IssuedToken, TokenInfo } from "../client/api.ts";
import { TOKEN_TYPES, type TokenType } from "../store/tokens.ts";
import { UsageError } from "../errors.ts";
import { parseDuration, parseTimestamp } from "./duration.ts";
import { pageQuery, printPage, withPageOptions } from "./listing.ts";
import { cell, openClient, printFields, printJson, withRemoteOptions } from "./remote_options.ts";
import { printSecret } from "./secret_output.ts";

/**
 * Largest lifetime, in days, before `token create` / `token rotate` warn.
 * The recommended maxima of docs/api.md: `namespace-write` (CI) 90 days,
 * `namespace-read` (runtime) 180 days, `namespace-client` 30 to 90 days (the
 * upper bound is used), `tenant-admin` and `superadmin` "as short as
 * practical", which cfgtool reads as 30 days. A token without expiry always
 * warns.
 */
export const RECOMMENDED_MAX_LIFETIME_DAYS: Readonly<Record<TokenType, number>> = {
  "namespace-read": 180,
  "namespace-write": 90,
  "namespace-client": 90,
  "tenant-admin": 30,
  "superadmin": 30,
};

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The lifetime warning for a token, or undefined when its lifetime is within
 * {@linkcode RECOMMENDED_MAX_LIFETIME_DAYS}.
 *
 * @param type the token type
 * @param expiresAt the expiry (null: never expires)
 * @param now the creation time
 * @returns the warning line, or undefined
 *
 * @example
 * ```ts
 * import { lifetimeWarning } from "./token.ts";
 * const now = new Date("2030-01-01T00:00:00Z");
 * if (lifetimeWarning("namespace-read", new Date("2030-03-01T00:00:00Z"), now)) throw new Error();
 * if (!lifetimeWarning("superadmin", null, now)?.includes("never expires")) throw new Error();
 * ```
 */
export function lifetimeWarning(
  type: string,
  expiresAt: Date | null,
  now: Date,
): string | undefined {
  const max = RECOMMENDED_MAX_LIFETIME_DAYS[type as TokenType];
  if (max === undefined) return undefined;
  if (expiresAt === null) {
    return `warning: this ${type} token never expires; the recommended maximum lifetime is ` +
      `${max} days (pass --expires-in ${max}d)`;
  }
  const days = (expiresAt.getTime() - now.getTime()) / DAY_MS;
  if (days <= max + 1 / 24) return undefined; // an hour of slack for clock and rounding
  return `warning: this ${type} token lives ${Math.round(days)} days; the recommended ` +
    `maximum is ${max} days`;
}

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool token create --type namespace-write --name ci --tenant acme --namespace checkout \\\n" +
  "      --expires-in 90d\n" +
  "  cfgtool token create --type namespace-client --name web --tenant acme --namespace checkout \\\n" +
  "      --environment staging --origin https://shop.example.com --expires-in 30d\n" +
  "  cfgtool token list --tenant acme --status active\n" +
  "  cfgtool token rotate tok_01J0… --expires-in 90d\n" +
  "  cfgtool token revoke tok_01J0…\n";

/**
 * Registers `token` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerTokenCommands } from "./token.ts";
 * const program = new Command();
 * registerTokenCommands(program);
 * if (!program.commands.some((c) => c.name() === "token")) throw new Error();
 * ```
 */
export function registerTokenCommands(program: Command): void {
  const token = program
    .command("token")
    .description("Manage service tokens on a cfgtool service (types and rules: docs/api.md).")
    .addHelpText("after", EXAMPLES);

  withRemoteOptions(
    token.command("create").description(
      "Create a service token; prints its metadata, then the secret alone on the last line.",
    ),
  )
    .addOption(
      new Option("--type <type>", "token type").choices(TOKEN_TYPES).makeOptionMandatory(),
    )
    .requiredOption("--name <name>", "display name, unique within the bound scope")
    .option("--tenant <slug>", "bound tenant (all types but superadmin)")
    .option("--namespace <slug>", "bound namespace (namespace-read, -write, -client)")
    .option("--environment <slug>", "bound environment (namespace-client only)")
    .option(
      "--origin <origin>",
      "allowed browser Origin, repeatable (namespace-client only)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option("--expires-in <duration>", "lifetime: 30d, 12h, 90m, 2w")
    .option("--expires-at <time>", "expiry as RFC 3339 (2030-01-31T00:00:00Z)")
    .option("--description <text>", "a note")
    .option("--json", "print {token, secret} as JSON")
    .addHelpText(
      "after",
      "\nThe secret is shown once. Warns on stderr when the token never expires or outlives\n" +
        "the recommended maximum: namespace-read 180d, namespace-write 90d,\n" +
        "namespace-client 90d, tenant-admin and superadmin 30d; and when a namespace-client\n" +
        "token's environment is not public (public_evaluate = false): it gets 403 until it is.\n" +
        EXAMPLES,
    )
    .action(async (opts) => {
      const type = opts.type;
      const needs = {
        tenant: type !== "superadmin",
        namespace: type.startsWith("namespace-"),
        environment: type === "namespace-client",
      };
      for (const [flag, needed] of Object.entries(needs) as [keyof typeof needs, boolean][]) {
        if (needed && opts[flag] === undefined) {
          throw new UsageError(`--${flag} is required for a ${type} token`);
        }
        if (!needed && opts[flag] !== undefined) {
          throw new UsageError(`--${flag} does not apply to a ${type} token`);
        }
      }
      if (type !== "namespace-client" && opts.origin.length > 0) {
        throw new UsageError("--origin applies only to namespace-client tokens");
      }
      const now = new Date();
      const expiresAt = expiryOf(opts, now);
      const client = await openClient(opts);
      const warning = lifetimeWarning(type, expiresAt, now);
      if (warning) console.error(warning);
      const issued = await client.createToken({
        type,
        name: opts.name,
        ...(opts.description === undefined ? {} : { description: opts.description }),
        ...(opts.tenant === undefined ? {} : { tenant_slug: opts.tenant }),
        ...(opts.namespace === undefined ? {} : { namespace_slug: opts.namespace }),
        ...(opts.environment === undefined ? {} : { environment_slug: opts.environment }),
        ...(opts.origin.length === 0 ? {} : { allowed_origins: opts.origin }),
        ...(expiresAt === null ? {} : { expires_at: expiresAt.toISOString() }),
      });
      printIssued(issued, opts.json === true);
    });

  withPageOptions(
    withRemoteOptions(token.command("list").description("List service tokens (never secrets)."))
      .option("--tenant <slug>", "only tokens bound to this tenant")
      .option("--namespace <slug>", "only tokens bound to this namespace (needs --tenant)")
      .addOption(new Option("--type <type>", "only this type").choices(TOKEN_TYPES))
      .addOption(
        new Option("--status <status>", "only this status (default active)").choices(
          ["active", "revoked", "expired"] as const,
        ),
      ),
  )
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool token list --tenant acme\n" +
        "  cfgtool token list --tenant acme --namespace checkout --status revoked --json\n",
    )
    .action(async (opts) => {
      if (opts.namespace !== undefined && opts.tenant === undefined) {
        throw new UsageError("--namespace needs --tenant: a namespace is named within its tenant");
      }
      const paging = pageQuery(opts);
      const page = await (await openClient(opts)).listTokens({
        ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
        ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
        ...(opts.type === undefined ? {} : { type: opts.type }),
        ...(opts.status === undefined ? {} : { status: opts.status }),
        ...paging,
      });
      printPage(
        page,
        opts.json === true,
        ["ID", "TYPE", "NAME", "BINDING", "PREFIX", "STATUS", "EXPIRES", "LAST USED"],
        (t) => [
          t.id,
          t.type,
          t.name,
          bindingOf(t),
          t.prefix,
          t.status,
          cell(t.expires_at),
          cell(t.last_used_at),
        ],
      );
    });

  withRemoteOptions(
    token.command("show").description("Show one token's metadata.").argument(
      "<id>",
      "token id (tok_…)",
    ),
  )
    .option("--json", "print the token as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool token show tok_01J0…\n")
    .action(async (id, opts) => {
      const t = await (await openClient(opts)).getToken(id);
      if (opts.json) return printJson(t);
      printFields(tokenFields(t));
    });

  withRemoteOptions(
    token.command("rotate")
      .description(
        "Create a replacement with the same type and binding; the old token stays active\n" +
          "until revoked. Prints the new secret alone on the last line.",
      )
      .argument("<id>", "token id (tok_…)"),
  )
    .option("--name <name>", "name of the replacement (default: the old name)")
    .option("--expires-in <duration>", "lifetime of the replacement: 30d, 12h, 90m, 2w")
    .option("--expires-at <time>", "expiry of the replacement as RFC 3339")
    .option("--json", "print {token, secret} as JSON")
    .addHelpText(
      "after",
      "\nZero-downtime: rotate, update the consumer, verify it, then revoke the old token.\n" +
        "\nExamples:\n  cfgtool token rotate tok_01J0… --expires-in 90d\n" +
        "  cfgtool token revoke tok_01J0…\n",
    )
    .action(async (id, opts) => {
      const now = new Date();
      const expiresAt = expiryOf(opts, now);
      const issued = await (await openClient(opts)).rotateToken(id, {
        ...(opts.name === undefined ? {} : { name: opts.name }),
        ...(expiresAt === null ? {} : { expires_at: expiresAt.toISOString() }),
      });
      const exp = issued.token.expires_at;
      const warning = lifetimeWarning(
        issued.token.type,
        typeof exp === "string" ? new Date(exp) : null,
        now,
      );
      if (warning) console.error(warning);
      printIssued(issued, opts.json === true);
    });

  withRemoteOptions(
    token.command("revoke")
      .description("Revoke a token at once (it gets 401 from then on).")
      .argument("<id>", "token id (tok_…)"),
  )
    .option("--json", "print the answer as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool token revoke tok_01J0…\n")
    .action(async (id, opts) => {
      const t = await (await openClient(opts)).revokeToken(id);
      if (opts.json) return printJson(t);
      console.log(`revoked ${t.id ?? id}${t.revoked_at ? ` at ${t.revoked_at}` : ""}`);
    });
}

function expiryOf(
  opts: { expiresIn?: string | undefined; expiresAt?: string | undefined },
  now: Date,
): Date | null {
  if (opts.expiresIn !== undefined && opts.expiresAt !== undefined) {
    throw new UsageError("use either --expires-in or --expires-at, not both");
  }
  if (opts.expiresIn !== undefined) {
    return new Date(now.getTime() + parseDuration(opts.expiresIn, "--expires-in"));
  }
  if (opts.expiresAt !== undefined) {
    const at = parseTimestamp(opts.expiresAt, "--expires-at");
    if (at.getTime() <= now.getTime()) {
      throw new UsageError(`--expires-at ${opts.expiresAt} is in the past`);
    }
    return at;
  }
  return null;
}

function bindingOf(t: TokenInfo): string {
  if (!t.tenant_slug) return "(installation)";
  return [t.tenant_slug, t.namespace_slug, t.environment_slug].filter((x) => x).join("/");
}

function tokenFields(t: TokenInfo): [string, unknown][] {
  return [
    ["id", t.id],
    ["type", t.type],
    ["name", t.name],
    ["binding", bindingOf(t)],
    ["prefix", t.prefix],
    ["status", t.status],
    ["description", t.description],
    ["allowed origins", t.allowed_origins],
    ["created", t.created_at],
    ["created by", t.created_by],
    ["expires", t.expires_at ?? (t.expires_at === null ? "never" : undefined)],
    ["last used", t.last_used_at],
    ["revoked", t.revoked_at],
    ["rotated from", t.rotated_from_token_id],
    ["rotated to", t.rotated_to_token_id],
  ].filter(([k, v]) => v !== undefined || k === "description") as [string, unknown][];
}

function printIssued(
  issued: IssuedToken,
  json: boolean,
): void {
  for (const w of issued.warnings ?? []) console.error(`warning: ${w.message}`);
  if (json) {
    printSecret(JSON.stringify(issued, null, 2)); // printJson's shape, past console capture
    return;
  }
  printFields(tokenFields(issued.token));
  console.error("The secret below is shown only now; store it in a secret manager.");
  printSecret(issued.secret);
}
