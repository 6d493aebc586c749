import { assert } from "../assert.ts";
import { isClientAbort } from "../../lib/net/client_abort.ts";

Deno.test("a body read cut off by the client counts as a client abort, a server fault does not", () => {
  const req = new Request("http://x/", { method: "POST", body: "x" });
  assert(
    isClientAbort(
      new Deno.errors.BadResource("Cannot read request body as underlying resource unavailable"),
      req,
    ),
  );
  assert(isClientAbort(new Deno.errors.ConnectionReset("Connection reset by peer"), req));
  assert(!isClientAbort(new TypeError("x is undefined"), req));
  assert(!isClientAbort(new Deno.errors.BadResource("Database closed"), req));
  assert(!isClientAbort("a string", req));
});

Deno.test("any error of a request whose signal aborted counts as a client abort", () => {
  const ac = new AbortController();
  const req = new Request("http://x/", { signal: ac.signal });
  ac.abort();
  assert(isClientAbort(new Error("whatever"), req));
});
