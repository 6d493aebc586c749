/**
 * The imports of a TypeScript module, read from its source text: static
 * `import` and `export … from` statements (type-only or not), side-effect
 * imports, dynamic `import("…")` and `new URL("./x.ts", import.meta.url)`
 * (how a worker module is named). A small tokenizer skips comments (so the
 * `@example` blocks of JSDoc do not count), string and template literals and
 * regular expressions before any statement is recognised, so an import
 * written inside a string is not one.
 *
 * es-module-lexer was tried first: it reads TypeScript only as far as it is
 * JavaScript, and misses `export type { A } from "./a.ts"` entirely.
 *
 * @module
 */

/** How a module refers to another. */
export type ImportKind = "static" | "re-export" | "side-effect" | "dynamic" | "url";

/** One reference from a module's source to another module. */
export interface ModuleImport {
  /** The specifier as written, e.g. `"../errors.ts"` or `"npm:hono"`. */
  readonly specifier: string;
  /** Which form of import this is. */
  readonly kind: ImportKind;
  /**
   * True when nothing of the imported module survives type erasure:
   * `import type`, `export type … from`, `import { type A, type B }` where
   * every name is `type`, and `typeof import("…")`.
   */
  readonly typeOnly: boolean;
  /** 1-based line of the `import` / `export` / `new` keyword. */
  readonly line: number;
}

type TokenKind = "name" | "number" | "string" | "template" | "regex" | "punct";

interface Token {
  readonly kind: TokenKind;
  /** The source text (for strings: the unquoted value). */
  readonly text: string;
  readonly line: number;
}

/** Keywords after which a `/` starts a regular expression, not a division. */
const REGEX_AFTER = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

const isNameStart = (c: string) => /[A-Za-z_$#\u0080-\uffff]/.test(c);
const isNamePart = (c: string) => /[\w$\u0080-\uffff]/.test(c);

/**
 * Whether a `/` after `tokens[at]` begins a regular expression literal
 * rather than a division: it does after an operator or an opening bracket,
 * and not after a value (name, literal, `)`, `]`, `}`, or a non-null `x!`).
 */
function regexAllowed(tokens: readonly Token[], at: number): boolean {
  const prev = tokens[at];
  if (prev === undefined) return true;
  switch (prev.kind) {
    case "name":
      return REGEX_AFTER.has(prev.text);
    case "punct":
      if (prev.text === "!") return regexAllowed(tokens, at - 1); // `!x` or `x!`
      return prev.text !== ")" && prev.text !== "]" && prev.text !== "}";
    default:
      return false;
  }
}

/**
 * Splits TypeScript source into tokens, dropping whitespace and comments.
 * Template literals become one `template` token per literal piece; the
 * expressions inside `${…}` are tokenized like any code.
 */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let line = 1;
  let i = 0;
  let braceDepth = 0;
  /** For each open `${`, the brace depth its closing `}` returns to. */
  const templateDepths: number[] = [];
  const n = source.length;

  const push = (kind: TokenKind, text: string, at: number) => tokens.push({ kind, text, line: at });

  /** Reads a string literal body from `i` (just past the quote) up to `quote`. */
  const readString = (quote: string): string => {
    let value = "";
    while (i < n && source[i] !== quote) {
      const c = source[i]!;
      if (c === "\\") {
        if (source[i + 1] === "\n") line++;
        value += source[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (c === "\n") {
        if (quote !== "`") break; // unterminated: stop at the line's end
        line++;
      }
      if (quote === "`" && c === "$" && source[i + 1] === "{") break;
      value += c;
      i++;
    }
    return value;
  };

  /**
   * Reads template text from `i` up to the closing backtick or the next
   * `${`; the latter is pushed as a `${` token so that what follows reads
   * as the start of an expression.
   */
  const readTemplatePiece = (): void => {
    const at = line;
    const value = readString("`");
    push("template", value, at);
    if (source[i] === "$") {
      push("punct", "${", line);
      i += 2;
      templateDepths.push(braceDepth);
    } else {
      i++; // closing backtick
    }
  };

  while (i < n) {
    const c = source[i]!;
    if (c === "\n") {
      line++;
      i++;
      continue;
    }
    if (c === " " || c === "\t" || c === "\r" || c === "\f" || c === "\v" || c === "\ufeff") {
      i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "/") {
      while (i < n && source[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end === -1 ? n : end + 2;
      for (let k = i; k < stop; k++) if (source[k] === "\n") line++;
      i = stop;
      continue;
    }
    if (c === '"' || c === "'") {
      const at = line;
      i++;
      const value = readString(c);
      i++;
      push("string", value, at);
      continue;
    }
    if (c === "`") {
      i++;
      readTemplatePiece();
      continue;
    }
    if (c === "/" && regexAllowed(tokens, tokens.length - 1)) {
      const start = i++;
      let inClass = false;
      while (i < n && source[i] !== "\n") {
        const r = source[i]!;
        if (r === "\\") {
          i += 2;
          continue;
        }
        if (r === "[") inClass = true;
        else if (r === "]") inClass = false;
        else if (r === "/" && !inClass) break;
        i++;
      }
      i++;
      while (i < n && isNamePart(source[i]!)) i++;
      push("regex", source.slice(start, i), line);
      continue;
    }
    if (isNameStart(c)) {
      const start = i++;
      while (i < n && isNamePart(source[i]!)) i++;
      push("name", source.slice(start, i), line);
      continue;
    }
    if (/[0-9]/.test(c) || (c === "." && /[0-9]/.test(source[i + 1] ?? ""))) {
      const start = i++;
      while (i < n && /[\w.]/.test(source[i]!)) i++;
      push("number", source.slice(start, i), line);
      continue;
    }
    if (c === "{") braceDepth++;
    if (c === "}") {
      if (templateDepths.length > 0 && templateDepths[templateDepths.length - 1] === braceDepth) {
        templateDepths.pop();
        i++;
        readTemplatePiece();
        continue;
      }
      braceDepth--;
    }
    if (c === "." && source.startsWith("...", i)) {
      push("punct", "...", line);
      i += 3;
      continue;
    }
    push("punct", c, line);
    i++;
  }
  return tokens;
}

const isPunct = (t: Token | undefined, text: string) => t?.kind === "punct" && t.text === text;
const isName = (t: Token | undefined, text: string) => t?.kind === "name" && t.text === text;
const isSpecifier = (t: Token | undefined) => t?.kind === "string" || t?.kind === "template";

/**
 * Whether every name of a `{ … }` list carries the `type` modifier.
 * `{ type }` and `{ type as T }` import a binding called `type`, so they do
 * not; an empty list imports no type either, so it does not.
 */
function allNamesTypeOnly(inner: readonly Token[]): boolean {
  const names: Token[][] = [[]];
  for (const t of inner) {
    if (isPunct(t, ",")) names.push([]);
    else names[names.length - 1]!.push(t);
  }
  const nonEmpty = names.filter((s) => s.length > 0);
  if (nonEmpty.length === 0) return false;
  return nonEmpty.every((s) =>
    isName(s[0], "type") && s.length > 1 && !(s.length === 3 && isName(s[1], "as"))
  );
}

/** Index just past the `}` that closes the `{` at `open`, or -1. */
function closeBrace(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    if (isPunct(tokens[k], "{")) depth++;
    else if (isPunct(tokens[k], "}") && --depth === 0) return k + 1;
  }
  return -1;
}

/**
 * Reads an import clause starting at `start` (just past `import`) up to its
 * `from "…"`; undefined when the statement is no module import (e.g.
 * `import x = require(…)` or `import A = B.C`).
 */
function importClause(
  tokens: readonly Token[],
  start: number,
): { specifier: string; typeOnly: boolean } | undefined {
  let k = start;
  let typeOnly = false;
  if (isName(tokens[k], "type")) {
    const next = tokens[k + 1];
    // `import type from "./x"` and `import type, { a } from "./x"` import a default called `type`.
    const defaultCalledType = (isName(next, "from") && isSpecifier(tokens[k + 2])) ||
      isPunct(next, ",");
    if (!defaultCalledType) {
      typeOnly = true;
      k++;
    }
  }
  let hasValueBinding = false;
  let braces: Token[] | undefined;
  for (; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (isName(t, "from") && isSpecifier(tokens[k + 1])) {
      const onlyTypes = typeOnly ||
        (!hasValueBinding && braces !== undefined && allNamesTypeOnly(braces));
      return { specifier: tokens[k + 1]!.text, typeOnly: onlyTypes };
    }
    if (isPunct(t, "{")) {
      const end = closeBrace(tokens, k);
      if (end === -1) return undefined;
      braces = tokens.slice(k + 1, end - 1);
      k = end - 1;
      continue;
    }
    if (t.kind === "name" || isPunct(t, "*")) {
      hasValueBinding = true; // a default import or `* as ns`
      continue;
    }
    if (isPunct(t, ",")) continue;
    return undefined; // `=`, `;`, or anything else: not an ES import clause
  }
  return undefined;
}

/**
 * Reads `export { … } from "…"`, `export * from "…"` and `export * as ns
 * from "…"`, with or without `type`, from `start` (just past `export`);
 * undefined for every other export (declarations, local `export { a }`).
 */
function reExport(
  tokens: readonly Token[],
  start: number,
): { specifier: string; typeOnly: boolean } | undefined {
  let k = start;
  let typeOnly = false;
  if (isName(tokens[k], "type") && (isPunct(tokens[k + 1], "{") || isPunct(tokens[k + 1], "*"))) {
    typeOnly = true;
    k++;
  }
  if (isPunct(tokens[k], "*")) {
    k++;
    if (isName(tokens[k], "as")) k += 2;
    if (isName(tokens[k], "from") && isSpecifier(tokens[k + 1])) {
      return { specifier: tokens[k + 1]!.text, typeOnly };
    }
    return undefined;
  }
  if (isPunct(tokens[k], "{")) {
    const end = closeBrace(tokens, k);
    if (end === -1) return undefined;
    if (isName(tokens[end], "from") && isSpecifier(tokens[end + 1])) {
      const onlyTypes = typeOnly || allNamesTypeOnly(tokens.slice(k + 1, end - 1));
      return { specifier: tokens[end + 1]!.text, typeOnly: onlyTypes };
    }
  }
  return undefined;
}

/**
 * Lists the module references in TypeScript source, in source order: every
 * static import and re-export, side-effect import, dynamic `import("…")`
 * with a literal specifier, and `new URL("…", import.meta.url)`. Imports
 * inside comments (JSDoc examples included), strings and template text are
 * not read. A dynamic import counts as a value import unless it follows
 * `typeof`.
 *
 * @param source the text of a `.ts` module
 * @returns the module's references, each with its specifier, kind, whether it is type-only, and line
 *
 * @example
 * ```ts
 * import { parseImports } from "./imports.ts";
 * const source = [
 *   '// import { doc } from "./in_comment.ts";',
 *   'import { type A, type B } from "./types.ts";',
 *   'const lazy = () => import("./lazy.ts");',
 *   'const s = "import x from \'./in_string.ts\'";',
 * ].join("\n");
 * const found = parseImports(source).map((i) => `${i.specifier} ${i.kind} ${i.typeOnly}`);
 * if (found.join(", ") !== "./types.ts static true, ./lazy.ts dynamic false") {
 *   throw new Error(found.join(", "));
 * }
 * ```
 */
export function parseImports(source: string): ModuleImport[] {
  const tokens = tokenize(source);
  const found: ModuleImport[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.kind !== "name") continue;
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    // `x.import`, `x?.export` and `{ import: 1 }` are property names.
    if (isPunct(prev, ".") || isPunct(next, ":")) continue;
    if (t.text === "import") {
      if (isPunct(next, "(")) {
        const arg = tokens[k + 2];
        const after = tokens[k + 3];
        if (isSpecifier(arg) && (isPunct(after, ")") || isPunct(after, ","))) {
          found.push({
            specifier: arg!.text,
            kind: "dynamic",
            typeOnly: isName(prev, "typeof"),
            line: t.line,
          });
        }
      } else if (next?.kind === "string") {
        found.push({ specifier: next.text, kind: "side-effect", typeOnly: false, line: t.line });
      } else if (!isPunct(next, ".")) {
        const clause = importClause(tokens, k + 1);
        if (clause) found.push({ ...clause, kind: "static", line: t.line });
      }
    } else if (t.text === "export") {
      const clause = reExport(tokens, k + 1);
      if (clause) found.push({ ...clause, kind: "re-export", line: t.line });
    } else if (t.text === "new" && isName(next, "URL") && isPunct(tokens[k + 2], "(")) {
      // new URL("./x.ts", import.meta.url)
      const arg = tokens[k + 3];
      const meta = tokens.slice(k + 4, k + 11).map((m) => m.text).join("");
      if (isSpecifier(arg) && meta === ",import.meta.url)") {
        found.push({ specifier: arg!.text, kind: "url", typeOnly: false, line: t.line });
      }
    }
  }
  return found;
}
