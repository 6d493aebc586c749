import { assert, assertEquals } from "./assert.ts";
import { CfgtoolError, InvalidRequestError, UsageError } from "../lib/errors.ts";

Deno.test("InvalidRequestError is 400 invalid_request with its details and cause", () => {
  const cause = new SyntaxError("Unexpected token");
  const err = new InvalidRequestError("limit must be a positive integer", {
    details: { field: "limit" },
    cause,
  });
  assert(err instanceof CfgtoolError);
  assertEquals([err.name, err.code, err.status], ["InvalidRequestError", "invalid_request", 400]);
  assertEquals(err.details, { field: "limit" });
  assertEquals(err.cause, cause);
});

Deno.test("InvalidRequestError and UsageError are different cases with the same wire code", () => {
  const server = new InvalidRequestError("ns is required");
  const cli = new UsageError("--tenant is required");
  assert(!(server instanceof UsageError), "a refused request is not a command-line mistake");
  assert(!(cli instanceof InvalidRequestError));
  assertEquals([cli.name, cli.code, cli.status], ["UsageError", "invalid_request", 400]);
  assertEquals([server.code, server.status], [cli.code, cli.status]);
});
