/** Fixed-window sign-in counters (lib/store/login_rate.ts). */
import { assertEquals } from "../assert.ts";
import { countAttempt } from "../../lib/store/login_rate.ts";
import { withKv } from "./world.ts";

Deno.test("a counter admits `limit` attempts a window, shared by every caller of the store", () =>
  withKv(async (kv) => {
    const t = 10 * 60_000;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => countAttempt(kv, "ip", "d1", 5, 60_000, t)),
    );
    assertEquals(results.filter(Boolean).length, 5, "five of eight concurrent attempts pass");
    assertEquals(await countAttempt(kv, "ip", "d2", 5, 60_000, t), true, "another id has its own");
    assertEquals(await countAttempt(kv, "ip", "d1", 5, 60_000, t + 60_000), true, "a new window");
  }));
