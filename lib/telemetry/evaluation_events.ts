/**
 * Flag evaluations as trace events, after OpenTelemetry's semantic
 * conventions for feature flags (the ones OpenFeature's SDKs emit): one
 * `feature_flag.evaluation` event per evaluated flag on the active span
 * (the request's), with
 *
 * | attribute | value |
 * |---|---|
 * | `feature_flag.key` | the flag key |
 * | `feature_flag.result.variant` | the variation served (absent on errors) |
 * | `feature_flag.result.reason` | the reason, lower case (`targeting_match`, `split`, `default`, `disabled`, `error`) |
 * | `feature_flag.provider.name` | `cfgtool` |
 * | `feature_flag.set.id` | `<tenant>/<namespace>/<environment>` |
 * | `feature_flag.version` | the manifest version evaluated |
 * | `feature_flag.context.id` | the context's targeting key, when it has one |
 * | `error.type`, `error.message` | on errors: the error code in lower case (`flag_not_found`), the message |
 *
 * Nothing is built when no span is recording (tracing off). A bulk
 * evaluation adds at most {@linkcode MAX_EVENTS} events; the span's
 * `cfgtool.evaluations` attribute has the full count.
 *
 * @module
 */
import { type Attributes, trace } from "@opentelemetry/api";

/** Most evaluation events added to one span. */
export const MAX_EVENTS = 128;

/** What an event is made from: the engine's result (lib/flags/evaluate.ts). */
export interface EvaluatedFlag {
  flag: string;
  variation: string | null;
  reason: string;
  version: number;
  error_code?: string;
  error_message?: string;
}

/** Where the evaluations happened. */
export interface EvaluationScope {
  tenant: string;
  namespace: string;
  environment: string;
  /** The context's targeting key, if any. */
  contextId?: string | undefined;
}

/**
 * Adds a `feature_flag.evaluation` event per result to the active span.
 *
 * @param results the evaluated flags (a list, or a bulk answer by flag key)
 * @param scope the triple and the context id
 * @returns how many events were added (0 when no span records)
 *
 * @example
 * ```ts
 * import { recordEvaluationEvents } from "./evaluation_events.ts";
 * const r = { flag: "theme", variation: "dark", reason: "TARGETING_MATCH", version: 3 };
 * // without a recording span (tracing off) nothing is built
 * const added = recordEvaluationEvents([r], { tenant: "acme", namespace: "web", environment: "prod" });
 * if (added !== 0) throw new Error();
 * ```
 */
export function recordEvaluationEvents(
  results: Iterable<EvaluatedFlag> | Readonly<Record<string, EvaluatedFlag>>,
  scope: EvaluationScope,
): number {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return 0;
  const list: Iterable<EvaluatedFlag> = Symbol.iterator in results
    ? results as Iterable<EvaluatedFlag>
    : Object.values(results);
  const setId = `${scope.tenant}/${scope.namespace}/${scope.environment}`;
  let added = 0;
  let total = 0;
  for (const r of list) {
    total++;
    if (added >= MAX_EVENTS) continue;
    const attributes: Attributes = {
      "feature_flag.key": r.flag,
      "feature_flag.result.reason": r.reason.toLowerCase(),
      "feature_flag.provider.name": "cfgtool",
      "feature_flag.set.id": setId,
      "feature_flag.version": String(r.version),
    };
    if (r.variation !== null) attributes["feature_flag.result.variant"] = r.variation;
    if (scope.contextId !== undefined) attributes["feature_flag.context.id"] = scope.contextId;
    if (r.error_code !== undefined) attributes["error.type"] = r.error_code.toLowerCase();
    if (r.error_message !== undefined) attributes["error.message"] = r.error_message;
    span.addEvent("feature_flag.evaluation", attributes);
    added++;
  }
  span.setAttribute("cfgtool.evaluations", total);
  return added;
}
