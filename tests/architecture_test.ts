/**
 * The one-way layering of lib/, checked on the real import graph: entry
 * files (cli.ts, server.ts, mod.ts) -> lib/cli, lib/http -> services ->
 * auth/, flags/, closure/ -> store/ -> leaves (the top-level lib/*.ts
 * files), with lib/protocol/ shared by the server and the SDK. Each rule is
 * one test that lists every import breaking it; each rule also has a test
 * that feeds it a small made-up graph with a violation, so no rule can pass
 * by checking nothing.
 */
import { assert, assertEquals } from "./assert.ts";
import { ENTRY_FILES, graphOf, type ImportGraph, readRepoGraph } from "./architecture/graph.ts";
import { kvCalls } from "./architecture/kv_calls.ts";
import { credentialReads } from "./architecture/credential_reads.ts";
import {
  folderLoops,
  formatViolations,
  importsInto,
  importsOutside,
  LEAVES,
  libImportsOfEntries,
  loopsInFolder,
  reachInto,
  valueImportsOf,
  valueLoopsInLib,
  type Violation,
} from "./architecture/rules.ts";

const ROOT = new URL("../", import.meta.url);

/** The module that decides what a principal may do: called only by services (and auth/ itself). */
const AUTHORIZATION = "lib/auth/permissions.ts";

/** The one module that reads a request's credential. */
const AUTHENTICATION = "lib/http/authn.ts";

/** The folders the SDK must never reach, even through other folders. */
const SERVER_SIDE = [
  "store",
  "auth",
  "http",
  "events",
  "cli",
  "workers",
  "runtime",
  "server",
  "services",
  "metrics",
];

/** The rules, each a check over an import graph. */
const rules = {
  noEntryImports: (g: ImportGraph) => libImportsOfEntries(g, ENTRY_FILES),
  noFolderLoops: folderLoops,
  noValueLoops: valueLoopsInLib,
  noHttpLoops: (g: ImportGraph) => loopsInFolder(g, "http"),
  leavesImportLeaves: (g: ImportGraph) => importsOutside(g, [LEAVES], []),
  protocolImportsLeaves: (g: ImportGraph) => importsOutside(g, ["protocol"], []),
  storeImportsBelow: (g: ImportGraph) => importsOutside(g, ["store"], ["protocol"]),
  sdkImports: (g: ImportGraph) => importsOutside(g, ["client"], ["protocol", "flags", "closure"]),
  sdkReach: (g: ImportGraph) => reachInto(g, "client", SERVER_SIDE),
  flagsAndClosureImports: (g: ImportGraph) => importsOutside(g, ["flags", "closure"], ["protocol"]),
  observabilityImportsLeaves: (g: ImportGraph) => importsOutside(g, ["metrics", "telemetry"], []),
  mcpIsAClient: (g: ImportGraph) =>
    importsOutside(g, ["mcp"], ["client", "flags", "closure", "protocol"]),
  webImportsNoStore: (g: ImportGraph) => [
    ...importsInto(g, "http", ["store"]),
    ...importsInto(g, "console", ["store"]),
  ],
  authorizeOnlyInServices: (g: ImportGraph) =>
    valueImportsOf(g, AUTHORIZATION, ["services", "auth"]),
  cliUsesSdk: (g: ImportGraph) =>
    importsInto(
      g,
      "cli",
      ["http", "events", "server", "relay"],
      // the two commands that run a service rather than call one
      (e) =>
        (e.from === "lib/cli/serve.ts" && e.to.startsWith("lib/server/")) ||
        (e.from === "lib/cli/relay.ts" && e.to.startsWith("lib/relay/")),
    ),
};

let repoGraph: Promise<ImportGraph> | undefined;
/** The repository's import graph, read once for all tests. */
const repo = (): Promise<ImportGraph> => (repoGraph ??= readRepoGraph(ROOT));

/** Fails with every violation, one `from -> to` a line. */
function assertNone(violations: readonly Violation[]): void {
  if (violations.length === 0) return;
  throw new Error(
    `${violations.length} import(s) break the rule:\n  ${
      formatViolations(violations).join("\n  ")
    }`,
  );
}

/** The `from -> to` of each violation. */
const pairs = (violations: readonly Violation[]) => violations.map((v) => `${v.from} -> ${v.to}`);

/** A made-up graph from file texts. */
const made = (files: Record<string, string>): ImportGraph => graphOf(Object.entries(files));

// The real tree.

Deno.test("the import graph of lib/ and the entry files is read in full", async () => {
  const graph = await repo();
  assert(graph.files.length > 150, `only ${graph.files.length} files read`);
  assert(graph.edges.length > 500, `only ${graph.edges.length} imports read`);
  const edges = new Set(graph.edges.map((e) => `${e.from} -> ${e.to}`));
  for (const known of ["mod.ts -> lib/client/api.ts", "lib/cli/program.ts -> lib/version.ts"]) {
    assert(edges.has(known), `${known} not found: is the import reader broken?`);
  }
  assert(graph.edges.some((e) => e.typeOnly), "no type-only import found");
  assert(graph.edges.some((e) => e.kind === "dynamic"), "no dynamic import found");
});

Deno.test("nothing in lib/ imports cli.ts, server.ts or mod.ts", async () => {
  assertNone(rules.noEntryImports(await repo()));
});

Deno.test("no lib folder imports another in a loop", async () => {
  assertNone(rules.noFolderLoops(await repo()));
});

Deno.test("no lib file value-imports another in a loop", async () => {
  assertNone(rules.noValueLoops(await repo()));
});

Deno.test("no lib/http file imports another in a loop, not even for types", async () => {
  assertNone(rules.noHttpLoops(await repo()));
});

Deno.test("leaves (top-level lib/*.ts) import only other leaves", async () => {
  assertNone(rules.leavesImportLeaves(await repo()));
});

Deno.test("lib/protocol imports only itself and leaves", async () => {
  assertNone(rules.protocolImportsLeaves(await repo()));
});

Deno.test("lib/store imports only itself, lib/protocol and leaves", async () => {
  assertNone(rules.storeImportsBelow(await repo()));
});

Deno.test("the SDK (lib/client) imports only itself, protocol, flags, closure and leaves", async () => {
  assertNone(rules.sdkImports(await repo()));
});

Deno.test("nothing the SDK reaches, however indirectly, is server-side code", async () => {
  assertNone(rules.sdkReach(await repo()));
});

Deno.test("lib/flags and lib/closure import only each other, protocol and leaves", async () => {
  assertNone(rules.flagsAndClosureImports(await repo()));
});

Deno.test("lib/metrics and lib/telemetry import only each other and leaves", async () => {
  // any layer may report to them; they know none of the layers
  assertNone(rules.observabilityImportsLeaves(await repo()));
});

Deno.test("the MCP server is a client of the API: client, flags, closure, protocol and leaves", async () => {
  assertNone(rules.mcpIsAClient(await repo()));
});

Deno.test("the CLI reaches the service only through the SDK (no http/, events/, server/, relay/)", async () => {
  assertNone(rules.cliUsesSdk(await repo()));
});

Deno.test("lib/http and lib/console import nothing of lib/store (services are the one door)", async () => {
  assertNone(rules.webImportsNoStore(await repo()));
});

Deno.test("only lib/services (and lib/auth) call the permission checks", async () => {
  assertNone(rules.authorizeOnlyInServices(await repo()));
});

/** Every .ts/.tsx file under lib/, relative to the repository root. */
async function libSources(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, ROOT))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.tsx?$/.test(path)) out.push(path);
    }
  };
  await walk("lib");
  return out.sort();
}

Deno.test("only the authentication module reads the Authorization header or the session cookie", async () => {
  const found: string[] = [];
  for (const path of await libSources()) {
    if (path === AUTHENTICATION) continue;
    const source = await Deno.readTextFile(new URL(path, ROOT));
    for (const r of credentialReads(path, source)) found.push(`${r.path}:${r.line} ${r.text}`);
  }
  assertEquals(found, [], `credential reads outside ${AUTHENTICATION}:\n${found.join("\n")}`);
});

// Each rule catches a violation in a made-up graph.

Deno.test("an import of lib/store from lib/http or lib/console is reported, type-only too", () => {
  const graph = made({
    "lib/http/tokens.ts": 'import { getTokenRecord } from "../store/tokens.ts";',
    "lib/console/people.tsx": 'import type { User } from "../store/users.ts";',
    "lib/services/tokens.ts": 'import { getTokenRecord } from "../store/tokens.ts";',
  });
  assertEquals(pairs(rules.webImportsNoStore(graph)), [
    "lib/http/tokens.ts -> lib/store/tokens.ts",
    "lib/console/people.tsx -> lib/store/users.ts",
  ]);
});

Deno.test("a permission check called outside lib/services is reported; its types are not", () => {
  const graph = made({
    "lib/http/users.ts": 'import { authorize } from "../auth/permissions.ts";',
    "lib/console/flag.tsx": 'import { can } from "../auth/permissions.ts";',
    "lib/http/deps.ts": 'import type { Action } from "../auth/permissions.ts";',
    "lib/services/users.ts": 'import { authorize } from "../auth/permissions.ts";',
    "lib/auth/stream_guard.ts": 'import { can } from "./permissions.ts";',
  });
  assertEquals(pairs(rules.authorizeOnlyInServices(graph)), [
    "lib/console/flag.tsx -> lib/auth/permissions.ts",
    "lib/http/users.ts -> lib/auth/permissions.ts",
  ]);
});

Deno.test("a read of the Authorization header or the session cookie is found, one in a comment is not", () => {
  const source = [
    '// c.req.header("authorization")',
    'const a = c.req.header("authorization");',
    "const b = req.headers.get('Authorization');",
    "const c2 = getCookie(c, PLAIN_COOKIE);",
    'headers.set("authorization", `Bearer ${t}`); // setting is not reading',
  ].join("\n");
  assertEquals(credentialReads("a.ts", source).map((r) => r.line), [2, 3, 4]);
});

Deno.test("an import of an entry file from lib/ is reported, dynamic or not", () => {
  const graph = made({
    "lib/cli/serve.ts": 'const { serve } = await import("../../server.ts");',
    "lib/errors.ts": 'import type { X } from "../mod.ts";',
    "cli.ts": 'import "./server.ts";',
  });
  assertEquals(pairs(rules.noEntryImports(graph)), [
    "lib/cli/serve.ts -> server.ts",
    "lib/errors.ts -> mod.ts",
  ]);
});

Deno.test("a folder loop is reported, also when closed by a type-only import", () => {
  const graph = made({
    "lib/store/kv.ts": 'import type { NetworkError } from "../client/_network_error.ts";',
    "lib/client/api.ts": 'import { kv } from "../store/kv.ts";',
    "lib/client/_network_error.ts": 'import { x } from "../errors.ts";',
    "lib/errors.ts": "",
  });
  const found = rules.noFolderLoops(graph);
  assertEquals(pairs(found), [
    "lib/client/api.ts -> lib/store/kv.ts",
    "lib/store/kv.ts -> lib/client/_network_error.ts",
  ]);
  assertEquals(found[1]!.why, "closes the folder loop store -> client -> store");
  assert(found[1]!.typeOnly);
});

Deno.test("a value-import loop between lib files is reported, a type-only one is not", () => {
  const graph = made({
    "lib/flags/a.ts": 'import { b } from "../store/b.ts";',
    "lib/store/b.ts": 'export { a } from "../flags/a.ts";',
    "lib/flags/c.ts": 'import type { D } from "./d.ts";',
    "lib/flags/d.ts": 'import { type C } from "./c.ts";',
  });
  const found = rules.noValueLoops(graph);
  assertEquals(pairs(found), [
    "lib/flags/a.ts -> lib/store/b.ts",
    "lib/store/b.ts -> lib/flags/a.ts",
  ]);
  assertEquals(found[0]!.why, "closes the loop lib/flags/a.ts -> lib/store/b.ts -> lib/flags/a.ts");
});

Deno.test("a loop inside lib/http is reported even when only types close it", () => {
  const graph = made({
    "lib/http/app.ts": 'import { routes } from "./routes.ts";',
    "lib/http/routes.ts": 'import type { App } from "./app.ts";',
    "lib/flags/c.ts": 'import type { D } from "./d.ts";',
    "lib/flags/d.ts": 'import type { C } from "./c.ts";',
  });
  assertEquals(pairs(rules.noHttpLoops(graph)), [
    "lib/http/app.ts -> lib/http/routes.ts",
    "lib/http/routes.ts -> lib/http/app.ts",
  ]);
});

Deno.test("a leaf importing a lib folder is reported", () => {
  const graph = made({
    "lib/errors.ts": 'import { codes } from "./protocol/error_codes.ts";\nimport "npm:hono";',
    "lib/bytes.ts": 'import { E } from "./errors.ts";\nimport { Buffer } from "node:buffer";',
  });
  const found = rules.leavesImportLeaves(graph);
  assertEquals(pairs(found), ["lib/errors.ts -> lib/protocol/error_codes.ts"]);
  assertEquals(found[0]!.why, "a leaf may import only leaves");
});

Deno.test("lib/protocol importing anything but itself and leaves is reported", () => {
  const graph = made({
    "lib/protocol/events.ts": 'import { h } from "../closure/hash.ts";\nimport "./etag.ts";',
    "lib/protocol/etag.ts": 'import { toHex } from "../bytes.ts";',
  });
  assertEquals(pairs(rules.protocolImportsLeaves(graph)), [
    "lib/protocol/events.ts -> lib/closure/hash.ts",
  ]);
});

Deno.test("lib/store importing anything above it is reported", () => {
  const graph = made({
    "lib/store/kv.ts": 'import { isNetworkError } from "../client/_network_error.ts";',
    "lib/store/versions.ts":
      'import { closureHash } from "../closure/hash.ts";\nimport { E } from "../protocol/e.ts";',
  });
  assertEquals(pairs(rules.storeImportsBelow(graph)), [
    "lib/store/kv.ts -> lib/client/_network_error.ts",
    "lib/store/versions.ts -> lib/closure/hash.ts",
  ]);
});

Deno.test("lib/metrics or lib/telemetry importing a layer is reported", () => {
  const graph = made({
    "lib/metrics/service_metrics.ts":
      'import { E } from "../errors.ts";\nimport type { R } from "../runtime/runtime.ts";',
    "lib/telemetry/instrumented_kv.ts":
      'import { M } from "../metrics/service_metrics.ts";\nimport { h } from "../store/kv.ts";',
  });
  assertEquals(pairs(rules.observabilityImportsLeaves(graph)), [
    "lib/metrics/service_metrics.ts -> lib/runtime/runtime.ts",
    "lib/telemetry/instrumented_kv.ts -> lib/store/kv.ts",
  ]);
});

Deno.test("the SDK importing server-side code directly is reported", () => {
  const graph = made({
    "lib/client/api.ts": [
      'import { kv } from "../store/kv.ts";',
      'import { m } from "../flags/model.ts";',
      'import { h } from "../closure/hash.ts";',
      'import type { R } from "../protocol/responses.ts";',
      'import { c } from "../cli/exit.ts";',
    ].join("\n"),
  });
  assertEquals(pairs(rules.sdkImports(graph)), [
    "lib/client/api.ts -> lib/store/kv.ts",
    "lib/client/api.ts -> lib/cli/exit.ts",
  ]);
});

Deno.test("server-side code the SDK reaches through flags/ is reported with its chain", () => {
  const graph = made({
    "lib/client/flag_client.ts": 'import { cache } from "../flags/model_cache.ts";',
    "lib/flags/model_cache.ts": [
      'import type { HeadWatcher } from "../store/head_watcher.ts";',
      'import { pool } from "../workers/manifest_workers.ts";',
    ].join("\n"),
    "lib/workers/manifest_workers.ts": 'import { kv } from "../store/kv.ts";',
  });
  const found = rules.sdkReach(graph);
  assertEquals(pairs(found), [
    "lib/flags/model_cache.ts -> lib/store/head_watcher.ts",
    "lib/flags/model_cache.ts -> lib/workers/manifest_workers.ts",
  ]);
  assertEquals(found[0]!.why, "reached by lib/client/flag_client.ts -> lib/flags/model_cache.ts");
});

Deno.test("lib/flags or lib/closure importing store/, workers/ or the SDK is reported", () => {
  const graph = made({
    "lib/flags/model_cache.ts": 'import { v } from "../store/versions.ts";',
    "lib/closure/archive.ts": 'import { m } from "../flags/model.ts";\nimport "../client/api.ts";',
    "lib/closure/hash.ts": 'import { toHex } from "../bytes.ts";\nimport "../protocol/etag.ts";',
  });
  assertEquals(pairs(rules.flagsAndClosureImports(graph)), [
    "lib/closure/archive.ts -> lib/client/api.ts",
    "lib/flags/model_cache.ts -> lib/store/versions.ts",
  ]);
});

Deno.test("the CLI importing http/, events/, server/ or relay/ is reported, bar serve and relay", () => {
  const graph = made({
    "lib/cli/serve.ts": 'const { start } = await import("../server/start.ts");',
    "lib/cli/watch.ts": 'import { hub } from "../events/hub.ts";',
    "lib/cli/admin.ts": 'import { app } from "../http/app.ts";\nimport "../server/start.ts";',
    "lib/cli/pull.ts": 'import { ServiceClient } from "../client/api.ts";',
    "lib/cli/relay.ts": 'const { relay } = await import("../relay/serve.ts");',
    "lib/cli/push.ts": 'import { Holdings } from "../relay/holdings.ts";',
  });
  assertEquals(pairs(rules.cliUsesSdk(graph)), [
    "lib/cli/admin.ts -> lib/http/app.ts",
    "lib/cli/admin.ts -> lib/server/start.ts",
    "lib/cli/push.ts -> lib/relay/holdings.ts",
    "lib/cli/watch.ts -> lib/events/hub.ts",
  ]);
});

/**
 * Files outside lib/store that may call the KV: the measuring wrapper of
 * the handle, which forwards every call and reads or writes nothing itself.
 */
const KV_WRAPPERS = new Set(["lib/telemetry/instrumented_kv.ts"]);

Deno.test("only lib/store touches the KV", async () => {
  const found: string[] = [];
  const root = new URL("../", import.meta.url);
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) {
        if (path !== "lib/store") await walk(path);
      } else if (/\.tsx?$/.test(path) && !KV_WRAPPERS.has(path)) {
        const source = await Deno.readTextFile(new URL(path, root));
        for (const c of kvCalls(path, source)) found.push(`${c.path}:${c.line} kv.${c.method}`);
      }
    }
  };
  await walk("lib");
  assertEquals(found, [], `KV calls outside lib/store:\n${found.join("\n")}`);
});

Deno.test("a KV call in code is found, one in a comment or doc example is not", () => {
  const source = [
    "/**",
    " * const kv = await Deno.openKv(); await kv.get(['x']);",
    " */",
    "// kv.set(['y'], 1)",
    "const a = await deps.kv.get<string>(key);",
    "const op = kv.atomic();",
    "const url = 'http://x'; // kv.list()",
  ].join("\n");
  assertEquals(kvCalls("a.ts", source).map((c) => `${c.line}:${c.method}`), ["5:get", "6:atomic"]);
});
