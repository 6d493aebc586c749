/**
 * Test helper: a span that records what is done to it, made active through
 * a synchronous context manager registered for the duration of one call,
 * so code that reads `trace.getActiveSpan()` can be tested without an
 * OpenTelemetry SDK.
 *
 * @module
 */
import {
  type Context,
  context,
  type ContextManager,
  ROOT_CONTEXT,
  type Span,
  trace,
} from "@opentelemetry/api";

/** What a {@linkcode RecordingSpan} saw. */
export interface RecordingSpan {
  span: Span;
  name: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** A new recording span. */
export function recordingSpan(): RecordingSpan {
  const rec: RecordingSpan = {
    span: undefined as unknown as Span,
    name: "",
    attributes: {},
    events: [],
  };
  const span = {
    spanContext: () => ({ traceId: "1".repeat(32), spanId: "2".repeat(16), traceFlags: 1 }),
    isRecording: () => true,
    setAttribute(k: string, v: unknown) {
      rec.attributes[k] = v;
      return span;
    },
    setAttributes(a: Record<string, unknown>) {
      Object.assign(rec.attributes, a);
      return span;
    },
    addEvent(name: string, attributes: Record<string, unknown> = {}) {
      rec.events.push({ name, attributes });
      return span;
    },
    updateName(n: string) {
      rec.name = n;
      return span;
    },
    setStatus: () => span,
    end: () => {},
    recordException: () => {},
    addLink: () => span,
    addLinks: () => span,
  };
  rec.span = span as unknown as Span;
  return rec;
}

/** A context manager for synchronous code: the active context is a stack. */
class StackContextManager implements ContextManager {
  #stack: Context[] = [];
  active(): Context {
    return this.#stack.at(-1) ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    this.#stack.push(ctx);
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.#stack.pop();
    }
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#stack = [];
    return this;
  }
}

/**
 * Runs synchronous `fn` with `span` active, then unregisters the context manager.
 *
 * @param span the span to make active
 * @param fn the code under test
 * @returns what `fn` returns
 */
export function withActiveSpan<T>(span: Span, fn: () => T): T {
  context.setGlobalContextManager(new StackContextManager());
  try {
    return context.with(trace.setSpan(ROOT_CONTEXT, span), fn);
  } finally {
    context.disable();
  }
}
