/**
 * Test helper: `cfgtool mcp` as a real child process, spoken to by the MCP
 * SDK's own client over stdio, as an agent host would.
 *
 * @module
 */
// @ts-types="mcp-sdk/client/index"
import { Client } from "mcp-sdk/client/index.js";
// @ts-types="mcp-sdk/client/stdio"
import { StdioClientTransport } from "mcp-sdk/client/stdio.js";
// @ts-types="mcp-sdk/types"
import type { CallToolResult } from "mcp-sdk/types.js";
import { assert } from "../assert.ts";
import { CLI } from "../cli_process.ts";

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** A connected client and what its server wrote on stderr. */
export interface McpSession {
  client: Client;
  /** Calls a tool and returns its result (tool errors included, never thrown). */
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** Calls a tool that must succeed and returns its structured content. */
  // deno-lint-ignore no-explicit-any
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  /** Calls a tool that must fail and returns its error text. */
  error(name: string, args?: Record<string, unknown>): Promise<string>;
  /** Closes the client; the server process ends with its stdin. */
  close(): Promise<void>;
}

/**
 * Starts `cfgtool mcp --server <url> …` with `CFGTOOL_TOKEN` set and
 * connects the SDK's client to it.
 *
 * @example
 * ```ts ignore
 * const mcp = await connectMcp(inst.url, token, ["--tenant", "acme"]);
 * const tools = await mcp.client.listTools();
 * await mcp.close();
 * ```
 */
export async function connectMcp(
  server: string,
  token: string,
  args: string[] = [],
): Promise<McpSession> {
  const env: Record<string, string> = {
    CFGTOOL_TOKEN: token,
    NO_COLOR: "1",
    // never the developer's own saved sign-ins
    XDG_CONFIG_HOME: `/nonexistent/cfgtool-test-config-${Deno.pid}`,
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir !== undefined) env.DENO_DIR = denoDir;
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: [
      "run",
      "-A",
      "--unstable-kv",
      "--config",
      CONFIG,
      CLI,
      "mcp",
      "--server",
      server,
      ...args,
    ],
    env,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Uint8Array) => {
    stderr += new TextDecoder().decode(chunk);
  });
  const client = new Client({ name: "cfgtool-test", version: "0" });
  await client.connect(transport);
  const call = async (name: string, a: Record<string, unknown> = {}) =>
    await client.callTool({ name, arguments: a }) as CallToolResult;
  const text = (r: CallToolResult) =>
    r.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return {
    client,
    call,
    async ok(name, a) {
      const r = await call(name, a);
      assert(r.isError !== true, `${name} failed: ${text(r)}\n${stderr}`);
      assert(r.structuredContent !== undefined, `${name}: no structured content`);
      return r.structuredContent;
    },
    async error(name, a) {
      const r = await call(name, a);
      assert(r.isError === true, `${name} should have failed: ${text(r)}`);
      return text(r);
    },
    async close() {
      await client.close();
      assert(!/^\s+at /m.test(stderr), `stack trace on stderr:\n${stderr}`);
    },
  };
}
