import { assert, assertEquals } from "./assert.ts";
import { CfgtoolError, InvalidRequestError, ProblemsError, UsageError } from "../lib/errors.ts";

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

Deno.test("a ProblemsError that lists only the first problems says how many there are", () => {
  const first = [{ path: "a.toml", message: "bad" }, { path: "b.toml", message: "bad" }];
  const err = new ProblemsError(first, undefined, undefined, 5000);
  assertEquals(err.message, "5000 problems found (the first 2 are listed)");
  assertEquals(err.details, { problems: first, problem_count: 5000 });
  assertEquals(new ProblemsError(first).details, { problems: first });
});
