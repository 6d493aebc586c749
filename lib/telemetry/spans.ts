/**
 * Trace spans through the OpenTelemetry API. Deno's built-in exporter
 * (`OTEL_DENO=true`) registers the global tracer provider, so these spans
 * nest under the request span Deno makes for each HTTP request and go
 * wherever `OTEL_EXPORTER_OTLP_ENDPOINT` points. Without it the API's no-op
 * tracer makes them cost next to nothing.
 *
 * Span names: `cfgtool.service.<operation>` for a service call
 * (lib/services/), `cfgtool.kv.<operation>` for a store call.
 *
 * @module
 */
import { type Attributes, type Span, SpanStatusCode, trace } from "@opentelemetry/api";

const tracer = trace.getTracer("cfgtool");

/**
 * Runs `fn` inside a new active span named `name`: spans started within it
 * (a KV call) become its children. A thrown error marks the span as failed
 * (with the error's `code` when it has one) and is rethrown.
 *
 * @param name the span's name (`cfgtool.service.push_manifest`)
 * @param attributes attributes known at the start
 * @param fn the work; it may add attributes to the span
 * @returns what `fn` returns
 *
 * @example
 * ```ts
 * import { withSpan } from "./spans.ts";
 * const n = await withSpan("cfgtool.service.example", { "cfgtool.tenant": "acme" }, () =>
 *   Promise.resolve(42));
 * if (n !== 42) throw new Error();
 * ```
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      const code = (err as { code?: unknown })?.code;
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: typeof code === "string" ? code : (err as Error)?.name ?? "error",
      });
      throw err;
    } finally {
      span.end();
    }
  });
}
