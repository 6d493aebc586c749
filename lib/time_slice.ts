/**
 * Cooperative time slicing for long loops on a thread that serves requests:
 * a loop asks {@linkcode TimeSlice.pause} between items, and pauses (lets
 * timers, I/O and other requests run) only once it has held the thread for
 * its budget. Awaiting an already-settled promise does not let anything
 * else run; a timer does. Runs in browsers too.
 *
 * @module
 */

/**
 * Lets every other task that is ready run before the caller continues.
 *
 * @returns a promise settled on a later turn of the event loop
 *
 * @example
 * ```ts
 * import { yieldToEventLoop } from "./time_slice.ts";
 * let ran = false;
 * setTimeout(() => ran = true, 0);
 * await yieldToEventLoop();
 * if (!ran) throw new Error("the timer did not run");
 * ```
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** A budget of continuous time on the thread, renewed at each pause. */
export class TimeSlice {
  readonly #budgetMs: number;
  #start = performance.now();

  /** @param budgetMs longest run between two pauses, in ms (default 8) */
  constructor(budgetMs = 8) {
    this.#budgetMs = budgetMs;
  }

  /**
   * Yields to the event loop when the slice's budget is spent, else returns
   * at once (a settled promise: the caller keeps the thread).
   *
   * @returns a promise to await between two items of work
   *
   * @example
   * ```ts
   * import { TimeSlice } from "./time_slice.ts";
   * let ticks = 0;
   * const timer = setInterval(() => ticks++, 1);
   * const slice = new TimeSlice(2);
   * const end = performance.now() + 30;
   * while (performance.now() < end) await slice.pause();
   * clearInterval(timer);
   * if (ticks === 0) throw new Error("never paused");
   * ```
   */
  async pause(): Promise<void> {
    if (performance.now() - this.#start < this.#budgetMs) return;
    await yieldToEventLoop();
    this.#start = performance.now();
  }
}
