/**
 * `propose_change`: the one tool of `cfgtool mcp` that writes, and what it
 * writes is only ever a change request. The proposal is the namespace's
 * files at a version (the current one by default) with whole files
 * replaced, added or removed, and quick edits made on flag files (turn a
 * flag on or off in an environment, change a default, set a rollout's
 * weights; lib/flags/quick_change.ts keeps the rest of each file as
 * written). The service validates the files, works out which environments
 * the change affects and how many approvals it needs, and opens the
 * request; a person reads it, approves it and applies it, in the console
 * or with `cfgtool change`. Nothing here commits a version, whatever the
 * credential may do otherwise.
 *
 * @module
 */
// @ts-types="mcp-sdk/server/mcp"
import type { McpServer } from "mcp-sdk/server/mcp.js";
import { z } from "zod";
import { InvalidRequestError, NotFoundError } from "../errors.ts";
import { MAX_FILE_BYTES } from "../flags/model.ts";
import { applyQuickChange } from "../flags/quick_change.ts";
import { valueChangeLines } from "../flags/value_changes.ts";
import { runTool } from "./results.ts";
import { namespaceShape, type Scope, scopeOf, slug, type ToolContext } from "./scope.ts";

/** One quick edit of a flag file; `rule` counts from 1, as get_flag's words do. */
export type FlagEdit =
  | { kind: "toggle"; flag: string; environment: string; enabled: boolean }
  | { kind: "default"; flag: string; environment?: string | undefined; variation: string }
  | {
    kind: "weights";
    flag: string;
    environment?: string | undefined;
    rule: number;
    weights: Record<string, number>;
  };

const edit = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("toggle"),
    flag: slug.describe("flag key"),
    environment: slug.describe("environment key"),
    enabled: z.boolean().describe("false turns the flag off there: every context gets its default"),
  }).describe("turn a flag on or off in an environment"),
  z.object({
    kind: z.literal("default"),
    flag: slug.describe("flag key"),
    environment: slug.optional().describe("only in this environment (default: the flag's own)"),
    variation: z.string().min(1).max(63).describe("the variation served when no rule matches"),
  }).describe("change the variation a flag serves when no rule matches"),
  z.object({
    kind: z.literal("weights"),
    flag: slug.describe("flag key"),
    environment: slug.optional().describe(
      "the environment whose own rules hold the rollout (default: the flag's rules)",
    ),
    rule: z.number().int().min(1).max(10_000).describe("the rule's number, from 1"),
    weights: z.record(z.string().min(1).max(63), z.number().int().min(0).max(100_000))
      .describe("every variation of the rollout and its weight, summing to 100"),
  }).describe("set the weights of a rule's rollout"),
]);

const proposeInput = {
  ...namespaceShape,
  message: z.string().trim().min(1).max(4096).describe("why: what a reviewer reads first"),
  files: z.record(z.string().min(1).max(300), z.string().max(MAX_FILE_BYTES).nullable())
    .optional().describe("path → the file's whole new text; null removes the file"),
  edits: z.array(edit).max(100).optional().describe("quick edits of flag files, in order"),
  base_version: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe(
    "the version the change is made on (default: the current one)",
  ),
};

/**
 * The file set a proposal makes: `base` with `files` replaced, added or
 * (null) removed, then each edit made on its flag's file, in order.
 *
 * @param base the files of the version proposed on, path → text
 * @param files whole files to write (null: remove)
 * @param edits quick edits of flag files
 * @returns the proposed file set
 * @throws {InvalidRequestError} when an edit is refused or the proposal changes nothing
 * @throws {NotFoundError} when a file to remove or a flag to edit is not there
 *
 * @example
 * ```ts
 * import { proposedFiles } from "./propose.ts";
 * const flag = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n';
 * const out = proposedFiles({ "flags/a.toml": flag }, {}, [
 *   { kind: "toggle", flag: "a", environment: "production", enabled: false },
 * ]);
 * if (!out["flags/a.toml"]?.endsWith("[environments.production]\nenabled = false\n")) throw new Error();
 * ```
 */
export function proposedFiles(
  base: Readonly<Record<string, string>>,
  files: Readonly<Record<string, string | null>>,
  edits: readonly FlagEdit[],
): Record<string, string> {
  // no prototype: a file named `__proto__` is a file like any other (the service refuses the name)
  const out: Record<string, string> = Object.assign(Object.create(null), base);
  for (const [path, text] of Object.entries(files)) {
    if (text !== null) {
      out[path] = text;
    } else if (Object.hasOwn(out, path)) {
      delete out[path];
    } else {
      throw new NotFoundError("not_found", `Cannot remove ${path}: the version has no such file`);
    }
  }
  for (const e of edits) {
    const path = `flags/${e.flag}.toml`;
    if (!Object.hasOwn(out, path)) {
      throw new NotFoundError("flag_not_found", `No flag ${e.flag} to edit (no file ${path})`);
    }
    out[path] = applyQuickChange(
      out[path]!,
      e.kind === "weights"
        ? { kind: "weights", environment: e.environment, rule: e.rule - 1, weights: e.weights }
        : e,
    );
  }
  const same = Object.keys(out).length === Object.keys(base).length &&
    Object.entries(out).every(([p, t]) => base[p] === t);
  if (same) {
    throw new InvalidRequestError(
      "The proposal changes nothing: the files would equal the version proposed on",
    );
  }
  return out;
}

/**
 * The console page of a change request, where a person reads, approves
 * and applies it.
 *
 * @param server the service URL
 * @param scope the namespace
 * @param id the change request id
 * @returns the URL
 *
 * @example
 * ```ts
 * import { changeRequestUrl } from "./propose.ts";
 * const url = changeRequestUrl("https://flags.example.com", { tenant: "acme", namespace: "web" }, "cr_1");
 * if (url !== "https://flags.example.com/ui/t/acme/ns/web/changes/cr_1") throw new Error(url);
 * ```
 */
export function changeRequestUrl(server: string, scope: Scope, id: string): string {
  const e = encodeURIComponent;
  return `${server}/ui/t/${e(scope.tenant)}/ns/${e(scope.namespace)}/changes/${e(id)}`;
}

/**
 * Registers `propose_change` on a server.
 *
 * @param server the MCP server
 * @param ctx the client and defaults the tool runs with
 *
 * @example
 * ```ts
 * import { McpServer } from "mcp-sdk/server/mcp.js";
 * import { ServiceClient } from "../client/api.ts";
 * import { registerProposeTool } from "./propose.ts";
 * const server = new McpServer({ name: "t", version: "0" });
 * const client = new ServiceClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * registerProposeTool(server, { client, defaults: {} });
 * ```
 */
export function registerProposeTool(server: McpServer, ctx: ToolContext): void {
  const { client } = ctx;
  server.registerTool("propose_change", {
    title: "Propose a change",
    description: "Opens a change request on a namespace's flags: never commits. Give whole " +
      "files (`files`: path → new TOML text, null removes; paths are namespace.toml, " +
      "flags/<key>.toml, segments/<key>.toml) and/or quick edits of flags (`edits`: toggle, " +
      "default, weights), and a message saying why. The service checks the files and says " +
      "which environments the change affects and how many approvals it needs; a person must " +
      "approve and apply it (the answer has the console URL to send them).",
    inputSchema: proposeInput,
    annotations: {
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    },
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const files = args.files ?? {};
      const edits = (args.edits ?? []) as FlagEdit[];
      if (Object.keys(files).length === 0 && edits.length === 0) {
        throw new InvalidRequestError("Nothing to propose: give `files`, `edits` or both");
      }
      const base = await client.getManifest(
        scope.tenant,
        scope.namespace,
        args.base_version === undefined ? {} : { version: args.base_version },
      );
      const proposed = proposedFiles(base.files, files, edits);
      const cr = await client.openChangeRequest(scope.tenant, scope.namespace, proposed, {
        message: args.message,
        baseVersion: base.version,
      });
      const details = await client.getChangeRequest(scope.tenant, scope.namespace, cr.id);
      const needs = cr.required_approvals;
      return {
        ...scope,
        id: cr.id,
        status: cr.status,
        base_version: cr.base_version,
        changed_paths: cr.changed_paths,
        impact: cr.impact,
        required_approvals: needs,
        lines: details.changes === null ? null : valueChangeLines(details.changes),
        url: changeRequestUrl(client.server, scope, cr.id),
        next: (needs === 0
          ? "It needs no approval (nothing it affects is protected), but nothing changes until "
          : `It needs ${needs} approval${needs === 1 ? "" : "s"}, and nothing changes until `) +
          "a person reviews and applies it: in the console (url), or with `cfgtool change " +
          `approve ${cr.id}\` and \`cfgtool change apply ${cr.id}\`.`,
      };
    }));
}
