/**
 * The `--server`, `--token` and `--profile` options shared by every command
 * that talks to a cfgtool service, with their environment defaults
 * `CFGTOOL_SERVER`, `CFGTOOL_TOKEN` and `CFGTOOL_PROFILE`, and the fallback
 * to the sign-in `cfgtool login` saved (lib/cli/credentials_file.ts). The
 * token is never printed: not in help (which names the variable, not its
 * value), not in errors.
 *
 * @module
 */
import { trimTrailing } from "../ascii.ts";
import type { Command, OptionValues } from "commander";
import { UsageError } from "../errors.ts";
import type { ServiceClient } from "../client/api.ts";
import {
  type Credentials,
  credentialsPath,
  pickProfile,
  readCredentials,
} from "./credentials_file.ts";

/** The raw option values as commander parses them. */
export interface RemoteOptionValues {
  server?: string | undefined;
  token?: string | undefined;
  profile?: string | undefined;
}

/** Where to send requests and with which credential. */
export interface Remote {
  /** Base URL of the service, without a trailing slash. */
  server: string;
  /** Bearer credential (session or service token). */
  token: string;
  /** The saved profile the token came from, when it came from one. */
  profile?: string;
}

/**
 * Adds `--server <url>`, `--token <token>` and `--profile <name>` to a
 * command. None has a commander default, so help never shows the token;
 * the environment and the saved profiles are read by
 * {@linkcode resolveRemote} when the action runs.
 *
 * @param cmd the command
 * @returns the same command, typed with the two options
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { withRemoteOptions } from "./remote_options.ts";
 * const cmd = withRemoteOptions(new Command("x"));
 * if (!cmd.options.some((o) => o.long === "--token")) throw new Error();
 * ```
 */
export function withRemoteOptions<
  A extends unknown[],
  O extends OptionValues,
  G extends OptionValues,
>(cmd: Command<A, O, G>): Command<A, O & RemoteOptionValues, G> {
  return cmd
    .option(
      "--server <url>",
      "URL of the cfgtool service (default: $CFGTOOL_SERVER, else the server of the saved profile)",
    )
    .option(
      "--token <token>",
      "bearer credential (default: $CFGTOOL_TOKEN, else the session `cfgtool login` saved for " +
        "the server; prefer the variable, command lines are visible to other users of the host)",
    )
    .option(
      "--profile <name>",
      "saved sign-in to use (default: $CFGTOOL_PROFILE, else the one for --server, else the " +
        "only one)",
    ) as unknown as Command<A, O & RemoteOptionValues, G>;
}

/**
 * Resolves `--server` / `--token` against `CFGTOOL_SERVER` / `CFGTOOL_TOKEN`
 * and the saved profiles. The token is `--token`, else `CFGTOOL_TOKEN`,
 * else the session of the profile for the server; the server is
 * `--server`, else `CFGTOOL_SERVER`, else the server of the profile
 * `--profile` / `CFGTOOL_PROFILE` names, or of the only saved profile. A
 * missing or empty value, or a server that is not an `http(s)://` URL, is
 * a {@linkcode UsageError} (exit 2) whose message never contains the token.
 * The credentials file is read (synchronously) only when a value is missing.
 *
 * @param opts the parsed options
 * @param env where to read the defaults (default: the process environment)
 * @returns the server URL (trailing `/` removed), the token, and the profile it came from
 *
 * @example
 * ```ts
 * import { resolveRemote } from "./remote_options.ts";
 * const r = resolveRemote({ server: "http://127.0.0.1:8080/", token: "svc_x" }, { get: () => undefined });
 * if (r.server !== "http://127.0.0.1:8080") throw new Error(r.server);
 * ```
 */
export function resolveRemote(
  opts: RemoteOptionValues,
  env: { get(name: string): string | undefined } = Deno.env,
): Remote {
  const given = nonEmpty(opts.server) ?? nonEmpty(env.get("CFGTOOL_SERVER"));
  const token = nonEmpty(opts.token) ?? nonEmpty(env.get("CFGTOOL_TOKEN"));
  const profileName = nonEmpty(opts.profile) ?? nonEmpty(env.get("CFGTOOL_PROFILE"));
  const credentials = given !== undefined && token !== undefined
    ? undefined
    : savedCredentials(env);
  const saved = credentials === undefined ? undefined : pickProfile(credentials, {
    profile: profileName,
    server: given === undefined ? undefined : checkedServer(given),
  });
  const server = given ?? saved?.[1].server;
  if (server === undefined) {
    const several = Object.keys(credentials?.profiles ?? {}).length > 1;
    throw new UsageError(
      "no service URL: pass --server <url> or set CFGTOOL_SERVER, or sign in with " +
        "`cfgtool login --server <url>`" +
        (several ? " (several sign-ins are saved: choose one with --profile <name>)" : ""),
    );
  }
  const url = checkedServer(server);
  if (token !== undefined) return { server: url, token };
  if (saved === undefined) {
    throw new UsageError(
      `no credential for ${url}: pass --token <token> or set CFGTOOL_TOKEN, or sign in with ` +
        `\`cfgtool login --server ${url}\``,
    );
  }
  const [name, profile] = saved;
  const ends = Date.parse(profile.expires_at);
  if (Number.isFinite(ends) && ends <= Date.now()) {
    throw new UsageError(
      `the session saved in profile ${JSON.stringify(name)} ended at ${profile.expires_at}: ` +
        `sign in again with \`cfgtool login --server ${url}\``,
    );
  }
  return { server: url, token: profile.session_token, profile: name };
}

/**
 * Checks a service URL: `http(s)://`, no credentials in it. Returns it
 * without a trailing `/`; a {@linkcode UsageError} otherwise.
 *
 * @param server the URL given
 * @returns the URL without a trailing slash
 *
 * @example
 * ```ts
 * import { checkedServer } from "./remote_options.ts";
 * if (checkedServer("http://127.0.0.1:8080/") !== "http://127.0.0.1:8080") throw new Error();
 * ```
 */
export function checkedServer(server: string): string {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new UsageError(`--server must be an http(s) URL, not ${JSON.stringify(server)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UsageError(`--server must be an http(s) URL, not ${JSON.stringify(server)}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new UsageError("--server must not carry credentials; use --token or CFGTOOL_TOKEN");
  }
  return trimTrailing(server, "/");
}

/**
 * Resolves the remote options and opens a {@linkcode ServiceClient} (the
 * client module is loaded on demand, keeping start-up fast).
 *
 * @param opts the parsed options
 * @returns a client for the service
 *
 * @example
 * ```ts
 * import { openClient } from "./remote_options.ts";
 * const client = await openClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * if (client.server !== "http://127.0.0.1:1") throw new Error();
 * ```
 */
export async function openClient(opts: RemoteOptionValues): Promise<ServiceClient> {
  const remote = resolveRemote(opts);
  // lazy: the HTTP client loads only for commands that talk to a service
  const { ServiceClient } = await import("../client/api.ts");
  return new ServiceClient(remote);
}

/** The saved profiles; none when there is no home directory to keep them in. */
function savedCredentials(env: { get(name: string): string | undefined }): Credentials {
  let path: string;
  try {
    path = credentialsPath(env);
  } catch {
    return { profiles: {} };
  }
  return readCredentials(path);
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v === undefined || v === "" ? undefined : v;
}

/**
 * Prints a value as indented JSON on stdout (the `--json` output of every
 * remote command).
 *
 * @param value anything JSON can encode
 *
 * @example
 * ```ts
 * import { printJson } from "./remote_options.ts";
 * const printed: string[] = [];
 * const log = console.log;
 * console.log = (text: string) => void printed.push(text);
 * try {
 *   printJson({ ok: true });
 * } finally {
 *   console.log = log;
 * }
 * if (printed[0] !== '{\n  "ok": true\n}') throw new Error(printed[0]);
 * ```
 */
export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

/**
 * Prints rows as a left-aligned table with a header line; an empty list
 * prints `(none)` instead.
 *
 * @param headers column titles
 * @param rows one array of cells per row
 *
 * @example
 * ```ts
 * import { printTable } from "./remote_options.ts";
 * const printed: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => void printed.push(line);
 * try {
 *   printTable(["SLUG", "CREATED"], [["acme", "2030-01-01T00:00:00Z"], ["bo", "-"]]);
 *   printTable(["SLUG"], []);
 * } finally {
 *   console.log = log;
 * }
 * const expected = ["SLUG  CREATED", "acme  2030-01-01T00:00:00Z", "bo    -", "(none)"];
 * if (printed.join("|") !== expected.join("|")) throw new Error(printed.join("|"));
 * ```
 */
export function printTable(headers: string[], rows: string[][]): void {
  if (rows.length === 0) {
    console.log("(none)");
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => i === cells.length - 1 ? c : c.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(line(headers));
  for (const r of rows) console.log(line(r));
}

/**
 * Prints `label: value` lines with the values aligned; null and undefined
 * show as `-`, arrays as comma-separated lists.
 *
 * @param fields label and value pairs, in order
 *
 * @example
 * ```ts
 * import { printFields } from "./remote_options.ts";
 * const printed: string[] = [];
 * const log = console.log;
 * console.log = (line: string) => void printed.push(line);
 * try {
 *   printFields([["slug", "acme"], ["description", null], ["origins", ["a", "b"]]]);
 * } finally {
 *   console.log = log;
 * }
 * const expected = ["slug:        acme", "description: -", "origins:     a,b"];
 * if (printed.join("|") !== expected.join("|")) throw new Error(printed.join("|"));
 * ```
 */
export function printFields(fields: [string, unknown][]): void {
  const width = Math.max(0, ...fields.map(([k]) => k.length)) + 1;
  for (const [k, v] of fields) console.log(`${`${k}:`.padEnd(width)} ${cell(v)}`);
}

/**
 * Formats one value for a table cell or field: `-` for null, undefined and
 * empty strings or arrays; arrays comma-separated; objects as JSON.
 *
 * @param v the value
 * @returns the text
 *
 * @example
 * ```ts
 * import { cell } from "./remote_options.ts";
 * if (cell(null) !== "-" || cell(["a", "b"]) !== "a,b") throw new Error();
 * ```
 */
export function cell(v: unknown): string {
  if (v === null || v === undefined || v === "") return "-";
  if (Array.isArray(v)) return v.length === 0 ? "-" : v.map(String).join(",");
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/**
 * Parses a whole-number option (`--version 3`, `--limit 20`); anything else
 * is a {@linkcode UsageError} naming the option.
 *
 * @param text the option value
 * @param option the option name for the message
 * @param min the smallest accepted value (default 0)
 * @returns the number
 *
 * @example
 * ```ts
 * import { parseWholeNumber } from "./remote_options.ts";
 * if (parseWholeNumber("3", "--version") !== 3) throw new Error();
 * ```
 */
export function parseWholeNumber(text: string, option: string, min = 0): number {
  const n = /^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new UsageError(
      `${option} must be a whole number${min > 0 ? ` ≥ ${min}` : ""}, not ${JSON.stringify(text)}`,
    );
  }
  return n;
}
