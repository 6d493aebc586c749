/**
 * The saved sign-ins of `cfgtool login`: `credentials.toml` under
 * `$XDG_CONFIG_HOME/cfgtool/` (default `~/.config/cfgtool/`; on Windows
 * `%APPDATA%\cfgtool\`), one `[profiles.<name>]` table per server with
 * `server`, `session_token`, `session_id`, `user`, `user_id`, `tenant` and
 * `expires_at`. A profile is named after the server's `host[:port]` unless
 * `--profile` names it. The file is written atomically (a temporary file
 * renamed over it) with mode 0600 in a 0700 directory; it is read
 * synchronously, so resolving a command's credential stays synchronous.
 * Nothing here prints a token.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import { parse, stringify } from "toml";
import { UsageError } from "../errors.ts";

/** One saved sign-in. */
export interface Profile {
  /** Base URL of the service, without a trailing slash. */
  server: string;
  /** The bearer session `ses_…`. */
  session_token: string;
  /** The session's id (`ssn_…`), for `cfgtool logout` and session lists. */
  session_id: string;
  /** The signed-in person's email. */
  user: string;
  /** Their user id (`usr_…`). */
  user_id: string;
  /** The tenant the session was admitted to. */
  tenant: string;
  /** The session's absolute end (RFC 3339). */
  expires_at: string;
}

/** The whole file: profiles by name. */
export interface Credentials {
  profiles: Record<string, Profile>;
}

/** Where to read environment variables from. */
export interface Env {
  get(name: string): string | undefined;
}

const HEADER =
  "# cfgtool sign-ins (`cfgtool login`). These are secrets: keep this file private.\n" +
  "# CFGTOOL_TOKEN, when set, wins over any profile here.\n\n";

/**
 * The path of the credentials file: `$XDG_CONFIG_HOME/cfgtool/credentials.toml`,
 * else `$HOME/.config/cfgtool/credentials.toml` (`%APPDATA%\cfgtool\…` on
 * Windows). A {@linkcode UsageError} when none of those is set.
 *
 * @param env where to read the variables
 * @returns the file's path
 *
 * @example
 * ```ts
 * import { credentialsPath } from "./credentials_file.ts";
 * const env = new Map([["XDG_CONFIG_HOME", "/tmp/cfg"], ["HOME", "/home/ana"]]);
 * if (credentialsPath(env) !== "/tmp/cfg/cfgtool/credentials.toml") throw new Error();
 * if (credentialsPath(new Map([["HOME", "/home/ana"]])) !== "/home/ana/.config/cfgtool/credentials.toml") {
 *   throw new Error();
 * }
 * ```
 */
export function credentialsPath(env: Env = Deno.env): string {
  const xdg = env.get("XDG_CONFIG_HOME")?.trim();
  if (xdg) return `${trimTrailing(xdg, "/")}/cfgtool/credentials.toml`;
  if (Deno.build.os === "windows") {
    const appData = env.get("APPDATA")?.trim();
    if (appData) return `${appData}\\cfgtool\\credentials.toml`;
  }
  const home = env.get("HOME")?.trim() || env.get("USERPROFILE")?.trim();
  if (home) return `${trimTrailing(home, "/")}/.config/cfgtool/credentials.toml`;
  throw new UsageError(
    "cannot find where to keep sign-ins: set XDG_CONFIG_HOME or HOME",
  );
}

/**
 * The profile name of a server by default: its `host[:port]`
 * (`127.0.0.1:8080`, `flags.example.com`).
 *
 * @param server the service URL
 * @returns the name
 *
 * @example
 * ```ts
 * import { profileNameFor } from "./credentials_file.ts";
 * if (profileNameFor("http://127.0.0.1:8080/") !== "127.0.0.1:8080") throw new Error();
 * if (profileNameFor("https://Flags.Example.com") !== "flags.example.com") throw new Error();
 * ```
 */
export function profileNameFor(server: string): string {
  return new URL(server).host;
}

/**
 * A server URL in the form profiles are compared by: origin and path,
 * without a trailing slash.
 *
 * @param server the URL
 * @returns the normalised URL (the input when it does not parse)
 *
 * @example
 * ```ts
 * import { sameServer } from "./credentials_file.ts";
 * if (sameServer("HTTP://127.0.0.1:8080/") !== "http://127.0.0.1:8080") throw new Error();
 * ```
 */
export function sameServer(server: string): string {
  try {
    const url = new URL(server);
    return url.origin + trimTrailing(url.pathname, "/");
  } catch {
    return trimTrailing(server, "/");
  }
}

/**
 * Reads the credentials file (synchronously). A missing file has no
 * profiles; a file that is not TOML, or a profile without its fields, is a
 * {@linkcode UsageError} naming the file (never its contents).
 *
 * @param path the file
 * @returns the profiles
 *
 * @example
 * ```ts
 * import { readCredentials } from "./credentials_file.ts";
 * const none = readCredentials("/nonexistent/cfgtool/credentials.toml");
 * if (Object.keys(none.profiles).length !== 0) throw new Error();
 * ```
 */
export function readCredentials(path: string): Credentials {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return { profiles: {} };
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  let table: Record<string, unknown>;
  try {
    table = parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(
      `${path} is not valid TOML; fix it or remove it and run \`cfgtool login\` again`,
      { cause: err },
    );
  }
  const profiles: Record<string, Profile> = {};
  const raw = table.profiles;
  if (raw !== undefined && (typeof raw !== "object" || raw === null || Array.isArray(raw))) {
    throw new UsageError(`${path}: [profiles] must be a table of profiles`);
  }
  for (const [name, value] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
    const p = value as Record<string, unknown>;
    const field = (key: keyof Profile, required: boolean): string => {
      const v = p?.[key];
      if (typeof v === "string") return v;
      if (!required && v === undefined) return "";
      throw new UsageError(
        `${path}: profile ${JSON.stringify(name)} has no ${key}; remove it with ` +
          `\`cfgtool logout --profile ${name}\` and sign in again`,
      );
    };
    profiles[name] = {
      server: field("server", true),
      session_token: field("session_token", true),
      session_id: field("session_id", false),
      user: field("user", false),
      user_id: field("user_id", false),
      tenant: field("tenant", false),
      expires_at: field("expires_at", false),
    };
  }
  return { profiles };
}

/**
 * Writes the credentials file atomically: a new file with mode 0600 in the
 * same directory (made with mode 0700 when missing, and set to 0700), then
 * renamed over the old one. With no profiles left, the file is removed.
 *
 * @param path the file
 * @param credentials the profiles
 * @returns nothing
 *
 * @example
 * ```ts
 * import { readCredentials, writeCredentials } from "./credentials_file.ts";
 * const dir = await Deno.makeTempDir();
 * const path = `${dir}/cfgtool/credentials.toml`;
 * await writeCredentials(path, { profiles: { a: { server: "http://127.0.0.1:1", session_token: "ses_x",
 *   session_id: "ssn_1", user: "ana@acme.test", user_id: "usr_1", tenant: "acme",
 *   expires_at: "2030-01-01T00:00:00.000Z" } } });
 * if (readCredentials(path).profiles.a?.tenant !== "acme") throw new Error();
 * if (Deno.build.os !== "windows" && ((await Deno.stat(path)).mode! & 0o777) !== 0o600) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function writeCredentials(path: string, credentials: Credentials): Promise<void> {
  const dir = path.replace(/[\\/][^\\/]*$/, "");
  if (Object.keys(credentials.profiles).length === 0) {
    await Deno.remove(path).catch((err) => {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    });
    return;
  }
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  if (Deno.build.os !== "windows") await Deno.chmod(dir, 0o700);
  const text = HEADER + stringify({ profiles: credentials.profiles });
  const tmp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(tmp, text, { mode: 0o600, createNew: true });
    if (Deno.build.os !== "windows") await Deno.chmod(tmp, 0o600);
    await Deno.rename(tmp, path);
  } catch (err) {
    await Deno.remove(tmp).catch(() => {});
    throw err;
  }
}

/**
 * The profile a command uses: the one named (`--profile`,
 * `CFGTOOL_PROFILE`; a {@linkcode UsageError} when there is none by that
 * name, or it is for another server than `server`); else the one for
 * `server`; else, with no server given, the only profile. Undefined when
 * none applies.
 *
 * @param credentials the saved profiles
 * @param want the profile name and server asked for, if any
 * @returns the profile's name and record, or undefined
 *
 * @example
 * ```ts
 * import { pickProfile, type Profile } from "./credentials_file.ts";
 * const p = (server: string) => ({ server, session_token: "ses_x" }) as Profile;
 * const one = { profiles: { a: p("http://127.0.0.1:1") } };
 * if (pickProfile(one, {})?.[0] !== "a") throw new Error("the only profile");
 * const two = { profiles: { a: p("http://127.0.0.1:1"), b: p("http://127.0.0.1:2") } };
 * if (pickProfile(two, {}) !== undefined) throw new Error("ambiguous");
 * if (pickProfile(two, { server: "http://127.0.0.1:2/" })?.[0] !== "b") throw new Error("by server");
 * if (pickProfile(two, { profile: "a" })?.[1].server !== "http://127.0.0.1:1") throw new Error("by name");
 * ```
 */
export function pickProfile(
  credentials: Credentials,
  want: { profile?: string | undefined; server?: string | undefined },
): [string, Profile] | undefined {
  const entries = Object.entries(credentials.profiles);
  if (want.profile !== undefined) {
    const found = credentials.profiles[want.profile];
    if (found === undefined) {
      const names = entries.map(([n]) => n);
      throw new UsageError(
        `no saved profile ${JSON.stringify(want.profile)}` +
          (names.length === 0 ? "; sign in with `cfgtool login`" : ` (saved: ${names.join(", ")})`),
      );
    }
    if (want.server !== undefined && sameServer(found.server) !== sameServer(want.server)) {
      throw new UsageError(
        `profile ${JSON.stringify(want.profile)} is for ${found.server}, not ${want.server}`,
      );
    }
    return [want.profile, found];
  }
  if (want.server !== undefined) {
    const server = sameServer(want.server);
    return entries.find(([, p]) => sameServer(p.server) === server);
  }
  return entries.length === 1 ? entries[0] : undefined;
}

/**
 * The file with a profile saved under `name`, replacing any other profile
 * for the same server (one profile per server).
 *
 * @param credentials the profiles
 * @param name the profile name
 * @param profile the sign-in
 * @returns the new profiles
 *
 * @example
 * ```ts
 * import { withProfile, type Profile } from "./credentials_file.ts";
 * const p = { server: "http://127.0.0.1:1", session_token: "ses_x" } as Profile;
 * const next = withProfile({ profiles: { old: p } }, "new", p);
 * if (Object.keys(next.profiles).join() !== "new") throw new Error();
 * ```
 */
export function withProfile(credentials: Credentials, name: string, profile: Profile): Credentials {
  const server = sameServer(profile.server);
  const profiles: Record<string, Profile> = {};
  for (const [n, p] of Object.entries(credentials.profiles)) {
    if (n !== name && sameServer(p.server) !== server) profiles[n] = p;
  }
  profiles[name] = profile;
  return { profiles };
}

/**
 * The file without the profile `name`.
 *
 * @param credentials the profiles
 * @param name the profile to drop
 * @returns the remaining profiles
 *
 * @example
 * ```ts
 * import { withoutProfile, type Profile } from "./credentials_file.ts";
 * const p = { server: "http://127.0.0.1:1" } as Profile;
 * if ("a" in withoutProfile({ profiles: { a: p } }, "a").profiles) throw new Error();
 * ```
 */
export function withoutProfile(credentials: Credentials, name: string): Credentials {
  const profiles = { ...credentials.profiles };
  delete profiles[name];
  return { profiles };
}
