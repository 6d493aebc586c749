/**
 * Which records a backup holds: every record kind of lib/store/keys.ts is
 * known, sign-ins in progress and sign-in rate counters are left out, and
 * a restore accepts exactly the kinds a backup holds.
 */
import { assert, assertEquals } from "../../assert.ts";
import {
  LEFT_OUT_PREFIXES,
  leftOutOfBackup,
  restorableKey,
  STORE_PREFIXES,
} from "../../../lib/store/backup/keys.ts";

Deno.test("the known prefixes are exactly the record kinds in the table of lib/store/keys.ts", async () => {
  const source = await Deno.readTextFile(new URL("../../../lib/store/keys.ts", import.meta.url));
  const documented = [...source.matchAll(/^ \* \| `\["([a-z_]+)"/gm)].map((m) => m[1]!);
  assertEquals([...new Set(documented)].sort(), [...STORE_PREFIXES].sort());
});

Deno.test("sign-ins in progress and sign-in rate counters are left out, and not restored", () => {
  assertEquals([...LEFT_OUT_PREFIXES].sort(), ["login_rate", "one_time"]);
  for (const p of LEFT_OUT_PREFIXES) {
    assert(leftOutOfBackup([p, "x"]));
    assert(!restorableKey([p, "x"]));
  }
});

Deno.test("a restore accepts every other record kind and nothing else", () => {
  for (const p of STORE_PREFIXES.filter((p) => !LEFT_OUT_PREFIXES.includes(p))) {
    assert(restorableKey([p, "x"]), p);
    assert(!leftOutOfBackup([p, "x"]), p);
  }
  assert(!restorableKey(["evil"]));
  assert(!restorableKey([]));
  assert(!restorableKey([1, "tenant"]));
  assert(!restorableKey([new Uint8Array([1])]));
});
