/**
 * `cfgtool login`, `cfgtool logout` and `cfgtool whoami`: signing in from
 * the command line (in the browser on this computer, or with a code on
 * any device), keeping the session in the credentials file
 * (lib/cli/credentials_file.ts) for every remote command to use, ending
 * it, and asking the service who a credential is.
 *
 * @module
 */
import type { Command } from "commander";
import { CfgtoolError, UnauthorizedError, UsageError } from "../errors.ts";
import {
  credentialsPath,
  pickProfile,
  profileNameFor,
  readCredentials,
  withoutProfile,
  withProfile,
  writeCredentials,
} from "./credentials_file.ts";
import { printable } from "./printable.ts";
import { noteSecret } from "./secret_output.ts";
import {
  cell,
  checkedServer,
  printFields,
  printJson,
  resolveRemote,
  withRemoteOptions,
} from "./remote_options.ts";
import { isLoopbackHost } from "../net/loopback.ts";

const FILE_HELP = "\nWhere the sign-in is kept:\n" +
  "  $XDG_CONFIG_HOME/cfgtool/credentials.toml (default ~/.config/cfgtool/credentials.toml),\n" +
  "  mode 0600, one [profiles.<name>] table per server; the name defaults to the\n" +
  "  server's host:port. Remote commands use the profile for their --server (or the\n" +
  "  only profile, or the one --profile / CFGTOOL_PROFILE names).\n" +
  "  --token and CFGTOOL_TOKEN, when given, win over any saved profile.\n";

const LOGIN_HELP = "\nHow it works:\n" +
  "  In the browser (default): cfgtool listens on 127.0.0.1 on a random port and\n" +
  "  opens <server>/auth/cli/authorize in your browser ($BROWSER, else xdg-open /\n" +
  "  open / start; the URL is printed too). Sign in there if asked, confirm, and the\n" +
  "  browser hands cfgtool a one-time code (PKCE-protected) on the loopback address.\n" +
  "  With --no-browser (SSH sessions, containers): cfgtool prints a URL and a code\n" +
  "  such as BCDF-GHJK; open the URL on any device, sign in, check the code and\n" +
  "  confirm. cfgtool waits until you confirm or deny, or the code expires (10 min);\n" +
  "  in the browser mode it waits 5 minutes.\n" +
  "  The tenant must have a sign-in method (cfgtool tenant login set). The CLI session\n" +
  "  ends no later than the browser sign-in it came from. The server URL must be\n" +
  "  https:// unless it is this machine (127.0.0.1, localhost). Signing in again to\n" +
  "  the same server replaces the profile and ends its old session.\n" +
  FILE_HELP +
  "\nExamples:\n" +
  "  cfgtool login --server https://flags.example.com --tenant acme\n" +
  "  cfgtool login --server https://flags.example.com --no-browser\n" +
  "  cfgtool login --server http://127.0.0.1:8080 --profile local\n";

/**
 * Registers `login`, `logout` and `whoami`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerLoginCommands } from "./login.ts";
 * const program = new Command();
 * registerLoginCommands(program);
 * const names = program.commands.map((c) => c.name()).join();
 * if (names !== "login,logout,whoami") throw new Error(names);
 * ```
 */
export function registerLoginCommands(program: Command): void {
  program
    .command("login")
    .description(
      "Sign in to a cfgtool service as a person and save the session for the other commands.",
    )
    .option(
      "--server <url>",
      "URL of the cfgtool service (default: $CFGTOOL_SERVER, else the saved profile's)",
    )
    .option("--tenant <slug>", "tenant to sign in to (default: ask in the browser)")
    .option(
      "--profile <name>",
      "name to save the sign-in under (default: $CFGTOOL_PROFILE, else the server's host:port)",
    )
    .option(
      "--no-browser",
      "do not open a browser: print a URL and a code to confirm on any device",
    )
    .addHelpText("after", LOGIN_HELP)
    .action(
      async (opts: { server?: string; tenant?: string; profile?: string; browser: boolean }) => {
        await login(opts);
      },
    );

  program
    .command("logout")
    .description(
      "End the saved session on the service and remove it from this computer (removed even when " +
        "the service cannot be reached).",
    )
    .option(
      "--server <url>",
      "the service to sign out of (default: $CFGTOOL_SERVER, else the only profile)",
    )
    .option("--profile <name>", "the saved profile to sign out of (default: $CFGTOOL_PROFILE)")
    .addHelpText(
      "after",
      FILE_HELP +
        "\nExamples:\n  cfgtool logout\n  cfgtool logout --server https://flags.example.com\n" +
        "  cfgtool logout --profile local\n",
    )
    .action(async (opts: { server?: string; profile?: string }) => {
      await logout(opts);
    });

  withRemoteOptions(
    program
      .command("whoami")
      .description(
        "Show who the credential is on the service: for a person, the user, tenants and roles " +
          "and when the session ends; for a service token, its id, type and binding.",
      ),
  )
    .option("--json", "print the service's answer as JSON")
    .addHelpText(
      "after",
      FILE_HELP +
        "\nExamples:\n  cfgtool whoami\n  cfgtool whoami --server https://flags.example.com --json\n",
    )
    .action(async (opts) => {
      await whoami(opts);
    });
}

/** `cfgtool login`. */
async function login(
  opts: { server?: string; tenant?: string; profile?: string; browser: boolean },
): Promise<void> {
  const env = Deno.env;
  const path = credentialsPath(env);
  const before = readCredentials(path);
  const profileName = nonEmpty(opts.profile) ?? nonEmpty(env.get("CFGTOOL_PROFILE"));
  const given = nonEmpty(opts.server) ?? nonEmpty(env.get("CFGTOOL_SERVER"));
  const known = profileName === undefined
    ? pickProfile(before, {})?.[1]
    : before.profiles[profileName];
  const raw = given ?? known?.server;
  if (raw === undefined) {
    throw new UsageError("no service URL: pass --server <url> or set CFGTOOL_SERVER");
  }
  const server = checkedServer(raw);
  const host = new URL(server).hostname;
  if (server.startsWith("http:") && !isLoopbackHost(host)) {
    throw new UsageError(
      `refusing to sign in over plain http to ${host}: the session would cross the network ` +
        "unencrypted; use the server's https:// URL",
    );
  }
  const tenant = nonEmpty(opts.tenant)?.toLowerCase();
  // Anything the server sends is printed without terminal control characters.
  const say = (line: string) => noteSecret(printable(line)); // codes: past console capture
  if (tenant !== undefined && !/^[a-z0-9][a-z0-9._-]{0,62}$/.test(tenant)) {
    throw new UsageError(
      `--tenant must be a tenant slug such as acme, not ${JSON.stringify(opts.tenant)}`,
    );
  }
  // lazy: the HTTP client and the flows load only for this command
  const { SignInClient } = await import("../client/sign_in.ts");
  const client = new SignInClient({ server });
  let grant;
  if (opts.browser === false) {
    const { deviceSignIn } = await import("./device_sign_in.ts");
    grant = await deviceSignIn({ client, tenant, say });
  } else {
    const { loopbackSignIn } = await import("./loopback_sign_in.ts");
    const { openBrowser } = await import("./open_browser.ts");
    grant = await loopbackSignIn({ client, tenant, say, openUrl: (url) => openBrowser(url) });
  }
  const name = profileName ?? profileNameFor(server);
  const current = readCredentials(path); // again: another command may have changed it meanwhile
  const replaced = pickProfile(current, { server })?.[1];
  await writeCredentials(
    path,
    withProfile(current, name, {
      server,
      session_token: grant.session_token,
      session_id: grant.session.id,
      user: grant.user.email,
      user_id: grant.user.id,
      tenant: grant.tenant,
      expires_at: grant.session.expires_at,
    }),
  );
  if (replaced !== undefined && replaced.session_token !== grant.session_token) {
    // The sign-in this one replaces should not outlive it: end it, quietly.
    await client.endSession(replaced.session_token).catch(() => {});
  }
  console.log(printable(
    `Signed in to ${server} as ${grant.user.email} (tenant ${grant.tenant}); ` +
      `the session ends ${grant.session.expires_at}.`,
  ));
  console.log(`Saved as profile "${name}" in ${path}.`);
  if (nonEmpty(env.get("CFGTOOL_TOKEN")) !== undefined) {
    say(
      "note: CFGTOOL_TOKEN is set in this shell and wins over the saved sign-in; unset it to use the profile.",
    );
  }
}

/** `cfgtool logout`. */
async function logout(opts: { server?: string; profile?: string }): Promise<void> {
  const env = Deno.env;
  const path = credentialsPath(env);
  const credentials = readCredentials(path);
  const profileName = nonEmpty(opts.profile) ?? nonEmpty(env.get("CFGTOOL_PROFILE"));
  const given = nonEmpty(opts.server) ?? nonEmpty(env.get("CFGTOOL_SERVER"));
  const found = pickProfile(credentials, {
    profile: profileName,
    server: given === undefined ? undefined : checkedServer(given),
  });
  if (found === undefined) {
    const names = Object.keys(credentials.profiles);
    throw new UsageError(
      names.length === 0
        ? `not signed in: ${path} holds no saved sign-in`
        : given !== undefined
        ? `no saved sign-in for ${checkedServer(given)} (saved: ${names.join(", ")})`
        : `several sign-ins are saved (${names.join(", ")}): choose one with --profile <name>`,
    );
  }
  const [name, profile] = found;
  // lazy: the HTTP client loads only for this command
  const { SignInClient } = await import("../client/sign_in.ts");
  let outcome: string;
  try {
    await new SignInClient({ server: profile.server, timeoutMs: 10_000 }).endSession(
      profile.session_token,
    );
    outcome = `Signed out of ${profile.server} (session ${cell(profile.session_id)} ended).`;
  } catch (err) {
    if (err instanceof UnauthorizedError) {
      outcome = `Signed out of ${profile.server} (the session had already ended there).`;
    } else if (err instanceof CfgtoolError) {
      console.error(
        `warning: could not end the session on ${profile.server}: ${err.message}; it is removed ` +
          `from this computer anyway and ends by itself at ${cell(profile.expires_at)}.`,
      );
      outcome = `Signed out of ${profile.server} on this computer only.`;
    } else {
      throw err;
    }
  }
  await writeCredentials(path, withoutProfile(readCredentials(path), name));
  console.log(`${outcome} Removed profile "${name}" from ${path}.`);
}

/** `cfgtool whoami`. */
async function whoami(
  opts: {
    server?: string | undefined;
    token?: string | undefined;
    profile?: string | undefined;
    json?: boolean | undefined;
  },
): Promise<void> {
  const remote = resolveRemote(opts);
  const credential = remote.profile !== undefined
    ? `profile ${remote.profile}`
    : nonEmpty(opts.token) !== undefined
    ? "--token"
    : "$CFGTOOL_TOKEN";
  // lazy: the HTTP client loads only for commands that talk to a service
  const { SignInClient } = await import("../client/sign_in.ts");
  const me = await new SignInClient({ server: remote.server }).whoAmI(remote.token);
  if (opts.json === true) {
    printJson({ server: remote.server, credential, ...me });
    return;
  }
  const p = me.principal;
  if (p.type === "user") {
    const user = p.user;
    printFields([
      ["user", user?.email === undefined ? user?.id : `${user.email} (${user.id})`],
      ["tenants", (p.tenants ?? []).map((t) => `${t.slug} (${t.role})`)],
      [
        "session",
        p.session === undefined
          ? null
          : `${p.session.id}${
            p.session.client === undefined
              ? ""
              : ` (${p.session.client}, ${p.session.login_method ?? "?"})`
          }`,
      ],
      ["expires", p.session?.expires_at ?? null],
      ["server", remote.server],
      ["credential", credential],
    ]);
    return;
  }
  const t = p.token;
  printFields([
    ["token", t === undefined ? null : `${t.id}${t.name === undefined ? "" : ` (${t.name})`}`],
    ["type", t?.type ?? p.type],
    ["tenant", t?.tenant_slug ?? null],
    ["namespace", t?.namespace_slug ?? null],
    ["environment", t?.environment_slug ?? null],
    ["expires", t?.expires_at ?? "never"],
    ["server", remote.server],
    ["credential", credential],
  ]);
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v === undefined || v === "" ? undefined : v;
}
