/**
 * Printing secrets (token and session secrets, console links, sign-in
 * codes) by writing to the process's stdout or stderr directly, never
 * through `console`: with `OTEL_DENO=true` Deno exports everything written
 * with `console.*` as OpenTelemetry log records (unless
 * `OTEL_DENO_CONSOLE=ignore`), which would hand the secret to the
 * collector; direct writes are not captured.
 *
 * @module
 */

/** Where a line goes: `Deno.stdout`, `Deno.stderr`, or a test's stand-in. */
export interface SecretSink {
  writeSync(bytes: Uint8Array): number;
}

const encoder = new TextEncoder();

/**
 * Writes `line` and a newline to `out` (stdout by default) directly, so
 * Deno's console capture never sees it. A closed pipe (`| head -n1`) is
 * ignored, as `console.log` ignores it.
 *
 * @param line the text, without its newline
 * @param out where to write; defaults to `Deno.stdout`
 *
 * @example
 * ```ts
 * import { printSecret } from "./secret_output.ts";
 * const chunks: Uint8Array[] = [];
 * const out = { writeSync: (b: Uint8Array) => (chunks.push(b), b.length) };
 * printSecret("svc_admin_secret", out);
 * if (new TextDecoder().decode(chunks[0]) !== "svc_admin_secret\n") throw new Error();
 * ```
 */
export function printSecret(line: string, out: SecretSink = Deno.stdout): void {
  const bytes = encoder.encode(`${line}\n`);
  try {
    for (let off = 0; off < bytes.length;) off += out.writeSync(bytes.subarray(off));
  } catch (err) {
    if (!(err instanceof Deno.errors.BrokenPipe)) throw err;
  }
}

/**
 * Writes `line` and a newline to stderr directly: for what a person must
 * read but a pipe should not get, such as a device sign-in's code.
 *
 * @param line the text, without its newline
 * @param out where to write; defaults to `Deno.stderr`
 *
 * @example
 * ```ts
 * import { noteSecret } from "./secret_output.ts";
 * let written = "";
 * noteSecret("enter the code BCDF-GHJK", { writeSync: (b) => (written += new TextDecoder().decode(b), b.length) });
 * if (written !== "enter the code BCDF-GHJK\n") throw new Error(written);
 * ```
 */
export function noteSecret(line: string, out: SecretSink = Deno.stderr): void {
  printSecret(line, out);
}
