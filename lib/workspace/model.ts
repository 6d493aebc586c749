/**
 * The in-memory model of a configuration workspace (docs/workspace.md):
 * variables, catalogs with their entries, and qualifiers, as read and checked
 * by {@linkcode loadModel}. Resolution and lint work from this model only;
 * nothing here touches the disk.
 *
 * @module
 */
import type { Predicate } from "../flags/conditions.ts";

/** The only `schema_version` this cfgtool reads and writes. */
export const SCHEMA_VERSION = 1;

/** Workspace-relative path of the generated context contract. */
export const CONTEXT_CONTRACT_PATH = "schemas/context.schema.json";

/**
 * Names of variables, catalogs, entries and qualifiers (the file name without
 * extension): lower-case letters, digits, `.`, `_` and `-`, starting with a
 * letter or digit, at most 63 characters.
 */
export const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** One rule of a variable: when `qualifier` is true, select entry `value`. */
export interface RuleModel {
  /** Qualifier name. */
  qualifier: string;
  /** Entry key selected when the qualifier is true. */
  value: string;
}

/** A variable file, `variables/<name>.toml`. */
export interface VariableModel {
  /** Variable name (file name without `.toml`). */
  name: string;
  /** Workspace-relative path of the file. */
  path: string;
  /** Free text. */
  description?: string;
  /** Catalog named by `type = "catalog:<name>"`, when the type is valid. */
  catalog?: string;
  /** `resolve.default`, when present. */
  defaultKey?: string;
  /** `resolve.rule`, in file order (only well-formed rules). */
  rules: RuleModel[];
}

/** One catalog entry, `catalogs/<catalog>-entries/<key>.toml`. */
export interface EntryModel {
  /** Entry key (file name without `.toml`). */
  key: string;
  /** Workspace-relative path of the file. */
  path: string;
  /** The entry table as a JSON object, keys in file order. */
  value: Record<string, unknown>;
}

/** A catalog: its definition file (when present) and its entries. */
export interface CatalogModel {
  /** Catalog name. */
  name: string;
  /** Workspace-relative path of `catalogs/<name>.toml`. */
  path: string;
  /** Whether `catalogs/<name>.toml` exists. */
  defined: boolean;
  /** Free text. */
  description?: string;
  /** Workspace-relative path of the entry schema, when the `schema` field is usable. */
  schemaPath?: string;
  /** Entries by key, in key order. */
  entries: Map<string, EntryModel>;
}

/** A `qualifier.<name>` predicate: the name it reads and where it is written. */
export interface QualifierRef {
  /** The referenced qualifier. */
  name: string;
  /** Key path of the predicate's attribute (`predicate[0].attribute`). */
  key: string;
}

/** A qualifier file, `qualifiers/<name>.toml`. */
export interface QualifierModel {
  /** Qualifier name. */
  name: string;
  /** Workspace-relative path of the file. */
  path: string;
  /** Free text. */
  description?: string;
  /** The predicates that passed validation, in file order. */
  predicates: Predicate[];
  /** The `qualifier.<name>` references among them, with their key paths. */
  refs: QualifierRef[];
  /** Whether the file and every predicate passed validation. */
  valid: boolean;
}

/** Everything a workspace holds, by name. */
export interface WorkspaceModel {
  /** Variables by name. */
  variables: Map<string, VariableModel>;
  /** Catalogs by name (a catalog exists when its file or its entry directory does). */
  catalogs: Map<string, CatalogModel>;
  /** Qualifiers by name. */
  qualifiers: Map<string, QualifierModel>;
}

/** The result of a resolution: the selected entry key and its content. */
export interface Resolution {
  /** Key of the selected catalog entry. */
  value_key: string;
  /** The entry content as a JSON object (keys in file order; frozen). */
  value: Readonly<Record<string, unknown>>;
}
