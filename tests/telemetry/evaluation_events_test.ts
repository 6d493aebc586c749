import { assertEquals } from "../assert.ts";
import { MAX_EVENTS, recordEvaluationEvents } from "../../lib/telemetry/evaluation_events.ts";
import { recordingSpan, withActiveSpan } from "./recording_span.ts";

const scope = { tenant: "acme", namespace: "web", environment: "prod" };

Deno.test("each evaluation is a feature_flag.evaluation event with OpenFeature's attributes", () => {
  const rec = recordingSpan();
  const added = withActiveSpan(rec.span, () =>
    recordEvaluationEvents([
      { flag: "theme", variation: "dark", reason: "TARGETING_MATCH", version: 4 },
    ], { ...scope, contextId: "user-1" }));
  assertEquals(added, 1);
  assertEquals(rec.events, [{
    name: "feature_flag.evaluation",
    attributes: {
      "feature_flag.key": "theme",
      "feature_flag.result.variant": "dark",
      "feature_flag.result.reason": "targeting_match",
      "feature_flag.provider.name": "cfgtool",
      "feature_flag.set.id": "acme/web/prod",
      "feature_flag.version": "4",
      "feature_flag.context.id": "user-1",
    },
  }]);
  assertEquals(rec.attributes["cfgtool.evaluations"], 1);
});

Deno.test("an error result has error.type and error.message and no variant", () => {
  const rec = recordingSpan();
  withActiveSpan(rec.span, () =>
    recordEvaluationEvents([{
      flag: "nope",
      variation: null,
      reason: "ERROR",
      version: 1,
      error_code: "FLAG_NOT_FOUND",
      error_message: "Flag nope does not exist",
    }], scope));
  const a = rec.events[0]!.attributes;
  assertEquals([a["error.type"], a["error.message"], a["feature_flag.result.reason"]], [
    "flag_not_found",
    "Flag nope does not exist",
    "error",
  ]);
  assertEquals("feature_flag.result.variant" in a || "feature_flag.context.id" in a, false);
});

Deno.test("a bulk evaluation adds at most MAX_EVENTS events and counts them all", () => {
  const rec = recordingSpan();
  const results = Array.from({ length: MAX_EVENTS + 50 }, (_, i) => ({
    flag: `f${i}`,
    variation: "on",
    reason: "DEFAULT",
    version: 1,
  }));
  const added = withActiveSpan(rec.span, () => recordEvaluationEvents(results, scope));
  assertEquals([added, rec.events.length], [MAX_EVENTS, MAX_EVENTS]);
  assertEquals(rec.attributes["cfgtool.evaluations"], MAX_EVENTS + 50);
});

Deno.test("without a recording span nothing is built", () => {
  assertEquals(
    recordEvaluationEvents([{ flag: "a", variation: "on", reason: "DEFAULT", version: 1 }], scope),
    0,
  );
});
