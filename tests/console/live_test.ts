/**
 * The console's event stream (lib/console/live.ts): a page hears
 * "version N landed" when its namespace changes and "deleted" when it goes,
 * without file content; a reader of another tenant is refused; and one
 * session holds no more streams than a credential may on the API.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { consoleTest, FIXTURE } from "./world.ts";

const LIVE = "/ui/live?tenant=acme&namespace=web";

/** Reads a stream until `text` appears (or fails after 5 s). */
async function readUntil(
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  text: string,
): Promise<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const timer = setTimeout(() => reader.cancel(), 5000);
  try {
    while (!seen.includes(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += value;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
  return seen;
}

consoleTest("a new version is told as an event with its number and no content", async (w) => {
  const res = await w.call("GET", LIVE, { cookie: w.member.cookie });
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
  const reading = readUntil(res.body!, "event: version");
  await new Promise((r) => setTimeout(r, 50));
  const v = await w.push({
    ...FIXTURE,
    "flags/new-checkout.toml": FIXTURE["flags/new-checkout.toml"]!.replace(
      "New checkout flow",
      "Checkout v2",
    ),
  });
  const seen = await reading;
  assertStringIncludes(seen, `event: version\nid: ${v}\ndata: {"version":${v}}`);
  assertEquals(seen.includes("Checkout v2"), false);
});

consoleTest("a version that landed before the stream opened is told at once", async (w) => {
  const v = await w.push({ ...FIXTURE, "flags/x.toml": FIXTURE["flags/max-items.toml"]! });
  const res = await w.call("GET", `${LIVE}&since=${v - 1}`, { cookie: w.member.cookie });
  assertStringIncludes(await readUntil(res.body!, "event: version"), `data: {"version":${v}}`);
});

consoleTest("deleting the namespace ends its streams with a deleted event", async (w) => {
  const res = await w.call("GET", LIVE, { cookie: w.member.cookie });
  const reading = readUntil(res.body!, "event: deleted");
  await new Promise((r) => setTimeout(r, 50));
  const gone = await w.call("DELETE", "/api/v1/tenants/acme/namespaces/web", { bearer: w.admin });
  assertEquals(gone.status < 300, true);
  assertStringIncludes(await reading, "event: deleted");
});

consoleTest("a person of another tenant cannot follow the namespace", async (w) => {
  const eve = await w.person("eve@other.test", "other");
  assertEquals((await w.call("GET", LIVE, { cookie: eve.cookie })).status, 403);
});

consoleTest("one session holds at most the per-credential number of streams", async (w) => {
  const max = DEFAULT_SETTINGS.maxConnectionsPerToken;
  const open: Response[] = [];
  for (let i = 0; i < max; i++) {
    const res = await w.call("GET", LIVE, { cookie: w.member.cookie });
    assertEquals(res.status, 200, `stream ${i + 1}`);
    open.push(res);
  }
  const over = await w.call("GET", LIVE, { cookie: w.member.cookie });
  assertEquals(over.status, 429);
  await over.body?.cancel();
  // another person is not affected, and a closed stream frees its slot
  const other = await w.call("GET", LIVE, { cookie: w.writer.cookie });
  assertEquals(other.status, 200);
  await other.body!.cancel();
  await open.pop()!.body!.cancel();
  await new Promise((r) => setTimeout(r, 20));
  const again = await w.call("GET", LIVE, { cookie: w.member.cookie });
  assertEquals(again.status, 200);
  await again.body!.cancel();
  for (const res of open) await res.body!.cancel();
});
