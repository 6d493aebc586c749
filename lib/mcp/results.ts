/**
 * What a tool answers: a result with the data both as JSON text (what any
 * agent host shows the model) and as `structuredContent`, or a tool error
 * (`isError: true`) whose text says what went wrong in the service's own
 * words, with its stable code and, for a manifest that does not validate,
 * every problem on its own line. A tool never throws past
 * {@linkcode runTool}: a refusal of the service, a bad input the schemas
 * let through, or a bug becomes an error result, so the session goes on.
 *
 * @module
 */
// @ts-types="mcp-sdk/types"
import type { CallToolResult } from "mcp-sdk/types.js";
import { CfgtoolError, formatProblem, ProblemsError } from "../errors.ts";

/**
 * A successful result: `data` as indented JSON text and as structured content.
 *
 * @param data a JSON object
 * @returns the tool result
 *
 * @example
 * ```ts
 * import { toolResult } from "./results.ts";
 * const r = toolResult({ flags: ["a"] });
 * if (r.isError || r.content[0]?.type !== "text" || !r.content[0].text.includes('"a"')) throw new Error();
 * ```
 */
export function toolResult(data: Record<string, unknown>): CallToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(data, null, 2) }],
    structuredContent: data,
  };
}

/**
 * A tool error with the message an agent can act on.
 *
 * @param err what was thrown (a {@linkcode CfgtoolError} from the service client, or anything)
 * @returns the error result (`isError: true`)
 *
 * @example
 * ```ts
 * import { toolError } from "./results.ts";
 * import { ForbiddenError } from "../errors.ts";
 * const r = toolError(new ForbiddenError("Token tok_1 is bound to namespace web, not shop"));
 * const text = r.content[0]?.type === "text" ? r.content[0].text : "";
 * if (!r.isError || !text.startsWith("forbidden: Token tok_1 is bound")) throw new Error(text);
 * ```
 */
export function toolError(err: unknown): CallToolResult {
  return {
    content: [{ type: "text", text: errorText(err) }],
    isError: true,
  };
}

/**
 * Runs a tool's work and turns what it returns into a result, and
 * whatever it throws into a tool error.
 *
 * @param work the tool's work
 * @returns the result
 *
 * @example
 * ```ts
 * import { runTool } from "./results.ts";
 * const r = await runTool(() => Promise.reject(new Error("boom")));
 * if (!r.isError) throw new Error();
 * ```
 */
export async function runTool(
  work: () => Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  try {
    return toolResult(await work());
  } catch (err) {
    return toolError(err);
  }
}

function errorText(err: unknown): string {
  if (err instanceof ProblemsError) {
    const lines = err.problems.map((p) => `- ${formatProblem(p)}`);
    return [`${err.code}: ${err.message}`, ...lines].join("\n");
  }
  if (err instanceof CfgtoolError) {
    const hint = err.status === 401
      ? " (the credential this MCP server runs with was refused: sign in again or set " +
        "another CFGTOOL_TOKEN)"
      : err.status === 403
      ? " (the credential this MCP server runs with may not do this)"
      : "";
    return `${err.code}: ${err.message}${hint}`;
  }
  return `error: ${err instanceof Error ? err.message : String(err)}`;
}
