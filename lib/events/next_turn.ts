/**
 * Yielding to the event loop between slices of a long synchronous job (a
 * fan-out over ten thousand streams, a keepalive sweep), so the runtime
 * writes what the first slices queued, and serves other connections,
 * before the job goes on.
 *
 * A resolved promise is no yield (microtasks run before any I/O). A message
 * to a `MessageChannel` comes back before most of the connections' write
 * tasks have had their turn: writing one frame to 10,000 open streams in
 * slices of 512, the first client read it 75 to 158 ms after the push with
 * message-port yields, 48 to 135 ms with no yield at all, and 18 to 44 ms
 * with zero-delay timers between the slices (bench/stream_server.ts, a
 * loaded 2-core machine). A timer lets the runtime run every task that is
 * ready before it fires, so that is the yield; the clamp of nested timers
 * to a few milliseconds only spaces the slices, and the writes fill that
 * time. Callers waiting at the same time share one timer.
 *
 * @module
 */

let waiting: (() => void)[] = [];

/**
 * Resolves on a later turn of the event loop, after the I/O that was ready
 * has run. Callers waiting at the same time share one timer.
 *
 * @returns a promise that resolves on a later turn
 *
 * @example
 * ```ts
 * import { nextTurn } from "./next_turn.ts";
 * const order: string[] = [];
 * const turn = nextTurn().then(() => order.push("turn"));
 * queueMicrotask(() => order.push("microtask"));
 * await turn;
 * if (order.join() !== "microtask,turn") throw new Error(order.join());
 * ```
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (waiting.length === 1) setTimeout(turn, 0);
  });
}

function turn(): void {
  const ready = waiting;
  waiting = [];
  for (const resolve of ready) resolve();
}
