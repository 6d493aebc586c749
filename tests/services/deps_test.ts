import { assertEquals } from "../assert.ts";
import { clockOf, resolveInput } from "../../lib/services/deps.ts";

Deno.test("a deferred input given at once is itself", async () => {
  assertEquals(await resolveInput({ slug: "web" }), { slug: "web" });
});

Deno.test("a deferred input given as a function is read when resolved, not before", async () => {
  let reads = 0;
  const input = () => {
    reads++;
    return Promise.resolve({ slug: "web" });
  };
  assertEquals(reads, 0);
  assertEquals(await resolveInput(input), { slug: "web" });
  assertEquals(reads, 1);
});

Deno.test("the clock of deps is its now, else the system time", async () => {
  const kv = await Deno.openKv(":memory:");
  const fixed = new Date("2026-01-01T00:00:00Z");
  assertEquals(
    clockOf({ kv, key: undefined as never, runtime: undefined as never, now: () => fixed })(),
    fixed,
  );
  const before = Date.now();
  const t = clockOf({ kv, key: undefined as never, runtime: undefined as never })().getTime();
  assertEquals(t >= before && t <= Date.now(), true);
  kv.close();
});
