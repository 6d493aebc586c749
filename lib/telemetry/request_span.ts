/**
 * The span Deno makes for each HTTP request (with `OTEL_DENO=true`, also
 * for connections served through lib/net/bounded_server.ts), completed
 * with what only the app knows: its name becomes `<METHOD> <route>` and
 * `http.route` the matched route pattern, as OpenTelemetry's HTTP
 * conventions ask. The query never reaches a trace: Deno records
 * `url.full` and `url.query` as the client sent them, and queries carry
 * credentials (the OFREP event stream's `token`, the one-time `code` of a
 * console link or an OIDC callback, a device sign-in's `user_code`, under
 * any spelling the client chooses, such as `tok%65n`), so both are
 * overwritten with the query left out: `url.full` keeps the origin and
 * path, `url.query` is empty (`url.path` and `http.route` say which page
 * it was). Deno sets no other attribute holding the URL (`http.url` and
 * `http.target` are not used).
 *
 * @module
 */
import { type Span, trace } from "@opentelemetry/api";

/**
 * The request span, when tracing records one.
 *
 * @returns the active span if it records, else undefined
 *
 * @example
 * ```ts
 * import { recordingSpan } from "./request_span.ts";
 * if (recordingSpan() !== undefined) throw new Error("no tracing in this test");
 * ```
 */
export function recordingSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span !== undefined && span.isRecording() ? span : undefined;
}

/**
 * Names the request span after the matched route and drops the query from
 * the URL the span records: `url.full` becomes the URL up to its `?` and
 * `url.query` the empty string, whatever the query holds. A URL without a
 * query is left as Deno recorded it.
 *
 * @param span the request span
 * @param method the request method
 * @param route the matched route pattern
 * @param url the request URL
 *
 * @example
 * ```ts
 * import { completeRequestSpan } from "./request_span.ts";
 * const seen: Record<string, unknown> = {};
 * const span = {
 *   updateName: (n: string) => seen.name = n,
 *   setAttribute: (k: string, v: unknown) => seen[k] = v,
 * };
 * completeRequestSpan(span as never, "GET", "/auth/operator", "http://x/auth/operator?code=one-time");
 * if (seen.name !== "GET /auth/operator" || seen["url.query"] !== "") throw new Error();
 * if (seen["url.full"] !== "http://x/auth/operator") throw new Error();
 * ```
 */
export function completeRequestSpan(span: Span, method: string, route: string, url: string): void {
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
  const end = url.search(/[?#]/);
  if (end === -1) return;
  span.setAttribute("url.full", url.slice(0, end));
  span.setAttribute("url.query", "");
}
