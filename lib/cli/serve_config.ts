/**
 * `cfgtool serve --config <file>`: a TOML file whose keys are the long names
 * of `serve`'s own flags without their leading `--` (`port = 8080`,
 * `kv = "/var/lib/cfgtool/kv.sqlite3"`, `head-poll-ms = 250`). The keys are
 * read from the command's option list, so a flag added to `serve` is a key
 * at once. A value from the file counts only where the flag was not given
 * and its environment variable (`CFGTOOL_KV`, …) is not set: flags win
 * over the environment, the environment over the file, the file over the
 * defaults (commander's own ranking of value sources: `cli` > `env` >
 * `config` > `default`).
 *
 * Values: a flag that takes a number (`<n>`, `<port>` in its help) takes a
 * TOML integer, or a string exactly as on the command line (`workers =
 * "auto"`); any other flag with a value takes a string; a flag without a
 * value would take a boolean. Each value then goes through the same checks
 * as the flag's. Every mistake in the file (syntax, an unknown key, with
 * the nearest known one, a value of the wrong type) is a
 * {@linkcode ConfigFileError} naming the file, its line and the key.
 *
 * @module
 */
import { type Problem, UsageError } from "../errors.ts";
import { formatProblem } from "../errors.ts";
import { didYouMean } from "../suggest.ts";
import { parseToml, type TomlTable } from "../toml.ts";
import { describe } from "../toml_fields.ts";
import { readFailure } from "../file_failure.ts";

/** What a key's value must be. */
export type ConfigValueKind = "integer" | "string" | "boolean";

/** One key of the file: a flag of the command. */
export interface ConfigKey {
  /** The key, the flag's long name without `--` (`head-poll-ms`). */
  key: string;
  /** commander's attribute name for the flag's value (`headPollMs`). */
  attribute: string;
  /** What its value must be. */
  kind: ConfigValueKind;
}

/** The parts of a commander option this module reads. */
export interface OptionLike {
  /** `--head-poll-ms <n>` */
  readonly flags: string;
  /** `--head-poll-ms` */
  readonly long?: string | undefined;
  /** Takes a required value. */
  readonly required: boolean;
  /** Takes an optional value. */
  readonly optional: boolean;
  /** Left out of the help (and so of the file). */
  readonly hidden: boolean;
  /** The value's property name. */
  attributeName(): string;
}

/** The parts of a commander command this module reads and sets. */
export interface ConfigurableCommand {
  /** Its options. */
  readonly options: readonly OptionLike[];
  /** Where an option's value came from: `default`, `env`, `config`, `cli`, or undefined. */
  getOptionValueSource(key: string): string | undefined;
  /** Sets an option's value, recording where it came from. */
  setOptionValueWithSource(key: string, value: unknown, source: "config"): unknown;
  /** The command's name (`serve`, `relay`), named in the unknown-key hint; default `serve`. */
  name?(): string;
}

/** Flags that are never keys of the file. */
const NOT_KEYS = new Set(["--config", "--help", "--version"]);

/** Value placeholders (`--port <port>`) that mean a number. */
const NUMBER_PLACEHOLDERS = new Set(["n", "port", "ms", "bytes", "count"]);

/**
 * A configuration file that cannot be used: unreadable, not TOML, or with
 * unknown keys or values of the wrong type. A usage error (the CLI exits
 * 2, as for a bad flag); the message has one line per problem, each
 * `<file>[:<line>:<col>]: <problem>`.
 *
 * @example
 * ```ts
 * import { ConfigFileError } from "./serve_config.ts";
 * const err = new ConfigFileError("cfgtool.toml", [
 *   { path: "cfgtool.toml", line: 2, column: 1, message: 'unknown key "prot"' },
 * ]);
 * if (err.message !== 'cfgtool.toml:2:1: unknown key "prot"' || err.problems.length !== 1) {
 *   throw new Error(err.message);
 * }
 * ```
 */
export class ConfigFileError extends UsageError {
  /** The file. */
  readonly path: string;
  /** Every problem found in it. */
  readonly problems: readonly Problem[];

  /**
   * Creates the error.
   *
   * @param path the configuration file
   * @param problems what is wrong with it (at least one)
   * @param cause the underlying error, if any
   */
  constructor(path: string, problems: readonly Problem[], cause?: unknown) {
    super(problems.map(formatProblem).join("\n"), cause === undefined ? {} : { cause });
    this.name = "ConfigFileError";
    this.path = path;
    this.problems = problems;
  }
}

/**
 * The keys a command's configuration file may set: one per visible option
 * with a long name, bar `--config` and `--help`, with the kind of value it
 * takes (see the module documentation).
 *
 * @param options the command's options (`command.options`)
 * @returns the keys, in the options' order
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { configKeys } from "./serve_config.ts";
 * const cmd = new Command("serve")
 *   .option("--port <port>", "port")
 *   .option("--kv <location>", "store")
 *   .option("--config <file>", "the file itself");
 * const keys = configKeys(cmd.options);
 * if (JSON.stringify(keys.map((k) => [k.key, k.attribute, k.kind])) !==
 *   '[["port","port","integer"],["kv","kv","string"]]') throw new Error(JSON.stringify(keys));
 * ```
 */
export function configKeys(options: readonly OptionLike[]): ConfigKey[] {
  const keys: ConfigKey[] = [];
  for (const option of options) {
    if (option.hidden || option.long === undefined || NOT_KEYS.has(option.long)) continue;
    keys.push({
      key: option.long.slice(2),
      attribute: option.attributeName(),
      kind: kindOf(option),
    });
  }
  return keys;
}

function kindOf(option: OptionLike): ConfigValueKind {
  if (!option.required && !option.optional) return "boolean";
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1];
  return placeholder !== undefined && NUMBER_PLACEHOLDERS.has(placeholder) ? "integer" : "string";
}

/**
 * Checks a parsed file against `keys` and returns each key's value as the
 * flag would get it (integers as decimal strings, strings as they are,
 * booleans as booleans), by attribute name; or throws every problem found.
 *
 * @param table the parsed file
 * @param keys the keys it may set ({@linkcode configKeys})
 * @param path the file, as problems name it
 * @param text the file's text, to find each problem's line
 * @returns attribute → value
 * @throws {ConfigFileError} for unknown keys and values of the wrong type
 *
 * @example
 * ```ts
 * import { configValues } from "./serve_config.ts";
 * const keys = [{ key: "port", attribute: "port", kind: "integer" as const }];
 * const values = configValues({ port: 9090 }, keys, "cfgtool.toml", "port = 9090\n");
 * if (values.get("port") !== "9090") throw new Error();
 * try {
 *   configValues({ prt: 9090 }, keys, "cfgtool.toml", "prt = 9090\n");
 *   throw new Error("accepted an unknown key");
 * } catch (err) {
 *   if (!String(err).includes('cfgtool.toml:1:1: unknown key "prt"; did you mean "port"?')) throw err;
 * }
 * ```
 */
export function configValues(
  table: TomlTable,
  keys: readonly ConfigKey[],
  path: string,
  text: string,
  command = "serve",
): Map<string, string | boolean> {
  const byKey = new Map(keys.map((k) => [k.key, k]));
  const values = new Map<string, string | boolean>();
  const problems: Problem[] = [];
  const report = (key: string, message: string) => {
    const line = lineOf(text, key);
    problems.push(line === undefined ? { path, message } : { path, line, column: 1, message });
  };
  for (const [name, value] of Object.entries(table)) {
    const key = byKey.get(name);
    if (key === undefined) {
      report(
        name,
        name === "config"
          ? 'unknown key "config": a configuration file cannot name another one'
          : `unknown key ${JSON.stringify(name)}${unknownKeyHint(name, byKey.keys(), command)}`,
      );
      continue;
    }
    const converted = convert(value, key.kind);
    if (converted === undefined) {
      // a secret's value is never echoed, not even a mistyped one
      const found = SECRET_KEYS.has(name)
        ? `${article(tomlType(value))} (value not shown)`
        : describe(value);
      report(name, `${name}: expected ${expected(key.kind)}, found ${found}`);
      continue;
    }
    values.set(key.attribute, converted);
  }
  if (problems.length > 0) throw new ConfigFileError(path, problems);
  return values;
}

/** Keys whose values are secrets: no problem report quotes them (`token`: the relay's own). */
export const SECRET_KEYS: ReadonlySet<string> = new Set(["metrics-token", "smtp-url", "token"]);

function article(word: string): string {
  return /^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`;
}

/** `integer`, `string`, `boolean`, …: what a value is, without the value. */
function tomlType(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "float";
  if (Array.isArray(value)) return "array";
  if (value instanceof Date) return "date";
  return typeof value === "object" && value !== null ? "table" : typeof value;
}

/**
 * The TOML parser's problem, or, when its line sets a secret key (whose
 * value the parser's message may quote), the same position with a
 * generic reason.
 */
function redactedSyntaxProblem(problem: Problem, text: string): Problem {
  if (problem.line === undefined) return problem;
  const line = text.split(/\r?\n/)[problem.line - 1] ?? "";
  const key = [...SECRET_KEYS].find((k) =>
    new RegExp(`^\\s*(?:${k}|"${k}"|'${k}')\\s*=`).test(line)
  );
  if (key === undefined) return problem;
  return {
    ...problem,
    message: `invalid TOML in the value of ${key} (not shown: it is a secret); ` +
      "quote a string value",
  };
}

function unknownKeyHint(name: string, known: Iterable<string>, command: string): string {
  const hint = didYouMean(name, known);
  return hint !== ""
    ? hint
    : ` (the keys are the flags of \`cfgtool ${command} --help\`, without --)`;
}

function convert(value: unknown, kind: ConfigValueKind): string | boolean | undefined {
  switch (kind) {
    case "boolean":
      return typeof value === "boolean" ? value : undefined;
    case "integer":
      if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
      return typeof value === "string" ? value : undefined;
    case "string":
      return typeof value === "string" ? value : undefined;
  }
}

function expected(kind: ConfigValueKind): string {
  switch (kind) {
    case "boolean":
      return "true or false";
    case "integer":
      return "an integer (or a string, as on the command line)";
    case "string":
      return "a string";
  }
}

/** The 1-based line where `key` is set (`key = …`) or opened as a table (`[key]`), if found. */
function lineOf(text: string, key: string): number | undefined {
  const k = key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const at = new RegExp(`^\\s*(?:(?:${k}|"${k}"|'${k}')\\s*[=.]|\\[{1,2}\\s*${k}\\s*[\\].])`);
  const index = text.split(/\r?\n/).findIndex((line) => at.test(line));
  return index < 0 ? undefined : index + 1;
}

/**
 * Reads `path` and sets the value of every key it holds on `command`,
 * with source `config`, unless the flag was given on the command line or
 * by its environment variable. Returns the keys it read (all of them,
 * whether they won or not).
 *
 * @param command the command whose options the file sets
 * @param path the configuration file
 * @returns the keys the file sets, in its order
 * @throws {ConfigFileError} when the file cannot be read, is not TOML, or
 *   has an unknown key or a value of the wrong type
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { applyConfigFile } from "./serve_config.ts";
 * const file = await Deno.makeTempFile({ suffix: ".toml" });
 * await Deno.writeTextFile(file, 'port = 9090\nhostname = "0.0.0.0"\n');
 * const cmd = new Command("serve")
 *   .option("--port <port>", "port", "8080")
 *   .option("--hostname <host>", "address", "127.0.0.1")
 *   .action(() => {});
 * cmd.parse(["--hostname", "::1"], { from: "user" });
 * const keys = await applyConfigFile(cmd, file);
 * const opts = cmd.opts();
 * if (opts.port !== "9090" || opts.hostname !== "::1" || keys.length !== 2) {
 *   throw new Error(JSON.stringify(opts));
 * }
 * await Deno.remove(file);
 * ```
 */
export async function applyConfigFile(
  command: ConfigurableCommand,
  path: string,
): Promise<string[]> {
  const text = await readConfigText(path);
  const parsed = parseToml(text, path);
  if (!parsed.ok) throw new ConfigFileError(path, [redactedSyntaxProblem(parsed.problem, text)]);
  const keys = configKeys(command.options);
  const values = configValues(parsed.table, keys, path, text, command.name?.() ?? "serve");
  for (const [attribute, value] of values) {
    const source = command.getOptionValueSource(attribute);
    if (source === undefined || source === "default" || source === "config") {
      command.setOptionValueWithSource(attribute, value, "config");
    }
  }
  return Object.keys(parsed.table);
}

async function readConfigText(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    const why = readFailure(err);
    throw new ConfigFileError(path, [{
      path,
      message: `cannot read the configuration file: ${why}`,
    }], err);
  }
}
