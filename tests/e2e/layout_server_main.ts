/**
 * Test helper, run as its own process by tests/e2e/upgrade_layout_test.ts:
 * the flag service (`serve()` of lib/server/serve.ts, as `cfgtool serve`
 * runs it) built with the test-only layout 2 of tests/store/layout_fixture.ts,
 * so that it migrates a layout-1 store before it listens.
 *
 * `deno run -A --unstable-kv layout_server_main.ts <kv path>` prints
 * `cfgtool listening on <url>` once it serves and stops on SIGTERM.
 * `LAYOUT_CRASH_AT_BATCH=<n>` ends the process (exit 70) while the n-th
 * batch of the migration is being made, before it commits, as a crash
 * would: nothing is cleaned up, and its migration lease stays until it
 * lapses (`LAYOUT_LEASE_MS`, default 1000).
 *
 * @module
 */
import { serve } from "../../lib/server/serve.ts";
import { notesLayout } from "../store/layout_fixture.ts";

const kv = Deno.args[0];
if (kv === undefined) throw new Error("usage: layout_server_main.ts <kv path>");
const crashAt = Number(Deno.env.get("LAYOUT_CRASH_AT_BATCH") ?? "0");
const ac = new AbortController();
Deno.addSignalListener("SIGTERM", () => ac.abort("SIGTERM"));
await serve({
  kv,
  port: 0,
  signal: ac.signal,
  layout: {
    layout: notesLayout({
      onBatch: (n) => {
        if (n === crashAt) Deno.exit(70);
      },
    }),
    batch: 10,
    leaseMs: Number(Deno.env.get("LAYOUT_LEASE_MS") ?? "1000"),
    pollMs: 20,
  },
  onListen: ({ url }) => console.log(`cfgtool listening on ${url}`),
});
