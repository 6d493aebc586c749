/**
 * Finds Deno KV calls in source text: the rule that only lib/store/ touches
 * the KV. Comments are left out (doc examples open their own KV).
 *
 * @module
 */

/** A KV method called on something named like a KV handle. */
const KV_CALL =
  /\b(?:kv|#kv|deps\.kv)\s*\.\s*(get|getMany|set|delete|list|atomic|watch|enqueue|listenQueue|sum|min|max)\s*[<(]/g;

/** One KV call: where and which method. */
export interface KvCall {
  path: string;
  line: number;
  method: string;
}

/**
 * The KV calls of one file's source, comments excluded.
 *
 * @param path the file's path, copied into each finding
 * @param source its text
 * @returns every call found, in order
 */
export function kvCalls(path: string, source: string): KvCall[] {
  // blank out comments but keep line breaks, so line numbers stay right
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`])\/\/[^\n]*/g, (m, pre: string) => pre + " ".repeat(m.length - pre.length));
  const out: KvCall[] = [];
  for (const m of code.matchAll(KV_CALL)) {
    out.push({ path, line: code.slice(0, m.index).split("\n").length, method: m[1]! });
  }
  return out;
}
