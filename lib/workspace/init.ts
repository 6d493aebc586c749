/**
 * `cfgtool init`: writes the starting files of a workspace.
 *
 * - `catalog`: `catalogs/<name>.toml`, an entry schema skeleton
 *   `schemas/<name>.schema.json` and an entry `catalogs/<name>-entries/default.toml`
 *   that satisfies it.
 * - `variable`: `variables/<name>.toml` of type `catalog:<catalog>`, where
 *   the catalog is `type` when given, else the catalog created in the same
 *   call, else the catalog of the same name. Its `default` is the catalog's
 *   `default` entry (or its first entry when it has no `default`).
 * - `context`: (re)generates `schemas/context.schema.json` from the
 *   qualifiers. It is the only file init rewrites, since it is generated.
 *
 * Variable and catalog files are never overwritten: if any file to create
 * exists, nothing is written. When the context contract does not exist yet,
 * a catalog or variable init writes it too, so that a new workspace lints
 * clean. The workspace directory is created when needed (except for a
 * `context`-only init, which has nothing to read).
 *
 * @module
 */
import { CfgtoolError, ProblemsError, UsageError } from "../errors.ts";
import { renderJson } from "./context_contract.ts";
import { readWorkspaceFiles, type WorkspaceFiles } from "./files.ts";
import { entriesDir } from "./layout.ts";
import { analyzeFiles } from "./lint.ts";
import { CONTEXT_CONTRACT_PATH, NAME_RE, type WorkspaceModel } from "./model.ts";
import { DRAFT_2020_12 } from "./schemas.ts";

/** What to create. At least one of `variable`, `catalog`, `context`. */
export interface InitOptions {
  /** Variable name: creates `variables/<name>.toml`. */
  variable?: string;
  /** The variable's type, `catalog:<catalog_name>` (only with `variable`). */
  type?: string;
  /** Catalog name: creates the catalog, its entry schema and a `default` entry. */
  catalog?: string;
  /** Regenerates `schemas/context.schema.json`. */
  context?: boolean;
}

/** What {@linkcode initWorkspace} did, paths relative to the workspace. */
export interface InitResult {
  /** Files created, or rewritten (the context contract), in write order. */
  written: string[];
  /** Files that already had the content to write (the context contract). */
  unchanged: string[];
  /** Hints for the user (a variable whose catalog does not exist yet). */
  notes: string[];
}

/**
 * Creates workspace files; see the module documentation for what each
 * option writes.
 *
 * @param dir the workspace directory
 * @param options what to create
 * @returns the files written
 * @throws {UsageError} for a bad name or type, or no option
 * @throws {CfgtoolError} `file_exists` when a file to create exists (`details.paths` lists them)
 * @throws {ProblemsError} for `context` when qualifier problems prevent generating the contract
 *
 * @example
 * ```ts
 * import { initWorkspace } from "./init.ts";
 * const dir = await Deno.makeTempDir();
 * const r = await initWorkspace(dir, { catalog: "delivery", variable: "delivery" });
 * if (!r.written.includes("variables/delivery.toml")) throw new Error();
 * ```
 */
export async function initWorkspace(dir: string, options: InitOptions): Promise<InitResult> {
  const { variable, catalog, type } = options;
  const context = options.context === true;
  if (variable === undefined && catalog === undefined && !context) {
    throw new UsageError("init needs --variable <name>, --catalog <name> or --context");
  }
  if (type !== undefined && variable === undefined) {
    throw new UsageError("--type goes with --variable");
  }
  for (const [what, name] of [["variable", variable], ["catalog", catalog]] as const) {
    if (name !== undefined && !NAME_RE.test(name)) {
      throw new UsageError(
        `"${name}" is not a valid ${what} name: use lower-case letters, digits, ".", "_" and "-", ` +
          "starting with a letter or digit, at most 63 characters",
      );
    }
  }
  let variableCatalog = catalog ?? variable;
  if (type !== undefined) {
    const m = /^catalog:(.*)$/.exec(type);
    if (m === null || !NAME_RE.test(m[1]!)) {
      throw new UsageError(`--type "${type}" must be catalog:<catalog_name>`);
    }
    variableCatalog = m[1]!;
  }

  // A missing directory is created for a catalog or variable; a context-only
  // init has nothing to read, and readWorkspaceFiles says so.
  const missing = variable !== undefined || catalog !== undefined ? !(await exists(dir)) : false;
  const files: WorkspaceFiles = missing ? new Map() : (await readWorkspaceFiles(dir)).files;
  const analysis = analyzeFiles(files);
  const create = new Map<string, string>();
  const notes: string[] = [];

  if (catalog !== undefined) {
    create.set(`catalogs/${catalog}.toml`, catalogText(catalog));
    create.set(`schemas/${catalog}.schema.json`, schemaText(catalog));
    create.set(`${entriesDir(catalog)}/default.toml`, entryText(catalog));
  }
  if (variable !== undefined) {
    const c = variableCatalog!;
    const createdHere = c === catalog;
    const existing = analysis.model.catalogs.get(c);
    if (!createdHere && !existing?.defined) {
      notes.push(
        `catalog "${c}" does not exist yet; create it with "cfgtool init ${dir} --catalog ${c}"`,
      );
    }
    create.set(
      `variables/${variable}.toml`,
      variableText(variable, c, defaultKey(analysis.model, c)),
    );
  }

  const taken = [...create.keys()].filter((p) => files.has(p));
  if (taken.length > 0) {
    throw new CfgtoolError(
      "file_exists",
      `${taken.join(", ")} already exist${
        taken.length === 1 ? "s" : ""
      }; init never overwrites files`,
      { status: 409, details: { paths: taken } },
    );
  }

  const contract = analysis.contract;
  let contractText: string | undefined;
  if (context) {
    if (contract === undefined || !contract.ok) {
      const problems = contract?.ok === false
        ? contract.problems
        : analysis.blocking.filter((p) => p.path.startsWith("qualifiers/"));
      throw new ProblemsError(
        problems,
        "invalid_workspace",
        "cannot generate the context contract",
      );
    }
    contractText = contract.text;
  } else if (!files.has(CONTEXT_CONTRACT_PATH) && contract?.ok) {
    contractText = contract.text;
  }

  const written: string[] = [];
  const unchanged: string[] = [];
  for (const [path, text] of create) {
    await writeFile(dir, path, text, true);
    written.push(path);
  }
  if (contractText !== undefined) {
    const current = files.get(CONTEXT_CONTRACT_PATH);
    if (current !== undefined && new TextDecoder().decode(current) === contractText) {
      unchanged.push(CONTEXT_CONTRACT_PATH);
    } else {
      await writeFile(dir, CONTEXT_CONTRACT_PATH, contractText, false);
      written.push(CONTEXT_CONTRACT_PATH);
    }
  }
  return { written, unchanged, notes };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

function defaultKey(model: WorkspaceModel, catalog: string): string {
  const entries = model.catalogs.get(catalog)?.entries;
  if (entries === undefined || entries.size === 0 || entries.has("default")) return "default";
  return [...entries.keys()].sort()[0]!;
}

async function writeFile(dir: string, path: string, text: string, createNew: boolean) {
  const full = `${dir}/${path}`;
  await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
  try {
    await Deno.writeTextFile(full, text, { createNew });
  } catch (err) {
    if (err instanceof Deno.errors.AlreadyExists) {
      throw new CfgtoolError("file_exists", `${path} already exists; init never overwrites files`, {
        status: 409,
        details: { paths: [path] },
        cause: err,
      });
    }
    throw err;
  }
}

function catalogText(name: string): string {
  return `schema_version = 1
description = "Entries of the ${name} catalog (say what they configure)"
schema = "../schemas/${name}.schema.json"
`;
}

function schemaText(name: string): string {
  return renderJson({
    $schema: DRAFT_2020_12,
    title: `${name} entry`,
    description: `An entry of catalog ${name}. Replace the example property with the fields ` +
      "of your entries.",
    type: "object",
    additionalProperties: false,
    properties: {
      enabled: { description: "Example field: replace it.", type: "boolean" },
    },
    required: ["enabled"],
  });
}

function entryText(name: string): string {
  return `# Entry "default" of catalog ${name}: its keys must satisfy schemas/${name}.schema.json.
enabled = false
`;
}

function variableText(name: string, catalog: string, def: string): string {
  return `schema_version = 1
description = "What ${name} decides (say it here)"
type = "catalog:${catalog}"

[resolve]
default = "${def}"

# Rules are evaluated in file order; the first whose qualifier is true selects its entry.
# [[resolve.rule]]
# qualifier = "<qualifier name>"
# value = "<entry key>"
`;
}
