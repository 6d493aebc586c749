/**
 * The regular expressions written in the product's source: every regex
 * literal (`/…/g`) and every `new RegExp(…)` / `RegExp(…)` call of the
 * TypeScript files under lib/ and the entry files, read with a real parser
 * (@babel/parser with its TypeScript and JSX plugins), so that a `/` in a
 * string, a comment or a JSX text is never taken for a regex.
 *
 * @module
 */
import { parse } from "js-parser";

/** One regular expression in the source. */
export interface RegexSite {
  /** File, relative to the repository root, `/`-separated. */
  readonly file: string;
  /** 1-based line. */
  readonly line: number;
  /** The pattern of a literal, or the source text of a constructor call. */
  readonly pattern: string;
  /** The flags of a literal ("" for constructor calls). */
  readonly flags: string;
  /** Whether the pattern is built at run time (`new RegExp(…)`). */
  readonly dynamic: boolean;
}

interface Node {
  type?: string;
  loc?: { start: { line: number } };
  start?: number;
  end?: number;
  pattern?: string;
  flags?: string;
  callee?: Node & { name?: string };
  [key: string]: unknown;
}

/**
 * The regular expressions of one source file.
 *
 * @param file the path to report
 * @param source the file's text
 * @returns every literal and constructor call, in source order
 *
 * @example
 * ```ts
 * import { regexSites } from "./regex_literals.ts";
 * const sites = regexSites("a.tsx", 'const a = "/x/"; const b = /y+/g; const c = <p>a/b</p>; new RegExp(s);');
 * if (sites.length !== 2 || sites[0]!.pattern !== "y+" || !sites[1]!.dynamic) throw new Error(JSON.stringify(sites));
 * ```
 */
export function regexSites(file: string, source: string): RegexSite[] {
  const ast = parse(source, {
    sourceType: "module",
    plugins: file.endsWith(".tsx") ? ["typescript", "jsx"] : ["typescript"],
  }) as unknown as { program: Node };
  const sites: RegexSite[] = [];
  const stack: unknown[] = [ast.program];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
      continue;
    }
    const n = node as Node;
    const line = n.loc?.start.line ?? 0;
    if (n.type === "RegExpLiteral") {
      sites.push({ file, line, pattern: n.pattern ?? "", flags: n.flags ?? "", dynamic: false });
    } else if (
      (n.type === "NewExpression" || n.type === "CallExpression") &&
      n.callee?.type === "Identifier" && n.callee.name === "RegExp"
    ) {
      sites.push({ file, line, pattern: source.slice(n.start, n.end), flags: "", dynamic: true });
    }
    for (const key of Object.keys(n).reverse()) {
      if (key !== "loc" && key !== "extra" && key !== "leadingComments") stack.push(n[key]);
    }
  }
  return sites.sort((a, b) => a.line - b.line);
}

/**
 * The TypeScript files of the product: lib/ (recursively, browser assets
 * excluded: they are JavaScript that runs in the reader's browser) and the
 * entry files, relative to `root`, sorted.
 *
 * @param root the repository root
 * @returns the paths
 */
export async function productSources(root: URL): Promise<string[]> {
  const out = ["cli.ts", "mod.ts", "server.ts"];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(path);
    }
  };
  await walk("lib");
  return out.sort();
}
