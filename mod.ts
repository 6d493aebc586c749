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
export { type OpenOptions, openWorkspace, type Workspace } from "./lib/workspace/open.ts";
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
  type PredicateOptions,
  type PredicateProblem,
  type Scalar,
  validatePredicate,
} from "./lib/flags/conditions.ts";

// Closure hash and archives
export { closureHash, type FileSet } from "./lib/closure/hash.ts";
export { packArchive, unpackArchive, type UnpackLimits } from "./lib/closure/archive.ts";

// Flag manifests
export {
  type Environment,
  type EnvironmentOverride,
  type Flag,
  FLAG_TYPES,
  type FlagType,
  type JsonValue,
  type Manifest,
  type NamespaceInfo as ManifestNamespace,
  type RolloutEntry,
  type RolloutRule,
  type Rule,
  type RuleBase,
  type Segment,
  type VariationRule,
  type VariationValue,
} from "./lib/flags/model.ts";
export {
  parseManifest,
  validateManifest,
  type ValidateOptions,
  type ValidationResult,
} from "./lib/flags/validate.ts";
export {
  type ManifestFiles,
  readManifestDir,
  writeManifestDir,
  type WriteOptions,
} from "./lib/flags/files.ts";

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

// Service client (docs/api.md) and the bodies it sends and reads (lib/protocol/)
export {
  type ManifestArchive,
  requestIdOf,
  ServiceClient,
  type ServiceClientOptions,
  type UploadFiles,
} from "./lib/client/api.ts";
export type {
  AuditEntryInfo,
  EnvironmentSettings,
  IssuedToken,
  LintResult,
  ManifestJson,
  NamespaceHead,
  NamespaceInfo,
  Page,
  PrincipalType,
  PutResult,
  TenantInfo,
  TokenInfo,
  TokenStatus,
  TokenType,
  VersionInfo,
} from "./lib/protocol/responses.ts";
export type {
  AuditQuery,
  CreateNamespaceInput,
  CreateTenantInput,
  CreateTokenInput,
  RollbackInput,
  RotateTokenInput,
  TokenQuery,
} from "./lib/protocol/requests.ts";

// Errors
export {
  CfgtoolError,
  formatProblem,
  InvalidRequestError,
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
export { ClosureState, type StateDiff } from "./lib/client/closure_state.ts";
export { type IntegrityCheck, IntegrityError } from "./lib/protocol/integrity.ts";
export type {
  ResyncEventData,
  ResyncReason,
  VersionEvent,
  VersionEventData,
  WireFileEntry,
  WireOp,
} from "./lib/protocol/events.ts";
export type {
  EmailLoginPolicy,
  LoginMethod,
  LoginPolicy,
  LoginPolicyRecord,
  OidcLoginPolicy,
  SamlLoginPolicy,
} from "./lib/protocol/login_policy.ts";
export type { BackoffOptions } from "./lib/client/backoff.ts";
export type { Logger, LogLevel } from "./lib/log.ts";
export {
  type ErrorStatus,
  WatchAgent,
  type WatchAgentOptions,
  type WatchStatus,
} from "./lib/client/watch_agent.ts";
export { CfgtoolProvider, type CfgtoolProviderOptions } from "./lib/client/openfeature_provider.ts";
