/**
 * Turns the files of a workspace into a {@linkcode WorkspaceModel} and the
 * list of every problem found on the way: layout, UTF-8, TOML syntax,
 * fields, entry schemas and references between files. It works from memory
 * only (the files are read once, by lib/workspace/files.ts) and reports all
 * problems rather than stopping at the first. Entry schemas are compiled by
 * the {@linkcode SchemaChecker} it is given (Ajv in lib/workspace/schemas.ts,
 * or cached verdicts in lib/workspace/schema_verdicts.ts), so this module
 * loads no validator of its own. TOML is read by lib/workspace/toml_reader.ts
 * (plain TOML directly, the rest by the full reader).
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { refName, validatePredicate } from "../flags/conditions.ts";
import type { TomlTable } from "../toml.ts";
import { FieldChecker, keyPath } from "../toml_fields.ts";
import { didYouMean } from "../suggest.ts";
import { graphProblems } from "./graph.ts";
import { classifyPath, type FileKind, LAYOUT_SUMMARY } from "./layout.ts";
import {
  type CatalogModel,
  NAME_RE,
  type QualifierModel,
  SCHEMA_VERSION,
  type VariableModel,
  type WorkspaceModel,
} from "./model.ts";
import type { EntryValidator, SchemaChecker } from "./schema_check.ts";
import { readTomlText } from "./toml_reader.ts";

/** The outcome of {@linkcode readModel}. */
export interface LoadResult {
  /** What could be read, including partly broken files. */
  model: WorkspaceModel;
  /** Every problem found, in the order found. */
  problems: Problem[];
}

const VARIABLE_KEYS = ["schema_version", "description", "type", "resolve"] as const;
const RESOLVE_KEYS = ["default", "rule"] as const;
const RULE_KEYS = ["qualifier", "value"] as const;
const CATALOG_KEYS = ["schema_version", "description", "schema"] as const;
const QUALIFIER_KEYS = ["schema_version", "description", "predicate"] as const;
const TYPE_RE = /^catalog:(.*)$/;

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a workspace model from its files (relative path → bytes), compiling
 * entry schemas with `checker`. Never throws on bad content: every problem
 * is returned. What the checker throws is thrown again, and so is
 * `FullTomlNeededError` (lib/workspace/toml_reader.ts) in a process that
 * deferred the full TOML reader.
 *
 * @param files the workspace files, as {@linkcode readWorkspaceFiles} returns them
 * @param checker compiles each `schemas/<name>.schema.json`
 * @returns the model and the problems
 *
 * @example
 * ```ts
 * import { readModel } from "./read_model.ts";
 * const enc = new TextEncoder();
 * const acceptAll = { compile: () => ({ ok: true as const, validate: () => [] }) };
 * const files = new Map([["variables/x.toml", enc.encode("schema_version = 2\n")]]);
 * const { problems } = readModel(files, acceptAll);
 * if (!problems.some((p) => p.key === "schema_version")) throw new Error();
 * ```
 */
export function readModel(
  files: ReadonlyMap<string, Uint8Array>,
  checker: SchemaChecker,
): LoadResult {
  const problems: Problem[] = [];
  const model: WorkspaceModel = {
    variables: new Map(),
    catalogs: new Map(),
    qualifiers: new Map(),
  };
  const tables = new Map<string, { kind: FileKind; table: TomlTable }>();
  const schemaTexts = new Map<string, string>();
  const unparsed = new Set<string>();

  for (const [path, bytes] of files) {
    const kind = classifyPath(path);
    if (kind.kind === "unexpected") {
      problems.push({ path, message: `unexpected file: ${LAYOUT_SUMMARY}` });
      continue;
    }
    if (kind.kind === "context") continue; // compared by the context contract check
    const bad = badName(kind);
    if (bad !== undefined) {
      problems.push({ path, message: bad });
      continue;
    }
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      problems.push({ path, message: "not valid UTF-8 text" });
      continue;
    }
    if (kind.kind === "schema") {
      schemaTexts.set(path, text);
      continue;
    }
    const parsed = readTomlText(text, path);
    if (parsed.ok) {
      tables.set(path, { kind, table: parsed.table });
    } else {
      problems.push(parsed.problem);
      unparsed.add(path);
    }
    // A file that exists is known by name even when broken, so that
    // references to it do not add "no such …" problems on top.
    if (kind.kind === "catalog") catalogOf(model, kind.name).defined = true;
    if (kind.kind === "entry") {
      catalogOf(model, kind.catalog).entries.set(kind.name, { key: kind.name, path, value: {} });
    }
    if (kind.kind === "qualifier" && !parsed.ok) {
      model.qualifiers.set(kind.name, {
        name: kind.name,
        path,
        predicates: [],
        refs: [],
        valid: false,
      });
    }
  }

  const schemas = new Map<string, EntryValidator | undefined>();
  for (const [path, text] of schemaTexts) {
    const r = checker.compile(text, path);
    if (r.ok) schemas.set(path, r.validate);
    else {
      schemas.set(path, undefined);
      problems.push(...r.problems);
    }
  }

  for (const [path, { kind, table }] of tables) {
    if (kind.kind === "catalog") readCatalog(path, table, catalogOf(model, kind.name), problems);
  }
  for (const [path, { kind, table }] of tables) {
    if (kind.kind === "variable") {
      model.variables.set(kind.name, readVariable(kind.name, path, table, problems));
    } else if (kind.kind === "qualifier") {
      model.qualifiers.set(kind.name, readQualifier(kind.name, path, table, problems));
    } else if (kind.kind === "entry") {
      catalogOf(model, kind.catalog).entries.set(kind.name, { key: kind.name, path, value: table });
    }
  }

  for (const c of model.catalogs.values()) {
    checkCatalog(c, model, files, schemas, unparsed, problems);
  }
  for (const v of model.variables.values()) checkVariable(v, model, problems);
  problems.push(...graphProblems(model.qualifiers));
  return { model, problems };
}

function badName(kind: FileKind): string | undefined {
  const names: [string, string][] = kind.kind === "entry"
    ? [["catalog", kind.catalog], ["entry key", kind.name]]
    : "name" in kind
    ? [[kind.kind, kind.name]]
    : [];
  for (const [what, name] of names) {
    if (!NAME_RE.test(name)) {
      return `"${name}" is not a valid ${what} name (lower-case letters, digits, ".", "_" and "-", ` +
        "starting with a letter or digit, at most 63 characters)";
    }
  }
  return undefined;
}

function catalogOf(model: WorkspaceModel, name: string): CatalogModel {
  let c = model.catalogs.get(name);
  if (c === undefined) {
    c = { name, path: `catalogs/${name}.toml`, defined: false, entries: new Map() };
    model.catalogs.set(name, c);
  }
  return c;
}

function readCatalog(path: string, t: TomlTable, c: CatalogModel, problems: Problem[]): void {
  const f = new FieldChecker(path);
  f.unknownKeys(t, "", CATALOG_KEYS);
  f.schemaVersion(t, SCHEMA_VERSION);
  const description = f.string(t, "", "description", false);
  if (description !== undefined) c.description = description;
  const schema = f.string(t, "", "schema", true);
  if (schema !== undefined) {
    const target = resolveRelative("catalogs", schema);
    const kind = target === undefined ? undefined : classifyPath(target);
    if (target === undefined || kind?.kind !== "schema") {
      f.report(
        "schema",
        `"${schema}" must point to a file schemas/<name>.schema.json inside the workspace ` +
          `(for instance "../schemas/${c.name}.schema.json")`,
      );
    } else {
      c.schemaPath = target;
    }
  }
  problems.push(...f.problems);
}

/** Joins a relative path to a directory, `..` and `.` resolved; undefined when it escapes. */
function resolveRelative(dir: string, rel: string): string | undefined {
  if (rel.startsWith("/") || rel.includes("\\")) return undefined;
  const out = dir.split("/");
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(seg);
  }
  return out.join("/");
}

function definedCatalogs(model: WorkspaceModel): string[] {
  return [...model.catalogs.values()].filter((c) => c.defined).map((c) => c.name);
}

function checkCatalog(
  c: CatalogModel,
  model: WorkspaceModel,
  files: ReadonlyMap<string, Uint8Array>,
  schemas: ReadonlyMap<string, EntryValidator | undefined>,
  unparsed: ReadonlySet<string>,
  problems: Problem[],
): void {
  if (!c.defined) {
    const hint = didYouMean(c.name, definedCatalogs(model));
    for (const e of c.entries.values()) {
      problems.push({
        path: e.path,
        message: `no catalog "${c.name}" (${c.path} does not exist)${hint}`,
      });
    }
    return;
  }
  if (c.schemaPath === undefined) return;
  if (!files.has(c.schemaPath)) {
    problems.push({
      path: c.path,
      key: "schema",
      message: `schema file ${c.schemaPath} does not exist; entries cannot be checked`,
    });
    return;
  }
  const validate = schemas.get(c.schemaPath);
  if (validate === undefined) {
    problems.push({
      path: c.path,
      key: "schema",
      message: `${c.schemaPath} is not a valid JSON Schema; entries cannot be checked`,
    });
    return;
  }
  for (const e of c.entries.values()) {
    if (!unparsed.has(e.path)) problems.push(...validate(e.value, e.path));
  }
}

function readVariable(
  name: string,
  path: string,
  t: TomlTable,
  problems: Problem[],
): VariableModel {
  const v: VariableModel = { name, path, rules: [] };
  const f = new FieldChecker(path);
  f.unknownKeys(t, "", VARIABLE_KEYS);
  f.schemaVersion(t, SCHEMA_VERSION);
  const description = f.string(t, "", "description", false);
  if (description !== undefined) v.description = description;
  const type = f.string(t, "", "type", true);
  if (type !== undefined) {
    const m = TYPE_RE.exec(type);
    if (m === null || !NAME_RE.test(m[1]!)) {
      f.report(
        "type",
        `unsupported type "${type}" (a variable's type is "catalog:<catalog_name>")`,
      );
    } else {
      v.catalog = m[1]!;
    }
  }
  const resolve = f.table(t, "", "resolve", true);
  if (resolve !== undefined) {
    f.unknownKeys(resolve, "resolve", RESOLVE_KEYS);
    const def = f.string(resolve, "resolve", "default", true);
    if (def !== undefined) v.defaultKey = def;
    const rules = f.tables(resolve, "resolve", "rule", false) ?? [];
    rules.forEach((r, i) => {
      // An item that is not a table keeps its slot, so that rule i stays rule[i].
      let qualifier: string | undefined, value: string | undefined;
      if (r !== undefined) {
        const at = keyPath(keyPath("resolve", "rule"), i);
        f.unknownKeys(r, at, RULE_KEYS);
        qualifier = f.string(r, at, "qualifier", true);
        value = f.string(r, at, "value", true);
      }
      v.rules.push({ qualifier: qualifier ?? "", value: value ?? "" });
    });
  }
  problems.push(...f.problems);
  return v;
}

function checkVariable(v: VariableModel, model: WorkspaceModel, problems: Problem[]): void {
  const f = new FieldChecker(v.path);
  const catalog = v.catalog === undefined ? undefined : model.catalogs.get(v.catalog);
  if (v.catalog !== undefined && !catalog?.defined) {
    f.report(
      "type",
      `no catalog "${v.catalog}" (catalogs/${v.catalog}.toml does not exist)` +
        didYouMean(v.catalog, definedCatalogs(model)),
    );
  }
  const entry = (key: string | undefined, at: string) => {
    if (catalog?.defined && key !== undefined && key !== "" && !catalog.entries.has(key)) {
      f.report(
        at,
        `no entry "${key}" in catalog "${catalog.name}"${didYouMean(key, catalog.entries.keys())}`,
      );
    }
  };
  entry(v.defaultKey, "resolve.default");
  v.rules.forEach((r, i) => {
    const at = keyPath(keyPath("resolve", "rule"), i);
    if (r.qualifier !== "" && !model.qualifiers.has(r.qualifier)) {
      f.report(
        keyPath(at, "qualifier"),
        `no qualifier "${r.qualifier}"${didYouMean(r.qualifier, model.qualifiers.keys())}`,
      );
    }
    entry(r.value, keyPath(at, "value"));
  });
  problems.push(...f.problems);
}

function readQualifier(
  name: string,
  path: string,
  t: TomlTable,
  problems: Problem[],
): QualifierModel {
  const q: QualifierModel = { name, path, predicates: [], refs: [], valid: true };
  const f = new FieldChecker(path);
  f.unknownKeys(t, "", QUALIFIER_KEYS);
  f.schemaVersion(t, SCHEMA_VERSION);
  const description = f.string(t, "", "description", false);
  if (description !== undefined) q.description = description;
  const preds = f.tables(t, "", "predicate", true);
  if (preds !== undefined && preds.length === 0) {
    f.report("predicate", "a qualifier needs at least one [[predicate]]");
  }
  (preds ?? []).forEach((raw, i) => {
    if (raw === undefined) return;
    const at = keyPath("predicate", i);
    const r = validatePredicate(raw, "qualifier");
    if ("problems" in r) {
      for (const p of r.problems) f.report(p.key === "" ? at : `${at}.${p.key}`, p.message);
      return;
    }
    q.predicates.push(r.predicate);
    const ref = refName(r.predicate.attribute, "qualifier");
    if (ref !== undefined) q.refs.push({ name: ref, key: keyPath(at, "attribute") });
  });
  if (f.problems.length > 0 || preds === undefined) q.valid = false;
  problems.push(...f.problems);
  return q;
}
