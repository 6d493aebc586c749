/** exitCodeFor(): the one place errors become exit statuses and stderr lines. */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { exitCodeFor } from "../../lib/cli/exit.ts";
import {
  CfgtoolError,
  InvalidRequestError,
  KvOpenError,
  UnauthorizedError,
  UsageError,
} from "../../lib/errors.ts";

function run(err: unknown): { code: number; text: string } {
  const lines: string[] = [];
  const code = exitCodeFor(err, (l) => lines.push(l));
  return { code, text: lines.join("\n") };
}

Deno.test("an unknown credential is followed by what to check: server, rekey, CFGTOOL_KV", () => {
  const { code, text } = run(
    new UnauthorizedError("http://127.0.0.1:8080 rejected the token svc_read_AbCdE…: x", {
      details: { reason: "Unknown credential" },
    }),
  );
  assertEquals(code, 1);
  assert(text.startsWith("error: http://127.0.0.1:8080 rejected the token"), text);
  assertStringIncludes(text, "check:\n  - --server / CFGTOOL_SERVER names the server");
  assertStringIncludes(text, "cfgtool admin rekey");
  assertStringIncludes(text, "the same --kv or CFGTOOL_KV");
});

Deno.test("a revoked or expired token is told to get a new one", () => {
  const revoked = run(new UnauthorizedError("x", { details: { reason: "Token is revoked" } }));
  assertStringIncludes(revoked.text, "the token was revoked");
  const expired = run(new UnauthorizedError("x", { details: { reason: "Token has expired" } }));
  assertStringIncludes(expired.text, "passed its expires_at");
});

Deno.test("a TLS failure points at serve's TLS options, http:// and DENO_CERT; other errors get no advice", () => {
  const tls = run(
    new CfgtoolError("unreachable", "cannot reach https://h: TLS handshake failed", {
      details: { reason: "tls" },
    }),
  );
  assertStringIncludes(tls.text, "`cfgtool serve --tls-cert … --tls-key …`");
  assertStringIncludes(tls.text, "a plain `cfgtool serve` speaks http://");
  assertStringIncludes(tls.text, "DENO_CERT");
  assertEquals(
    run(new CfgtoolError("conflict", "Tenant acme exists")).text,
    "error: Tenant acme exists",
  );
});

Deno.test("a KV Connect URL without its access token is a usage error (exit 2)", () => {
  assertEquals(run(new KvOpenError("kv_access_token_missing", "set it")).code, 2);
  assertEquals(run(new KvOpenError("kv_unavailable", "down")).code, 1);
});

Deno.test("a 400 invalid_request from the server is a failed operation (exit 1) with its message", () => {
  const { code, text } = run(
    new InvalidRequestError("Cannot use limit 0: it must be a positive integer", {
      details: { field: "limit" },
    }),
  );
  assertEquals(code, 1);
  assertEquals(text, "error: Cannot use limit 0: it must be a positive integer");
  // the same code without the class (an event stream's plain CfgtoolError) exits 1 too
  assertEquals(
    run(new CfgtoolError("invalid_request", "bad", { status: 400 })).code,
    1,
  );
});

Deno.test("a mistake on the command line (UsageError) exits 2, though its code is invalid_request", () => {
  const { code, text } = run(new UsageError("--context needs key=value"));
  assertEquals(code, 2);
  assertEquals(text, "error: --context needs key=value");
});
