import { UsageError } from "../errors.ts";

/**
 * `cfgtool admin …`: the admin CLI on the server host. It opens the KV store
 * directly (no HTTP): `bootstrap` creates a superadmin token, `user create`
 * a human user, `session create` a session token for a user. The HMAC key is
 * found exactly as `cfgtool serve` finds it (`--token-key-file`, else
 * `CFGTOOL_TOKEN_KEY_FILE`, else `token.key` beside the KV data, created when
 * missing), so the secrets printed here authenticate against that server.
 * Each secret or id is printed alone on the last line of stdout.
 *
 * @module
 */
import type { Command } from "commander";
import { DEFAULT_KV_PATH } from "../store/kv.ts";

const KV_HELP = "KV store: a file path, :memory: or a KV Connect URL (default: $CFGTOOL_KV,\n" +
  "else ./cfgtool-data/kv.sqlite3, as for serve)";
const KEY_HELP = "HMAC key file (default: $CFGTOOL_TOKEN_KEY_FILE, else token.key beside the\n" +
  "KV data, as for serve)";

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool admin bootstrap --kv /var/lib/cfgtool/kv.sqlite3 | tail -n1\n" +
  "  cfgtool admin user create --kv /var/lib/cfgtool/kv.sqlite3 --email ana@example.com\n" +
  "  cfgtool admin session create --kv /var/lib/cfgtool/kv.sqlite3 --user ana@example.com --ttl 8h\n";

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
        "users, sessions.",
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
        const { bootstrapSuperadmin } = await import("../auth/bootstrap.ts");
        const issued = await bootstrapSuperadmin(
          kv,
          key,
          opts.name === undefined ? {} : { name: opts.name },
        );
        if (opts.json) return console.log(JSON.stringify(issued, null, 2));
        const t = issued.token;
        console.log(`created superadmin token ${t.name} (${t.id}, prefix ${t.prefix})`);
        console.error("The secret below is shown only now; store it in a secret manager.");
        console.log(issued.secret);
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
      "where to write the new key (default: token.key beside the KV)",
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
      const [{ openKv }, { rekeyStore }] = await Promise.all([
        import("../store/kv.ts"),
        import("../auth/rekey.ts"),
      ]);
      const kv = await openKv(spec);
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
      "\nExamples:\n  cfgtool admin user create --kv ./cfgtool-data/kv.sqlite3 --email ana@example.com\n",
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
      const { openKv } = await import("../store/kv.ts");
      const { createUser } = await import("../store/users.ts");
      const kv = await openKv(kvSpec(opts.kv));
      try {
        const u = await createUser(kv, { email: opts.email });
        if (opts.json) return console.log(JSON.stringify(u, null, 2));
        console.log(`created user ${u.email}`);
        console.log(u.id);
      } finally {
        kv.close();
      }
    });

  const session = admin.command("session").description("Manage human sessions.")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool admin session create --kv ./cfgtool-data/kv.sqlite3 --user ana@example.com\n",
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
      const { parseDuration } = await import("./duration.ts");
      const ttl = parseDuration(opts.ttl, "--ttl");
      await withStore(opts, async (kv, key) => {
        const { createSession } = await import("../auth/sessions.ts");
        const { session: s, secret } = await createSession(kv, key, { user: opts.user, ttl });
        const { digest: _digest, ...shown } = s;
        if (opts.json) return console.log(JSON.stringify({ session: shown, secret }, null, 2));
        console.log(`created session ${s.id} for ${s.user_id}, expires ${s.expires_at}`);
        console.log(secret);
      });
    });
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
  const [{ openKv }, { openTokenKey }] = await Promise.all([
    import("../store/kv.ts"),
    import("../auth/hmac_key.ts"),
  ]);
  const spec = kvSpec(opts.kv);
  if (spec === ":memory:") {
    throw new UsageError(
      "--kv :memory: is a store private to one process: name the server's KV file instead",
    );
  }
  const keyFile = opts.tokenKeyFile ?? Deno.env.get("CFGTOOL_TOKEN_KEY_FILE");
  const kv = await openKv(spec);
  try {
    const loaded = await openTokenKey(
      kv,
      keyFile === undefined ? { kv: spec } : { kv: spec, keyFile },
    );
    if (loaded.created) console.error(`created token key file ${loaded.path}`);
    await fn(kv, loaded.key);
  } finally {
    kv.close();
  }
}
