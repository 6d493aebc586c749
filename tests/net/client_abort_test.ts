import { assert } from "../assert.ts";
import { isClientAbort } from "../../lib/net/client_abort.ts";

Deno.test("a body read cut off by the client counts as a client abort, a server fault does not", () => {
  assert(
    isClientAbort(
      new Deno.errors.BadResource("Cannot read request body as underlying resource unavailable"),
    ),
  );
  assert(isClientAbort(new Deno.errors.ConnectionReset("Connection reset by peer")));
  assert(!isClientAbort(new TypeError("x is undefined")));
  assert(!isClientAbort(new Deno.errors.BadResource("Database closed")));
  assert(!isClientAbort("a string"));
});
