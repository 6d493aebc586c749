/**
 * Test helper: the runnable blocks of a Markdown document. A block runs when
 * a one-line `<!-- doc-test: … -->` comment precedes its fence; the comment's
 * words say how:
 *
 * - `shell=<name>`: a console block typed into the shell (terminal) `<name>`;
 * - `background`: its last command keeps running (a server, an agent), and its
 *   documented output lines are awaited rather than compared at once;
 * - `inherit=<shell>:<VAR>,<VAR>`: the shell starts with these variables as
 *   exported by `<shell>` (what the reader is told to copy);
 * - `await=<shell>`: before it runs, every documented line of `<shell>`'s
 *   background command must have appeared;
 * - `file=<name>`: a code block saved as `<name>`;
 * - `skip`: not run (the rest of the comment says why).
 *
 * @module
 */

/** One command of a console block and the output documented after it. */
export interface ConsoleCommand {
  /** The command without `$ `, continuation lines included. */
  command: string;
  /** Documented output, trailing blank lines removed. */
  output: string;
}

/** A fenced block with its `doc-test` directives. */
export interface DocBlock {
  /** `README.md:71`: the document and the line of the opening fence. */
  where: string;
  /** The fence's info string (`console`, `ts`, …). */
  lang: string;
  /** Raw content between the fences. */
  text: string;
  /** Directives of the preceding `doc-test` comment; null when unmarked. */
  directives: Map<string, string> | null;
}

const MARKER = /^<!-- doc-test: (.*) -->$/;

/**
 * Every fenced block of a Markdown text, with its directives.
 *
 * @example
 * ```ts ignore
 * const blocks = parseDocBlocks(await Deno.readTextFile("README.md"), "README.md");
 * ```
 */
export function parseDocBlocks(markdown: string, name: string): DocBlock[] {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  let pending: Map<string, string> | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = line.match(MARKER);
    if (marker) {
      pending = parseDirectives(marker[1]!);
      continue;
    }
    const fence = line.match(/^```(\S*)/);
    if (fence) {
      const start = i;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith("```"); i++) body.push(lines[i]!);
      blocks.push({
        where: `${name}:${start + 1}`,
        lang: fence[1]!,
        text: body.join("\n"),
        directives: pending,
      });
      pending = null;
      continue;
    }
    if (line.trim() !== "" && pending !== null) {
      throw new Error(`${name}:${i + 1}: a doc-test comment must directly precede a code block`);
    }
  }
  return blocks;
}

function parseDirectives(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const word of text.trim().split(/\s+/)) {
    const eq = word.indexOf("=");
    if (eq < 0) out.set(word, "");
    else out.set(word.slice(0, eq), word.slice(eq + 1));
    if (word === "skip") break; // the rest is the reason
  }
  return out;
}

/**
 * The commands of a console block: each `$ ` line (with its `\` continuation
 * lines) and the lines after it up to the next command.
 *
 * @example
 * ```ts ignore
 * parseConsole("$ echo hi\nhi"); // [{command: "echo hi", output: "hi"}]
 * ```
 */
export function parseConsole(text: string): ConsoleCommand[] {
  const lines = text.split("\n");
  const out: ConsoleCommand[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.startsWith("$ ")) {
      if (line.trim() !== "") throw new Error(`output before the first command: ${line}`);
      i++;
      continue;
    }
    const command = [line.slice(2)];
    while (command.at(-1)!.endsWith("\\") && i + 1 < lines.length) command.push(lines[++i]!);
    const output: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith("$ "); i++) output.push(lines[i]!);
    while (output.length > 0 && output.at(-1)!.trim() === "") output.pop();
    out.push({ command: command.join("\n"), output: output.join("\n") });
  }
  return out;
}
