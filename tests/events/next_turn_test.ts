import { assertEquals } from "../assert.ts";
import { nextTurn } from "../../lib/events/next_turn.ts";

Deno.test("nextTurn() resolves after pending microtasks and after the timers already due", async () => {
  const order: string[] = [];
  setTimeout(() => order.push("timer"), 0);
  const turn = nextTurn().then(() => order.push("turn"));
  queueMicrotask(() => order.push("microtask"));
  await turn;
  assertEquals(order, ["microtask", "timer", "turn"]);
});

Deno.test("nextTurn() callers waiting at the same time resume in call order", async () => {
  const order: number[] = [];
  await Promise.all([1, 2, 3].map((i) => nextTurn().then(() => order.push(i))));
  assertEquals(order, [1, 2, 3]);
});
