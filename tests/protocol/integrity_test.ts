import { assert, assertEquals } from "../assert.ts";
import { CfgtoolError } from "../../lib/errors.ts";
import { IntegrityError } from "../../lib/protocol/integrity.ts";

Deno.test("an integrity failure is a 502 integrity_check_failed naming check, namespace and version", () => {
  const cause = new Error("inner");
  const err = new IntegrityError("closure_hash", "web", 4, "hashes differ", { cause });
  assert(err instanceof CfgtoolError);
  assertEquals([err.name, err.code, err.status], ["IntegrityError", "integrity_check_failed", 502]);
  assertEquals([err.check, err.namespace, err.version], ["closure_hash", "web", 4]);
  assertEquals(err.details, { check: "closure_hash", namespace: "web", version: 4 });
  assertEquals([err.message, err.cause], ["hashes differ", cause]);
});

Deno.test("an integrity failure before the namespace is known carries nulls", () => {
  const err = new IntegrityError("protocol", null, null, "not JSON");
  assertEquals(err.details, { check: "protocol", namespace: null, version: null });
  assertEquals(err.cause, undefined);
});
