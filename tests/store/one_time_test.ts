/** Single-use sign-in records (lib/store/one_time.ts). */
import { assertEquals } from "../assert.ts";
import { putOneTime, takeOneTime } from "../../lib/store/one_time.ts";
import { withKv } from "./world.ts";

Deno.test("a one-time record is redeemed once, even by two requests at the same time", () =>
  withKv(async (kv) => {
    assertEquals(await putOneTime(kv, "code", "d1", { user: "u" }, 60_000, 0), true);
    assertEquals(await putOneTime(kv, "code", "d1", { user: "x" }, 60_000, 0), false);
    const both = await Promise.all([
      takeOneTime(kv, "code", "d1", 1),
      takeOneTime(kv, "code", "d1", 1),
    ]);
    assertEquals(both.filter((v) => v !== null), [{ user: "u" }]);
  }));

Deno.test("a one-time record past its lifetime is refused and gone", () =>
  withKv(async (kv) => {
    await putOneTime(kv, "code", "d2", 1, 1_000, 0);
    assertEquals(await takeOneTime(kv, "code", "d2", 1_000), null);
    assertEquals(await takeOneTime(kv, "code", "d2", 10), null, "the expired try used it up");
  }));
