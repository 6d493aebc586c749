import { assert, assertEquals } from "../assert.ts";
import { bulkBody, etagMatches, ofrepContext, refetchVersion } from "../../lib/http/ofrep.ts";
import { InvalidContextError } from "../../lib/http/context_input.ts";
import { OfrepError } from "../../lib/http/ofrep_errors.ts";
import type { EvaluationResult } from "../../lib/flags/evaluate.ts";
import { assertThrows } from "../assert.ts";

const result = (over: Partial<EvaluationResult>): EvaluationResult =>
  Object.freeze({
    flag: "a",
    value: true,
    variation: "on",
    reason: "DEFAULT",
    version: 1,
    ...over,
  }) as EvaluationResult;

Deno.test("bulkBody() ETag depends on the results, not on the manifest version", () => {
  const a = bulkBody({ a: result({}), b: result({ flag: "b", value: "x", variation: "x" }) }, null);
  const sameResultsNewVersion = bulkBody({
    a: result({ version: 9 }),
    b: result({ flag: "b", value: "x", variation: "x", version: 9 }),
  }, null);
  assertEquals(a.etag, sameResultsNewVersion.etag);
  assertEquals(a.body, sameResultsNewVersion.body);
  const changed = bulkBody({
    a: result({ value: false, variation: "off" }),
    b: result({ flag: "b", value: "x", variation: "x" }),
  }, null);
  assert(changed.etag !== a.etag);
  const reordered = bulkBody({
    b: result({ flag: "b", value: "x", variation: "x" }),
    a: result({}),
  }, null);
  assert(reordered.etag !== a.etag, "order is part of the body");
  const withStream = bulkBody({
    a: result({}),
    b: result({ flag: "b", value: "x", variation: "x" }),
  }, "http://x/s?token=t");
  assert(withStream.etag !== a.etag);
  assertEquals(JSON.parse(withStream.body).eventStreams, [{
    type: "sse",
    url: "http://x/s?token=t",
  }]);
  assertEquals(JSON.parse(a.body), {
    flags: [
      { key: "a", value: true, reason: "DEFAULT", variant: "on", metadata: {} },
      { key: "b", value: "x", reason: "DEFAULT", variant: "x", metadata: {} },
    ],
  });
});

Deno.test("bulkBody() renders ERROR results as OFREP failures and rule indexes as metadata", () => {
  const { body } = bulkBody({
    a: result({ reason: "TARGETING_MATCH", rule_index: 2 }),
    z: result({
      flag: "z",
      value: null,
      variation: null,
      reason: "ERROR",
      error_code: "TYPE_MISMATCH",
      error_message: "bad",
    }),
  }, null);
  assertEquals(JSON.parse(body).flags, [
    { key: "a", value: true, reason: "TARGETING_MATCH", variant: "on", metadata: { ruleIndex: 2 } },
    { key: "z", errorCode: "GENERAL", errorDetails: "bad" },
  ]);
});

Deno.test("bulkBody() ETags are stable across releases, so pollers keep their 304s", () => {
  const results = { a: result({}), b: result({ flag: "b", value: "x", variation: "x" }) };
  assertEquals(bulkBody(results, null).etag, '"f96114be857bba77"');
  assertEquals(bulkBody(results, "http://x/s?token=t").etag, '"dcfe9210ee3323c3"');
  assertEquals(bulkBody({}, null).etag, '"ebb6c228d9aaf7d3"');
});

Deno.test("etagMatches() compares weakly and understands lists and *", () => {
  assert(etagMatches('"ab"', '"ab"'));
  assert(etagMatches('W/"ab"', '"ab"'));
  assert(etagMatches('"x", "ab"', '"ab"'));
  assert(etagMatches("*", '"ab"'));
  assert(!etagMatches('"abc"', '"ab"'));
  assert(!etagMatches(undefined, '"ab"'));
});

Deno.test("refetchVersion() reads flagConfigEtag and sseEtag", () => {
  assertEquals(refetchVersion(new URL('http://x/?flagConfigEtag="v12-sha256:ab"')), 12);
  assertEquals(refetchVersion(new URL("http://x/?sseEtag=v3-x")), 3);
  assertEquals(refetchVersion(new URL("http://x/?flagConfigEtag=nonsense")), undefined);
  assertEquals(refetchVersion(new URL("http://x/")), undefined);
});

Deno.test("ofrepContext() maps targetingKey to targeting_key", () => {
  assertEquals(ofrepContext({ targetingKey: "u1", targeting_key: "old" }), {
    targetingKey: "u1",
    targeting_key: "u1",
  });
  const ctx = { a: 1 };
  assertEquals(ofrepContext(ctx), ctx);
  assertThrows(() => ofrepContext({ targetingKey: 5 }), InvalidContextError);
  const err = assertThrows(() => ofrepContext({ targetingKey: "" }), OfrepError);
  assertEquals(err.errorCode, "TARGETING_KEY_MISSING");
});
