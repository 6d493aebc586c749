/**
 * The Model Context Protocol server of `cfgtool mcp`: a client of a
 * cfgtool service's HTTP API, with the credential of whoever started it,
 * that offers an agent tools to read namespaces and flags (rules in
 * words), evaluate and explain, read versions, diffs, the audit log and
 * change requests, and propose a change, which opens a change request for
 * a person to approve. It speaks MCP over stdio: messages on stdin and
 * stdout, nothing else on stdout.
 *
 * The SDK's package exports give declarations only to extension-less
 * subpaths and code only to `.js` ones, so each import of the SDK names its
 * declarations with a `@ts-types` comment.
 *
 * @module
 */
// @ts-types="mcp-sdk/server/mcp"
import { McpServer } from "mcp-sdk/server/mcp.js";
// @ts-types="mcp-sdk/server/stdio"
import { StdioServerTransport } from "mcp-sdk/server/stdio.js";
import process from "node:process";
import { ServiceClient } from "../client/api.ts";
import { UsageError } from "../errors.ts";
import { KEY_RE } from "../flags/model.ts";
import { VERSION } from "../version.ts";
import { registerProposeTool } from "./propose.ts";
import { registerReadTools } from "./read_tools.ts";
import type { ToolContext } from "./scope.ts";

/** What the server tells an agent host about itself and its tools. */
const INSTRUCTIONS = "Tools for the feature flags of a cfgtool service. Flags live in " +
  "namespaces of tenants; each namespace has numbered manifest versions and environments. " +
  "Read with list_namespaces, list_flags, get_flag (rules in words), evaluate (value and why), " +
  "list_versions, diff_versions, read_audit and the change-request tools. To change flags, " +
  "call propose_change: it opens a change request and never commits; a person approves and " +
  "applies it. Tell the person the change request's URL.";

/**
 * Builds the MCP server with every tool registered; nothing is connected yet.
 *
 * @param ctx the service client and the default tenant and namespace
 * @returns the server
 *
 * @example
 * ```ts
 * import { createMcpServer } from "./server.ts";
 * import { ServiceClient } from "../client/api.ts";
 * const client = new ServiceClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * const server = createMcpServer({ client, defaults: { tenant: "acme" } });
 * if (server.isConnected()) throw new Error();
 * ```
 */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer(
    { name: "cfgtool", title: "cfgtool flags", version: VERSION },
    { instructions: INSTRUCTIONS },
  );
  registerReadTools(server, ctx);
  registerProposeTool(server, ctx);
  return server;
}

/**
 * Serves MCP over this process's stdin and stdout until stdin ends (the
 * agent host closed it) or the transport closes.
 *
 * @param ctx the service client and defaults
 * @returns when the session is over
 *
 * @example
 * ```ts ignore
 * await serveStdio({ client, defaults: {} });
 * ```
 */
export async function serveStdio(ctx: ToolContext): Promise<void> {
  const server = createMcpServer(ctx);
  const transport = new StdioServerTransport();
  const over = new Promise<void>((resolve) => {
    const done = () => resolve();
    process.stdin.once("end", done);
    process.stdin.once("close", done);
    transport.onclose = done;
  });
  await server.connect(transport);
  await over;
  await server.close();
}

/**
 * Starts `cfgtool mcp`: checks the default tenant and namespace, opens a
 * client of the service with the credential, and serves MCP over stdio
 * until the host closes stdin.
 *
 * @param remote the service URL and the credential
 * @param defaults the tenant and namespace a tool call may leave out
 * @returns when the session is over
 * @throws {UsageError} when a default is not a slug
 *
 * @example
 * ```ts
 * import { startMcp } from "./server.ts";
 * import { UsageError } from "../errors.ts";
 * let refused = false;
 * try {
 *   await startMcp({ server: "http://127.0.0.1:1", token: "svc_x" }, { tenant: "Not A Slug" });
 * } catch (e) {
 *   refused = e instanceof UsageError;
 * }
 * if (!refused) throw new Error("a bad --tenant is a usage error");
 * ```
 */
export async function startMcp(
  remote: { server: string; token: string },
  defaults: { tenant?: string | undefined; namespace?: string | undefined },
): Promise<void> {
  for (const [option, value] of Object.entries(defaults)) {
    if (value !== undefined && !KEY_RE.test(value)) {
      throw new UsageError(`--${option} must be a slug, not ${JSON.stringify(value)}`);
    }
  }
  const client = new ServiceClient({ server: remote.server, token: remote.token });
  await serveStdio({ client, defaults });
}
