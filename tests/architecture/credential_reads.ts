/**
 * Finds where source text reads a request's credential: the
 * `Authorization` header (`c.req.header("authorization")`,
 * `headers.get("authorization")`) or the session cookie (`getCookie` of
 * its names). The rule that only the authentication module
 * (lib/http/authn.ts) does. Comments are left out.
 *
 * @module
 */

const READS = [
  /\.(?:header|get)\(\s*["'`]authorization["'`]\s*\)/gi,
  /\bgetCookie\([^)]*(?:SECURE_COOKIE|PLAIN_COOKIE|cfgtool_session)/g,
];

/** One read of a credential: where, and the text that reads it. */
export interface CredentialRead {
  path: string;
  line: number;
  text: string;
}

/**
 * The credential reads of one file's source, comments excluded.
 *
 * @param path the file's path, copied into each finding
 * @param source its text
 * @returns every read found, in order
 *
 * @example
 * ```ts
 * import { credentialReads } from "./credential_reads.ts";
 * const found = credentialReads("a.ts", '// c.req.header("authorization")\nconst h = c.req.header("Authorization");');
 * if (found.length !== 1 || found[0]!.line !== 2) throw new Error(JSON.stringify(found));
 * ```
 */
export function credentialReads(path: string, source: string): CredentialRead[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`])\/\/[^\n]*/g, (m, pre: string) => pre + " ".repeat(m.length - pre.length));
  const out: CredentialRead[] = [];
  for (const pattern of READS) {
    for (const m of code.matchAll(pattern)) {
      out.push({ path, line: code.slice(0, m.index).split("\n").length, text: m[0] });
    }
  }
  return out.sort((a, b) => a.line - b.line);
}
