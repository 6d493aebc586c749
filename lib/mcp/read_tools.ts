/**
 * The read-only tools of `cfgtool mcp`: tenants, namespaces, flags (with
 * their rules in words), evaluation with its explanation, versions and the
 * value-level diff between two, the audit log, and change requests. Each
 * reads the service over its API with the server's credential, so it sees
 * what that credential may see, and changes nothing (`readOnlyHint`).
 *
 * Evaluation runs the service's own engine (lib/flags/evaluate.ts) on the
 * manifest version it reads, the same computation the service's evaluate
 * endpoint makes, so the answer can say which rule matched and why, with
 * its segment in words.
 *
 * @module
 */
// @ts-types="mcp-sdk/server/mcp"
import type { McpServer } from "mcp-sdk/server/mcp.js";
// @ts-types="mcp-sdk/types"
import type { ToolAnnotations } from "mcp-sdk/types.js";
import { z } from "zod";
import { CHANGE_STATUSES } from "../protocol/changes.ts";
import type { ChangeStatus } from "../protocol/changes.ts";
import { effectiveFlag } from "../flags/effective.ts";
import { compileManifest, evaluateFlag } from "../flags/evaluate.ts";
import { explainResult } from "../flags/explain.ts";
import { valueChangeLines, valueChanges } from "../flags/value_changes.ts";
import { runTool } from "./results.ts";
import {
  checkEnvironment,
  flagOf,
  loadManifest,
  namespaceShape,
  scopeOf,
  slug,
  tenantOf,
  type ToolContext,
} from "./scope.ts";
import { flagWords, ruleWords } from "./words.ts";

/** Read-only tools change nothing, and give the same answer until the flags change. */
const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

const version = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const limit = z.number().int().min(1).max(500).optional().describe("page size (at most 500)");
const after = z.string().min(1).max(64).optional().describe(
  "the `next` of the previous page, for the page after it",
);

const listNamespacesInput = { tenant: namespaceShape.tenant };

const listFlagsInput = {
  ...namespaceShape,
  version: version.optional().describe("manifest version"),
};

const getFlagInput = {
  ...namespaceShape,
  flag: slug.describe("flag key"),
  environment: slug.optional().describe("only this environment"),
  version: version.optional().describe("manifest version (default: the current one)"),
};

const evaluateInput = {
  ...namespaceShape,
  environment: slug.describe("environment key"),
  flag: slug.describe("flag key"),
  context: z.record(z.string(), z.unknown()).optional().describe(
    'the evaluation context, e.g. {"targeting_key": "u-42", "user": {"email": "a@b.c"}}',
  ),
};

const listVersionsInput = { ...namespaceShape, limit, after };

const diffVersionsInput = {
  ...namespaceShape,
  from: version.describe("the older version"),
  to: version.optional().describe("the newer version (default: the current one)"),
};

const readAuditInput = {
  tenant: namespaceShape.tenant,
  namespace: slug.optional().describe("only this namespace's entries"),
  type: z.string().min(1).max(64).optional().describe("only this event type"),
  limit,
  after,
};

const listChangeRequestsInput = {
  ...namespaceShape,
  status: z.array(z.enum(CHANGE_STATUSES as unknown as [ChangeStatus, ...ChangeStatus[]]))
    .optional().describe("only these statuses"),
  limit,
  after,
};

const getChangeRequestInput = {
  ...namespaceShape,
  id: z.string().min(1).max(64).describe("the change request id (cr_…)"),
};

/**
 * Registers the read-only tools on a server.
 *
 * @param server the MCP server
 * @param ctx the client and defaults the tools run with
 *
 * @example
 * ```ts
 * import { McpServer } from "mcp-sdk/server/mcp.js";
 * import { ServiceClient } from "../client/api.ts";
 * import { registerReadTools } from "./read_tools.ts";
 * const server = new McpServer({ name: "t", version: "0" });
 * const client = new ServiceClient({ server: "http://127.0.0.1:1", token: "svc_x" });
 * registerReadTools(server, { client, defaults: {} });
 * ```
 */
export function registerReadTools(server: McpServer, ctx: ToolContext): void {
  const { client } = ctx;

  server.registerTool("list_tenants", {
    title: "List tenants",
    description: "The tenants this server's credential may read, with their descriptions.",
    inputSchema: {},
    annotations: READ_ONLY,
  }, () =>
    runTool(async () => ({
      tenants: (await client.listTenants()).map((t) => ({
        slug: t.slug,
        description: t.description ?? null,
      })),
    })));

  server.registerTool("list_namespaces", {
    title: "List namespaces",
    description:
      "The namespaces of a tenant, each with its current manifest version and environments.",
    inputSchema: listNamespacesInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const tenant = tenantOf(ctx, args.tenant);
      return {
        tenant,
        namespaces: (await client.listNamespaces(tenant)).map((n) => ({
          slug: n.slug,
          description: n.description ?? null,
          version: n.head?.version ?? null,
          environments: Object.keys(n.head?.environments ?? {}),
        })),
      };
    }));

  server.registerTool("list_flags", {
    title: "List flags",
    description: "The flags of a namespace (current version, or `version`): each flag's type, " +
      "description, variations, default and number of rules, and the namespace's environments " +
      "and segments. Use get_flag for one flag's rules in words.",
    inputSchema: listFlagsInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const { version, manifest } = await loadManifest(client, scope, args.version);
      return {
        ...scope,
        version,
        environments: Object.keys(manifest.namespace.environments),
        flags: Object.values(manifest.flags).map((f) => ({
          key: f.key,
          type: f.type,
          description: f.description,
          variations: Object.keys(f.variations),
          default: f.default,
          rules: f.rules.length,
          overridden_in: Object.keys(f.environments),
        })),
        segments: Object.values(manifest.segments).map((s) => ({
          key: s.key,
          description: s.description,
        })),
      };
    }));

  server.registerTool("get_flag", {
    title: "Read a flag",
    description: "One flag: its variations and values, and in each environment (or the one " +
      "named) whether it is on, its rules in words with their segments opened, and its " +
      "default; also the flag file's TOML text, the starting point of a propose_change.",
    inputSchema: getFlagInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const loaded = await loadManifest(client, scope, args.version);
      const flag = flagOf(loaded, scope, args.flag);
      if (args.environment !== undefined) checkEnvironment(loaded, scope, args.environment);
      const path = `flags/${flag.key}.toml`;
      return {
        ...scope,
        version: loaded.version,
        flag: flag.key,
        description: flag.description,
        type: flag.type,
        variations: flag.variations,
        default: flag.default,
        environments: flagWords(
          loaded.manifest,
          flag,
          args.environment === undefined ? undefined : [args.environment],
        ),
        file: { path, text: loaded.files[path] ?? null },
      };
    }));

  server.registerTool("evaluate", {
    title: "Evaluate a flag",
    description: "Evaluates a flag for a context in an environment with the service's engine " +
      "on the current manifest: the value, the variation, the reason (TARGETING_MATCH, SPLIT, " +
      "DEFAULT, DISABLED, ERROR), and why: the rule that matched, in words, with its segment.",
    inputSchema: evaluateInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const loaded = await loadManifest(client, scope);
      const flag = flagOf(loaded, scope, args.flag);
      checkEnvironment(loaded, scope, args.environment);
      const model = compileManifest(loaded.manifest, loaded.version);
      const result = evaluateFlag(model, args.environment, flag.key, args.context ?? {});
      const why = explainResult(flag, args.environment, result);
      const rule = result.rule_index === undefined
        ? undefined
        : effectiveFlag(flag, args.environment).rules[result.rule_index];
      return {
        ...scope,
        environment: args.environment,
        ...result,
        explanation: why.text,
        ...(rule === undefined
          ? {}
          : { rule: ruleWords(loaded.manifest, rule, result.rule_index!) }),
      };
    }));

  server.registerTool("list_versions", {
    title: "List versions",
    description: "The manifest versions of a namespace, newest first: number, time, author, " +
      "message. Pages with `limit` and `after`.",
    inputSchema: listVersionsInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const page = await client.listVersions(scope.tenant, scope.namespace, {
        ...(args.limit === undefined ? {} : { limit: args.limit }),
        ...(args.after === undefined ? {} : { after: args.after }),
      });
      return { ...scope, versions: page.items, next: page.next };
    }));

  server.registerTool("diff_versions", {
    title: "Diff two versions",
    description: "What changed between two manifest versions, value by value in words " +
      "(`flag f in production: enabled: true → false`), and which files; `to` defaults to " +
      "the current version.",
    inputSchema: diffVersionsInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const [a, b] = await Promise.all([
        loadManifest(client, scope, args.from),
        loadManifest(client, scope, args.to),
      ]);
      const changes = valueChanges(a.manifest, b.manifest);
      const paths = [...new Set([...Object.keys(a.files), ...Object.keys(b.files)])].sort();
      return {
        ...scope,
        from: a.version,
        to: b.version,
        lines: valueChangeLines(changes),
        changes,
        files: {
          added: paths.filter((p) => !(p in a.files)),
          removed: paths.filter((p) => !(p in b.files)),
          changed: paths.filter((p) => p in a.files && p in b.files && a.files[p] !== b.files[p]),
        },
      };
    }));

  server.registerTool("read_audit", {
    title: "Read the audit log",
    description: "A tenant's audit log, newest first (who changed what, when): optionally of " +
      "one namespace or one event type (manifest.pushed, change_request.opened, …).",
    inputSchema: readAuditInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const tenant = tenantOf(ctx, args.tenant);
      const page = await client.listAudit({
        tenant,
        ...(args.namespace === undefined ? {} : { namespace: args.namespace }),
        ...(args.type === undefined ? {} : { type: args.type }),
        ...(args.limit === undefined ? {} : { limit: args.limit }),
        ...(args.after === undefined ? {} : { after: args.after }),
      });
      return { tenant, entries: page.items, next: page.next };
    }));

  server.registerTool("list_change_requests", {
    title: "List change requests",
    description: "A namespace's change requests, newest first, optionally of some statuses " +
      `(${CHANGE_STATUSES.join(", ")}).`,
    inputSchema: listChangeRequestsInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const page = await client.listChangeRequests(scope.tenant, scope.namespace, {
        ...(args.status === undefined ? {} : { status: args.status }),
        ...(args.limit === undefined ? {} : { limit: args.limit }),
        ...(args.after === undefined ? {} : { after: args.after }),
      });
      return { ...scope, change_requests: page.items, next: page.next };
    }));

  server.registerTool("get_change_request", {
    title: "Read a change request",
    description: "One change request: its status, approvals, impact, what it changes value by " +
      "value, its files and comments, and what this server's credential may do with it.",
    inputSchema: getChangeRequestInput,
    annotations: READ_ONLY,
  }, (args) =>
    runTool(async () => {
      const scope = scopeOf(ctx, args);
      const d = await client.getChangeRequest(scope.tenant, scope.namespace, args.id);
      return {
        ...scope,
        ...d,
        lines: d.changes === null ? null : valueChangeLines(d.changes),
      };
    }));
}
