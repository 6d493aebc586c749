/**
 * Confirmation of irreversible CLI actions (`tenant delete`, `namespace
 * delete`, `admin user delete`). With `--yes` the action goes ahead. On a
 * terminal the user is told what will be removed and must type the name of
 * the thing to delete (like `gh repo delete`); anything else cancels. Without
 * a terminal there is nobody to ask: the command stops with a usage error
 * (exit 2) saying to pass `--yes`, as `admin rekey` does, and nothing is
 * deleted.
 *
 * @module
 */
import { CfgtoolError, UsageError } from "../errors.ts";

/** Where the question is asked and answered (the process's terminal by default). */
export interface ConfirmIO {
  /** Whether stdin is an interactive terminal. */
  isTerminal(): boolean;
  /** Writes prompt text (to stderr, so stdout stays clean for `--json`). */
  write(text: string): void;
  /** Reads one line of input, without its line break; null at end of input. */
  readLine(): Promise<string | null>;
}

/** What to confirm. */
export interface ConfirmRequest {
  /** `--yes` was given. */
  yes: boolean | undefined;
  /** One line for the non-terminal refusal: what the command would remove. */
  summary: string;
  /** The text the user must type to go ahead (the slug, the email). */
  answer: string;
  /**
   * The lines listing what will be removed, shown before the question on a
   * terminal (may ask the service for counts); only called on a terminal.
   */
  details: () => Promise<string[]>;
}

/**
 * Goes ahead (returns) when the action is confirmed; otherwise throws: a
 * {@linkcode UsageError} (exit 2) without a terminal and without `--yes`, a
 * `CfgtoolError` with code `aborted` (exit 1) when the typed answer differs.
 *
 * @param req what to confirm
 * @param io the terminal (default: stdin / stderr of the process)
 * @returns nothing
 *
 * @example
 * ```ts
 * import { confirmDeletion } from "./confirm.ts";
 * let shown = "";
 * const io = {
 *   isTerminal: () => true,
 *   write: (text: string) => void (shown += text),
 *   readLine: () => Promise.resolve("web"),
 * };
 * const details = () => Promise.resolve(["This deletes namespace acme/web for good:"]);
 * await confirmDeletion({ yes: false, summary: "deletes web", answer: "web", details }, io);
 * if (!shown.endsWith("Type web to confirm: ")) throw new Error(shown);
 * const refused = await confirmDeletion(
 *   { yes: false, summary: "deletes web", answer: "api", details },
 *   io,
 * ).then(() => null, (err) => err.code);
 * if (refused !== "aborted") throw new Error(refused);
 * ```
 */
export async function confirmDeletion(
  req: ConfirmRequest,
  io: ConfirmIO = processIO,
): Promise<void> {
  if (req.yes) return;
  if (!io.isTerminal()) {
    throw new UsageError(
      `${req.summary}; pass --yes to go ahead (stdin is not a terminal, so there is no ` +
        "prompt; nothing was deleted)",
    );
  }
  const lines = await req.details();
  io.write(`${lines.join("\n")}\nThis cannot be undone. Type ${req.answer} to confirm: `);
  const typed = await io.readLine();
  if (typed === null) io.write("\n");
  if (typed?.trim() !== req.answer) {
    throw new CfgtoolError("aborted", "Not confirmed: nothing was deleted");
  }
}

const processIO: ConfirmIO = {
  isTerminal: () => Deno.stdin.isTerminal(),
  write: (text) => Deno.stderr.writeSync(new TextEncoder().encode(text)),
  readLine: readStdinLine,
};

async function readStdinLine(): Promise<string | null> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(256);
  let text = "";
  while (true) {
    const n = await Deno.stdin.read(buf);
    if (n === null) return text === "" ? null : text;
    text += decoder.decode(buf.subarray(0, n), { stream: true });
    const end = text.indexOf("\n");
    if (end >= 0) return text.slice(0, end).replace(/\r$/, "");
  }
}
