/**
 * cfgtool as a library: open a configuration workspace and resolve its
 * variables, validate flag manifests, compute closure hashes and archives,
 * and talk to a cfgtool service.
 *
 * @example Resolve a variable of a workspace
 * ```ts ignore
 * import { openWorkspace } from "@cfgtool/cfgtool";
 *
 * const ws = await openWorkspace("./examples/notification-workspace");
 * const { value_key, value } = await ws.resolveVariable("notification-delivery-policy", {
 *   account: { plan: "enterprise" },
 *   incident: { active: true },
 *   notification: { kind: "incident_update" },
 * });
 * console.log(value_key, value, ws.sourceFingerprint());
 * ```
 *
 * @module
 */

// Workspace tool (docs/workspace.md)
export { openWorkspace, type Workspace } from "./lib/workspace/open.ts";
export type { Resolution } from "./lib/workspace/model.ts";
export { type LintReport, lintWorkspace, type WorkspaceCounts } from "./lib/workspace/lint.ts";
export { type InitOptions, type InitResult, initWorkspace } from "./lib/workspace/init.ts";
export { parseContextArgs, parseContextLiteral } from "./lib/workspace/context_args.ts";
export { workspaceFingerprint } from "./lib/workspace/fingerprint.ts";

// Shared predicate engine
export {
  type Context,
  type Operator,
  OPERATORS,
  type Predicate,
  validatePredicate,
} from "./lib/conditions.ts";

// Closure hash and archives
export { closureHash, type FileSet } from "./lib/closure/hash.ts";
export { packArchive, unpackArchive } from "./lib/closure/archive.ts";

// Flag manifests
export type { Flag, Manifest, Rule, Segment } from "./lib/flags/model.ts";
export { parseManifest, validateManifest } from "./lib/flags/validate.ts";
export { readManifestDir, writeManifestDir } from "./lib/flags/files.ts";

// Flag evaluation engine (the server's, the SDK's and `cfgtool flags eval`'s)
export {
  type CompiledModel,
  compileManifest,
  evaluateAll,
  evaluateFlag,
  type EvaluationErrorCode,
  type EvaluationResult,
  flagType,
  type Reason,
} from "./lib/flags/evaluate.ts";
export { bucketOf } from "./lib/flags/bucket.ts";

// Service client
export { ServiceClient } from "./lib/client/api.ts";

// Errors
export {
  CfgtoolError,
  formatProblem,
  NotFoundError,
  type Problem,
  ProblemsError,
  UsageError,
} from "./lib/errors.ts";

// Client SDK (docs/sdk.md): verified closures pushed over the event stream, local evaluation
export {
  type ChangeDelivery,
  type ChangeEvent,
  FlagClient,
  type FlagClientOptions,
  type NamespaceStatus,
  type NamespaceSubscriptionSpec,
  type RefreshError,
} from "./lib/client/flag_client.ts";
export { ClosureState, type IntegrityCheck, IntegrityError } from "./lib/client/closure_state.ts";
export { WatchAgent, type WatchAgentOptions, type WatchStatus } from "./lib/client/watch_agent.ts";
export { CfgtoolProvider, type CfgtoolProviderOptions } from "./lib/client/openfeature_provider.ts";
