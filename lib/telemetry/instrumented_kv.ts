/**
 * A Deno KV handle that measures itself: every operation is timed and
 * reported to an observer (the server's metrics) and, inside a recorded
 * trace, runs in a span `cfgtool.kv.<op>` (a child of the active span: the
 * service call, else the request; background work such as the pollers makes
 * no spans). It is a `Proxy` over the real handle, so it keeps
 * every behaviour of `Deno.Kv`: `instanceof Deno.Kv`, `atomic()` chains
 * (their `commit()` is measured as `commit`; a refused check is a
 * `conflict`), `list()` iterators with their `cursor` (the time spent
 * fetching is summed over the iteration and reported once, when it ends or
 * the loop breaks), `watch()`, `listenQueue()`, `close()` and everything
 * else passed straight through.
 *
 * Operations: `get`, `get_many`, `set`, `delete`, `enqueue`, `list`,
 * `commit`. `watch` streams are long-lived and not timed.
 *
 * @module
 */
import { type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";

/** How a KV operation ended. */
export type KvOutcome = "ok" | "error" | "conflict";

/** Told about every finished KV operation. */
export type KvObserver = (op: string, seconds: number, outcome: KvOutcome) => void;

const tracer = trace.getTracer("cfgtool");

/** Methods timed as one call each, and their operation names. */
const CALLS: Record<string, string> = {
  get: "get",
  getMany: "get_many",
  set: "set",
  delete: "delete",
  enqueue: "enqueue",
};

/**
 * A span for a KV operation inside a recorded trace (a request, a service
 * call); none for background work (the credential and head pollers run
 * every few milliseconds and would flood the traces with root spans).
 */
function startSpan(op: string): Span | undefined {
  if (trace.getActiveSpan()?.isRecording() !== true) return undefined;
  return tracer.startSpan(`cfgtool.kv.${op}`, {
    kind: SpanKind.CLIENT,
    attributes: { "db.system.name": "deno_kv", "db.operation.name": op },
  });
}

function endSpan(span: Span | undefined, outcome: KvOutcome, err?: unknown): void {
  if (span === undefined) return;
  if (outcome !== "ok") {
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: outcome === "conflict" ? "conflict" : (err as Error)?.name ?? "error",
    });
  }
  span.end();
}

/**
 * Wraps a KV handle so that its operations are measured.
 *
 * @param kv the opened KV
 * @param observe told the operation, its duration in seconds and how it ended
 * @returns a handle that behaves as `kv` does
 *
 * @example
 * ```ts
 * import { instrumentKv } from "./instrumented_kv.ts";
 * const seen: string[] = [];
 * const kv = instrumentKv(await Deno.openKv(":memory:"), (op, _s, outcome) => seen.push(`${op}:${outcome}`));
 * await kv.set(["a"], 1);
 * const stale = await kv.atomic().check({ key: ["a"], versionstamp: null }).set(["a"], 2).commit();
 * for await (const e of kv.list({ prefix: [] })) if (e.value !== 1) throw new Error();
 * if (stale.ok || !(kv instanceof Deno.Kv)) throw new Error();
 * if (seen.join() !== "set:ok,commit:conflict,list:ok") throw new Error(seen.join());
 * kv.close();
 * ```
 */
export function instrumentKv(kv: Deno.Kv, observe: KvObserver): Deno.Kv {
  const done = (
    op: string,
    started: number,
    span: Span | undefined,
    outcome: KvOutcome,
    err?: unknown,
  ) => {
    observe(op, (performance.now() - started) / 1000, outcome);
    endSpan(span, outcome, err);
  };

  const timed = (op: string, fn: (...args: unknown[]) => Promise<unknown>) =>
    async function (...args: unknown[]): Promise<unknown> {
      const span = startSpan(op);
      const started = performance.now();
      try {
        const result = await fn.apply(kv, args);
        done(op, started, span, "ok");
        return result;
      } catch (err) {
        done(op, started, span, "error", err);
        throw err;
      }
    };

  function atomic(): Deno.AtomicOperation {
    const op = kv.atomic();
    const commit = op.commit;
    op.commit = async function (): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
      const span = startSpan("commit");
      const started = performance.now();
      try {
        const result = await commit.call(op);
        done("commit", started, span, result.ok ? "ok" : "conflict");
        return result;
      } catch (err) {
        done("commit", started, span, "error", err);
        throw err;
      }
    };
    return op;
  }

  function list<T>(
    selector: Deno.KvListSelector,
    options?: Deno.KvListOptions,
  ): Deno.KvListIterator<T> {
    const it = kv.list<T>(selector, options);
    const next = it.next;
    const span = startSpan("list");
    let spent = 0;
    let finished = false;
    const finish = (outcome: KvOutcome, err?: unknown) => {
      if (finished) return;
      finished = true;
      observe("list", spent / 1000, outcome);
      endSpan(span, outcome, err);
    };
    it.next = async function (): Promise<IteratorResult<Deno.KvEntry<T>, undefined>> {
      const started = performance.now();
      try {
        const result = await next.call(it);
        spent += performance.now() - started;
        if (result.done) finish("ok");
        return result;
      } catch (err) {
        spent += performance.now() - started;
        finish("error", err);
        throw err;
      }
    };
    // a loop that breaks early calls return(): the iteration is over, report it
    (it as AsyncIterator<Deno.KvEntry<T>, undefined>).return = () => {
      finish("ok");
      return Promise.resolve({ done: true, value: undefined });
    };
    return it;
  }

  const cache = new Map<PropertyKey, unknown>();
  return new Proxy(kv, {
    get(target, prop) {
      const hit = cache.get(prop);
      if (hit !== undefined) return hit;
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      let wrapped: unknown;
      if (prop === "atomic") wrapped = atomic;
      else if (prop === "list") wrapped = list;
      else if (typeof prop === "string" && Object.hasOwn(CALLS, prop)) {
        wrapped = timed(CALLS[prop]!, value as (...args: unknown[]) => Promise<unknown>);
      } else wrapped = value.bind(target); // watch, listenQueue, close, …: as they are
      cache.set(prop, wrapped);
      return wrapped;
    },
  });
}
