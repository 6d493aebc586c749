/**
 * Console pages stay light over the wire: the flags of an environment of a
 * 500-flag namespace, the largest page, arrive gzip-compressed under
 * 100 KB; assets are compressed too and cached for good under names that
 * change with their bytes. (Server time is measured by
 * bench/console_pages.ts, not here.)
 */
import { assert, assertEquals } from "../assert.ts";
import { ASSETS } from "../../lib/console/assets.ts";
import { rolloutFlag } from "./fixture.ts";
import { consoleTest, FIXTURE } from "./world.ts";

function manyFlags(n: number): Record<string, string> {
  const files: Record<string, string> = { ...FIXTURE };
  for (let i = 0; i < n; i++) {
    files[`flags/generated-${String(i).padStart(3, "0")}.toml`] = rolloutFlag(
      `Generated flag ${i} for the page weight test`,
      i % 100,
    );
  }
  return files;
}

consoleTest("the flags page of a 500-flag namespace crosses the wire under 100 KB", async (w) => {
  await w.push(manyFlags(497));
  const res = await w.call("GET", "/ui/t/acme/ns/web/env/production", {
    cookie: w.member.cookie,
    headers: { "accept-encoding": "gzip" },
  });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-encoding"), "gzip");
  const wire = (await res.arrayBuffer()).byteLength;
  assert(wire < 100 * 1024, `${wire} bytes`);
  const plain = await w.page("/ui/t/acme/ns/web/env/production", w.member);
  assertEquals(plain.doc.querySelectorAll("#flag-table tbody tr").length, 500);
});

consoleTest(
  "assets are compressed and cached for good under a name that changes with them",
  async (w) => {
    const res = await w.call("GET", `/ui/assets/${ASSETS.htmx.name}`, {
      headers: { "accept-encoding": "gzip" },
    });
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("content-encoding"), "gzip");
    assertEquals(res.headers.get("cache-control"), "public, max-age=31536000, immutable");
    const text = await new Response(
      res.body!.pipeThrough(new DecompressionStream("gzip")),
    ).text();
    assertEquals(text.length, ASSETS.htmx.body.length);
    assertEquals((await w.call("GET", "/ui/assets/htmx-0000000000.js")).status, 404);
  },
);
