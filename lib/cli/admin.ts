/**
 * `cfgtool admin …`: the admin CLI on the server host. It opens the KV store
 * directly (no HTTP): `bootstrap` creates a superadmin token, `user
 * create|list|delete` manages human users, `session create|list|revoke`
 * their session tokens, `backup|restore|check` the store as a whole
 * (lib/cli/admin_backup.ts). The HMAC key is
 * found exactly as `cfgtool serve` finds it (`--token-key-file`, else
 * `CFGTOOL_TOKEN_KEY_FILE`, else `token.key` beside the KV data, created when
 * missing), so the secrets printed here authenticate against that server.
 * Each secret or id is printed alone on the last line of stdout. Each
 * command first checks the store's layout (lib/store/layout.ts): it refuses
 * a store of a newer or an older layout than this release's.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import type { Command } from "commander";
import { InvalidRequestError, UsageError } from "../errors.ts";
import { DEFAULT_KV_PATH, openKv } from "../store/kv.ts";
import { registerBackupCommands } from "./admin_backup.ts";
import { confirmDeletion } from "./confirm.ts";
import { parseDuration } from "./duration.ts";
import { printJson, printTable } from "./remote_options.ts";
import { printSecret } from "./secret_output.ts";

const KV_HELP = "KV store: a file path, :memory: or a KV Connect URL (default: $CFGTOOL_KV, " +
  "else ./cfgtool-data/kv.sqlite3, as for serve)";
const KEY_HELP = "HMAC key file (default: $CFGTOOL_TOKEN_KEY_FILE, else token.key beside the " +
  "KV data, as for serve)";

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool admin bootstrap --kv /var/lib/cfgtool/kv.sqlite3 | tail -n1\n" +
  "  cfgtool admin user create --kv /var/lib/cfgtool/kv.sqlite3 --email ana@example.com\n" +
  "  cfgtool admin session create --kv /var/lib/cfgtool/kv.sqlite3 --user ana@example.com --ttl 8h\n" +
  "  cfgtool admin session list --kv /var/lib/cfgtool/kv.sqlite3 --user ana@example.com\n" +
  "  cfgtool admin backup --kv /var/lib/cfgtool/kv.sqlite3 --out /backup/cfgtool.jsonl\n" +
  "  cfgtool admin restore --kv /var/lib/cfgtool-new/kv.sqlite3 --in /backup/cfgtool.jsonl\n" +
  "  cfgtool admin check --kv /var/lib/cfgtool/kv.sqlite3\n";

/**
 * Registers `admin` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerAdminCommands } from "./admin.ts";
 * const program = new Command();
 * registerAdminCommands(program);
 * if (!program.commands.some((c) => c.name() === "admin")) throw new Error();
 * ```
 */
export function registerAdminCommands(program: Command): void {
  const admin = program
    .command("admin")
    .description(
      "Server-host administration on the KV store directly: bootstrap (superadmin token),\n" +
        "users, sessions, backup, restore and the full check of the store. The commands that\n" +
        "open the store refuse one whose layout is newer than this cfgtool's (exit 3) or\n" +
        "older (start cfgtool serve of this version on it first: it migrates the store).",
    )
    .addHelpText("after", EXAMPLES);

  admin.command("bootstrap")
    .description(
      "Create a superadmin token (first start or break-glass; each run makes a new one).\n" +
        "Prints its secret once, alone on the last line.",
    )
    .option("--kv <location>", KV_HELP)
    .option("--name <name>", "token name (default: the next free bootstrap-<n>)")
    .option("--token-key-file <file>", KEY_HELP)
    .option("--json", "print {token, secret} as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin bootstrap --kv ./cfgtool-data/kv.sqlite3\n" +
        "  export CFGTOOL_TOKEN=$(cfgtool admin bootstrap --kv ./cfgtool-data/kv.sqlite3 | tail -n1)\n",
    )
    .action(async (opts) => {
      await withStore(opts, async (kv, key) => {
        // lazy: auth/ (node:crypto, @scure/base) loads only for admin commands
        const { bootstrapSuperadmin } = await import("../auth/bootstrap.ts");
        const issued = await bootstrapSuperadmin(
          kv,
          key,
          opts.name === undefined ? {} : { name: opts.name },
        );
        if (opts.json) return printSecret(JSON.stringify(issued, null, 2));
        const t = issued.token;
        console.log(`created superadmin token ${t.name} (${t.id}, prefix ${t.prefix})`);
        console.error("The secret below is shown only now; store it in a secret manager.");
        printSecret(issued.secret);
      });
    });

  admin.command("rekey")
    .description(
      "Replace the token HMAC key (lost, leaked or rotated key file): writes a new key file " +
        "(an existing one is renamed aside), revokes every active service token and ends every " +
        "session, then records the new key. Mint a new superadmin with `admin bootstrap` after.",
    )
    .option("--kv <location>", KV_HELP)
    .option(
      "--token-key-file <file>",
      "where to write the new key (default: $CFGTOOL_TOKEN_KEY_FILE, else token.key beside the KV)",
    )
    .option("--yes", "confirm: every token and session of the installation stops working")
    .option("--json", "print {path, previous, revoked, sessions} as JSON")
    .addHelpText(
      "after",
      "\nStop every `cfgtool serve` of the installation first, and give the new key file to all" +
        " of them.\n\nExamples:\n  cfgtool admin rekey --kv ./cfgtool-data/kv.sqlite3 --yes\n",
    )
    .action(async (opts) => {
      if (!opts.yes) {
        throw new UsageError(
          "admin rekey revokes every token and ends every session of the installation; " +
            "pass --yes to go ahead",
        );
      }
      const spec = kvSpec(opts.kv);
      if (spec === ":memory:") {
        throw new UsageError("--kv :memory: is a store private to one process: name the KV file");
      }
      // lazy: auth/ (node:crypto) loads only for admin commands
      const { rekeyStore } = await import("../auth/rekey.ts");
      const kv = await openStore(spec);
      try {
        const keyFile = opts.tokenKeyFile ?? Deno.env.get("CFGTOOL_TOKEN_KEY_FILE");
        const r = await rekeyStore(
          kv,
          keyFile === undefined ? { kv: spec } : { kv: spec, keyFile },
        );
        if (opts.json) return console.log(JSON.stringify(r, null, 2));
        console.log(`wrote a new token key to ${r.path}`);
        if (r.previous) console.log(`the previous key file is now ${r.previous}`);
        console.log(`revoked ${r.revoked.length} token(s), ended ${r.sessions} session(s)`);
        console.log("next: cfgtool admin bootstrap --kv " + spec);
      } finally {
        kv.close();
      }
    });

  const user = admin.command("user").description("Manage human users.")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin user create --kv ./cfgtool-data/kv.sqlite3 --email ana@example.com\n" +
        "  cfgtool admin user list --kv ./cfgtool-data/kv.sqlite3\n" +
        "  cfgtool admin user delete ana@example.com --kv ./cfgtool-data/kv.sqlite3 --yes\n",
    );
  user.command("create")
    .description("Create a user; prints the user id (usr_…) on the last line.")
    .option("--kv <location>", KV_HELP)
    .requiredOption("--email <email>", "the user's email (unique, compared in lower case)")
    .option("--json", "print the user as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin user create --kv ./cfgtool-data/kv.sqlite3 --email ana@example.com\n",
    )
    .action(async (opts) => {
      // lazy: the user store loads only for admin commands
      const { createUser } = await import("../store/users.ts");
      const kv = await openStore(kvSpec(opts.kv));
      try {
        const u = await asUsage(() => createUser(kv, { email: opts.email }));
        if (opts.json) return console.log(JSON.stringify(u, null, 2));
        console.log(`created user ${u.email}`);
        console.log(u.id);
      } finally {
        kv.close();
      }
    });

  user.command("list")
    .description("List every user with the tenants and namespaces it administers.")
    .option("--kv <location>", KV_HELP)
    .option("--json", "print a JSON array of {id, email, created_at, memberships}")
    .addHelpText("after", "\nExamples:\n  cfgtool admin user list --kv ./cfgtool-data/kv.sqlite3\n")
    .action(async (opts) => {
      await withKv(opts.kv, async (kv) => {
        // lazy: the user and membership stores load only for admin commands
        const [{ listUsers }, { membershipsOfUser }] = await Promise.all([
          import("../store/users.ts"),
          import("../store/membership.ts"),
        ]);
        const users = await Promise.all(
          (await listUsers(kv)).map(async (u) => ({
            ...u,
            memberships: await membershipsOfUser(kv, u.id),
          })),
        );
        if (opts.json) return printJson(users);
        printTable(
          ["ID", "EMAIL", "CREATED", "ADMIN OF"],
          users.map((u) => [u.id, u.email, u.created_at, membershipCell(u.memberships)]),
        );
      });
    });

  user.command("delete")
    .description(
      "Delete a user with its admin memberships (tenants, namespaces) and its sessions: its " +
        "session tokens are refused at once. Asks you to type the email on a terminal; " +
        "elsewhere pass --yes.",
    )
    .argument("<user>", "user id (usr_…) or email")
    .option("--kv <location>", KV_HELP)
    .option("--yes", "delete without asking (required when stdin is not a terminal)")
    .option("--json", "print {user, memberships, sessions} as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin user delete ana@example.com --kv ./cfgtool-data/kv.sqlite3\n" +
        "  cfgtool admin user delete usr_01J0… --kv ./cfgtool-data/kv.sqlite3 --yes\n",
    )
    .action(async (who, opts) => {
      await withKv(opts.kv, async (kv) => {
        // lazy: the user stores and auth/ (node:crypto) load only for admin commands
        const [{ deleteUser, getUser }, { membershipsOfUser }, { listSessions }] = await Promise
          .all([
            import("../store/users.ts"),
            import("../store/membership.ts"),
            import("../auth/sessions.ts"),
          ]);
        const u = await getUser(kv, who);
        await confirmDeletion({
          yes: opts.yes,
          summary: `admin user delete removes ${u.email} with its admin memberships and ends ` +
            "its sessions",
          answer: u.email,
          details: async () => {
            const m = await membershipsOfUser(kv, u.id);
            const sessions = await listSessions(kv, { user: u.id });
            return [
              `This deletes user ${u.email} (${u.id}) for good:`,
              `  - admin of: ${membershipCell(m)}`,
              `  - ${sessions.length} live session(s), ended at once`,
            ];
          },
        });
        const gone = await deleteUser(kv, u.id);
        if (opts.json) return console.log(JSON.stringify(gone, null, 2));
        console.log(
          `deleted user ${gone.user.email} (${gone.user.id}): removed ` +
            `${gone.memberships.length} admin membership(s), ended ${gone.sessions.length} ` +
            "session(s)",
        );
      });
    });

  admin.command("console-link")
    .description(
      "Make a one-time link that opens the web console as the installation's operator " +
        "(superadmin rights, except issuing superadmin tokens) for the person with this email; " +
        "prints the link on the last line. It works once, for --ttl; the session it opens " +
        "ends after 8 hours, or 30 minutes without a request. Run it on the server's store " +
        "(CFGTOOL_KV or --kv, as for serve): a server on another store does not know the link. " +
        "On a new installation's store, serve prints such a link itself when it starts.",
    )
    .option("--kv <location>", KV_HELP)
    .requiredOption("--user <email>", "the operator's email (a user is made when it is new)")
    .option("--url <origin>", "the service's public origin, e.g. https://flags.example.com", "")
    .option("--ttl <duration>", "how long the link works: 10m, 1h", "10m")
    .option("--token-key-file <file>", KEY_HELP)
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool admin console-link --user ops@example.com --url http://127.0.0.1:8080\n" +
        "  cfgtool admin console-link --kv /var/lib/cfgtool/kv.sqlite3 --user ops@example.com \\\n" +
        "    --url https://flags.example.com --ttl 5m\n",
    )
    .action(async (opts) => {
      const ttl = parseDuration(opts.ttl, "--ttl");
      const origin = trimTrailing(opts.url, "/");
      if (origin !== "" && !/^https?:\/\/[^/?#]+$/.test(origin)) {
        throw new UsageError(
          `--url must be an origin like https://flags.example.com, not ${opts.url}`,
        );
      }
      await withStore(opts, async (kv, key) => {
        // lazy: auth/ loads only for admin commands
        const { createOperatorLink } = await import("../login/operator_link.ts");
        const link = await createOperatorLink({ kv, key }, opts.user, ttl);
        console.log(
          `console link for ${link.user.email} (${link.user.id}), works once until ` +
            `${link.expiresAt.toISOString()}${
              origin === "" ? "; open it on the server's origin" : ""
            }`,
        );
        printSecret(`${origin}/auth/operator?code=${link.code}`);
      });
    });

  const session = admin.command("session").description("Manage human sessions.")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin session create --kv ./cfgtool-data/kv.sqlite3 --user ana@example.com\n" +
        "  cfgtool admin session list --kv ./cfgtool-data/kv.sqlite3\n" +
        "  cfgtool admin session revoke ssn_01J0… --kv ./cfgtool-data/kv.sqlite3\n",
    );
  session.command("create")
    .description("Create a session token (ses_…) for a user; prints it on the last line.")
    .option("--kv <location>", KV_HELP)
    .requiredOption("--user <user>", "user id (usr_…) or email")
    .option("--ttl <duration>", "lifetime: 12h, 90m, 1d", "12h")
    .option("--token-key-file <file>", KEY_HELP)
    .option("--json", "print {session, secret} as JSON (the session without its digest)")
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  cfgtool admin session create --kv ./cfgtool-data/kv.sqlite3 --user ana@example.com\n" +
        "  cfgtool admin session create --kv ./cfgtool-data/kv.sqlite3 --user usr_01J0… --ttl 1h\n",
    )
    .action(async (opts) => {
      const ttl = parseDuration(opts.ttl, "--ttl");
      await withStore(opts, async (kv, key) => {
        // lazy: auth/ (node:crypto, @scure/base) loads only for admin commands
        const { createSession } = await import("../auth/sessions.ts");
        const { session: s, secret } = await createSession(kv, key, { user: opts.user, ttl });
        const { digest: _digest, ...shown } = s;
        if (opts.json) return printSecret(JSON.stringify({ session: shown, secret }, null, 2));
        console.log(`created session ${s.id} for ${s.user_id}, expires ${s.expires_at}`);
        printSecret(secret);
      });
    });

  session.command("list")
    .description(
      "List the live sessions (id, user, token prefix, times); never a secret or digest.",
    )
    .option("--kv <location>", KV_HELP)
    .option("--user <user>", "only the sessions of this user (id or email)")
    .option("--json", "print a JSON array of sessions (without digests)")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin session list --kv ./cfgtool-data/kv.sqlite3\n" +
        "  cfgtool admin session list --kv ./cfgtool-data/kv.sqlite3 --user ana@example.com\n",
    )
    .action(async (opts) => {
      await withKv(opts.kv, async (kv) => {
        // lazy: auth/ (node:crypto) and the user store load only for admin commands
        const [{ listSessions }, { findUser }] = await Promise.all([
          import("../auth/sessions.ts"),
          import("../store/users.ts"),
        ]);
        const sessions = await listSessions(
          kv,
          opts.user === undefined ? {} : { user: opts.user },
        );
        if (opts.json) return printJson(sessions);
        const emails = new Map<string, string>();
        for (const s of sessions) {
          if (!emails.has(s.user_id)) {
            emails.set(s.user_id, (await findUser(kv, s.user_id))?.email ?? "-");
          }
        }
        printTable(
          ["ID", "USER", "EMAIL", "PREFIX", "CREATED", "EXPIRES"],
          sessions.map((s) => [
            s.id,
            s.user_id,
            emails.get(s.user_id)!,
            s.prefix,
            s.created_at,
            s.expires_at,
          ]),
        );
      });
    });

  session.command("revoke")
    .description("End a session at once: its token is refused from the next request on.")
    .argument("<session>", "session id (ssn_…, from `admin session list`)")
    .option("--kv <location>", KV_HELP)
    .option("--json", "print the revoked session as JSON (without its digest)")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin session revoke ssn_01J0… --kv ./cfgtool-data/kv.sqlite3\n",
    )
    .action(async (id, opts) => {
      await withKv(opts.kv, async (kv) => {
        // lazy: auth/ (node:crypto, @scure/base) loads only for admin commands
        const { revokeSession } = await import("../auth/sessions.ts");
        const s = await revokeSession(kv, id);
        if (opts.json) return console.log(JSON.stringify(s, null, 2));
        console.log(`revoked session ${s.id} of ${s.user_id}`);
      });
    });

  registerBackupCommands(admin);
}

/** The memberships of a user as one cell: `acme, acme/web`, or `-`. */
function membershipCell(m: { tenant: string; namespace: string | null }[]): string {
  if (m.length === 0) return "-";
  return m.map((x) => x.namespace === null ? x.tenant : `${x.tenant}/${x.namespace}`).join(", ");
}

/** Opens the server's KV (a file or KV Connect URL, never :memory:) and runs `fn`. */
async function withKv(
  kvOption: string | undefined,
  fn: (kv: Deno.Kv) => Promise<void>,
): Promise<void> {
  const spec = kvSpec(kvOption);
  if (spec === ":memory:") {
    throw new UsageError(
      "--kv :memory: is a store private to one process: name the server's KV file instead",
    );
  }
  const kv = await openStore(spec);
  try {
    await asUsage(() => fn(kv));
  } finally {
    kv.close();
  }
}

/**
 * Opens the server's KV for an admin command, after its layout check
 * (lib/store/layout.ts): a store written by a newer cfgtool is refused
 * (exit 3), and so is an older layout (`cfgtool serve` of this version
 * migrates it first); a new store gets this release's layout record.
 */
async function openStore(spec: string): Promise<Deno.Kv> {
  const kv = await openKv(spec);
  try {
    // lazy: the layout modules load only for admin commands
    const { prepareLayout } = await import("../store/layout.ts");
    await prepareLayout(kv, { migrate: false });
    return kv;
  } catch (err) {
    kv.close();
    throw err;
  }
}

/** The `--kv` value, else `CFGTOOL_KV`, else the default path: the same rule as `serve`. */
function kvSpec(kv: string | undefined): string {
  return kv ?? Deno.env.get("CFGTOOL_KV") ?? DEFAULT_KV_PATH;
}

/** Opens the KV and loads the token key the way `serve` does, then runs `fn`. */
async function withStore(
  opts: { kv?: string | undefined; tokenKeyFile?: string | undefined },
  fn: (kv: Deno.Kv, key: CryptoKey) => Promise<void>,
): Promise<void> {
  // lazy: auth/ (node:crypto) loads only for admin commands
  const { openTokenKey } = await import("../auth/hmac_key.ts");
  const spec = kvSpec(opts.kv);
  if (spec === ":memory:") {
    throw new UsageError(
      "--kv :memory: is a store private to one process: name the server's KV file instead",
    );
  }
  const keyFile = opts.tokenKeyFile ?? Deno.env.get("CFGTOOL_TOKEN_KEY_FILE");
  const kv = await openStore(spec);
  try {
    const loaded = await openTokenKey(
      kv,
      keyFile === undefined ? { kv: spec } : { kv: spec, keyFile },
    );
    if (loaded.created) console.error(`created token key file ${loaded.path}`);
    await asUsage(() => fn(kv, loaded.key));
  } finally {
    kv.close();
  }
}

/**
 * Runs store code on values taken from the command line: a value it refuses
 * (an email that is not one, a token name too long) is a usage mistake, so
 * its {@linkcode InvalidRequestError} becomes a {@linkcode UsageError} (exit
 * 2, as for a bad flag), unlike a 400 from a server (exit 1).
 */
async function asUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof InvalidRequestError)) throw err;
    throw new UsageError(
      err.message,
      err.details === undefined ? { cause: err } : { details: err.details, cause: err },
    );
  }
}
