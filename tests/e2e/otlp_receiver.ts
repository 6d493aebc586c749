/**
 * Test helper: a tiny OTLP/HTTP receiver on a free loopback port that keeps
 * the spans a process exports with `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`,
 * and the raw body of every export (traces, metrics and logs), so a test
 * can check that a secret appears nowhere in what was exported.
 *
 * @module
 */

/** An attribute value as OTLP/JSON writes it. */
type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
};

/** One received span, attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  scope: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** A running receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`, for `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  /** Every span received so far. */
  spans(): ReceivedSpan[];
  /** Every export received so far: its path (`/v1/traces`, `/v1/logs`, …) and raw body. */
  exports(): { path: string; body: string }[];
  /** Waits until `done(spans)` holds (default 10 s), then returns the spans. */
  waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

function flatten(attrs: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of attrs ?? []) {
    out[key] = value.stringValue ?? value.boolValue ?? value.doubleValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue));
  }
  return out;
}

/**
 * Starts a receiver.
 *
 * @example
 * ```ts ignore
 * const otlp = startOtlpReceiver();
 * // start a process with OTEL_EXPORTER_OTLP_ENDPOINT=otlp.endpoint
 * await otlp.close();
 * ```
 */
export function startOtlpReceiver(): OtlpReceiver {
  const received: ReceivedSpan[] = [];
  const raw: { path: string; body: string }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    const path = new URL(req.url).pathname;
    raw.push({ path, body });
    if (path === "/v1/traces") {
      const data = JSON.parse(body);
      for (const rs of data.resourceSpans ?? []) {
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            received.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              kind: s.kind,
              scope: ss.scope?.name ?? "",
              attributes: flatten(s.attributes),
              // deno-lint-ignore no-explicit-any
              events: (s.events ?? []).map((e: any) => ({
                name: e.name,
                attributes: flatten(e.attributes),
              })),
            });
          }
        }
      }
    }
    return new Response("{}", { headers: { "content-type": "application/json" } });
  });
  return {
    endpoint: `http://127.0.0.1:${server.addr.port}`,
    spans: () => [...received],
    exports: () => [...raw],
    async waitFor(done, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      while (!done(received)) {
        if (Date.now() > end) {
          throw new Error(
            `spans did not arrive in time; got: ${received.map((s) => s.name).join(", ")}`,
          );
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return [...received];
    },
    close: () => server.shutdown(),
  };
}
