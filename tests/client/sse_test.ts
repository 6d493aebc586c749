import { assertEquals, assertRejects } from "../assert.ts";
import { openSse, readSse, type SseMessage } from "../../lib/client/sse.ts";
import { CfgtoolError } from "../../lib/errors.ts";

function chunked(parts: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function collect(body: ReadableStream<Uint8Array>, comments: string[] = []) {
  const out: SseMessage[] = [];
  for await (const m of readSse(body, { onComment: (c) => comments.push(c) })) out.push(m);
  return out;
}

Deno.test("readSse() parses events split across chunks, with CRLF and multi-line data", async () => {
  const comments: string[] = [];
  const msgs = await collect(
    chunked([
      ":keep",
      "alive\n\nevent: vers",
      'ion\r\nid: web:1\r\ndata: {"a":\r\ndata: 1}\r\n\r\n',
      "data: plain\n\n",
      "event: resync\nid: web:2\ndata: {}\n",
      "\n",
    ]),
    comments,
  );
  assertEquals(msgs, [
    { event: "version", id: "web:1", data: '{"a":\n1}' },
    { event: "message", id: undefined, data: "plain" },
    { event: "resync", id: "web:2", data: "{}" },
  ]);
  assertEquals(comments, ["keepalive"]);
});

Deno.test("readSse() drops an unterminated last event", async () => {
  assertEquals(await collect(chunked(["event: version\ndata: {}\n"])), []);
});

Deno.test("readSse() cancels the stream when the loop breaks", async () => {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode("data: 1\n\ndata: 2\n\n"));
    },
    cancel() {
      cancelled = true;
    },
  });
  for await (const _ of readSse(body)) break;
  assertEquals(cancelled, true);
});

Deno.test("openSse() maps the error envelope, wrong content types and network failures", async () => {
  const envelope = (() =>
    Promise.resolve(
      new Response(JSON.stringify({ code: "forbidden", message: "no manifest.read" }), {
        status: 403,
        headers: { "content-type": "application/json" },
      }),
    )) as typeof fetch;
  const err = await assertRejects(() => openSse("http://h/e", { fetch: envelope }), CfgtoolError);
  assertEquals([err.code, err.status], ["forbidden", 403]);

  const html = (() => Promise.resolve(new Response("<html>"))) as typeof fetch;
  const e2 = await assertRejects(() => openSse("http://h/e", { fetch: html }), CfgtoolError);
  assertEquals(e2.code, "stream_failed");

  const down = (() => Promise.reject(new TypeError("connection refused"))) as typeof fetch;
  const e3 = await assertRejects(() => openSse("http://h/e", { fetch: down }), CfgtoolError);
  assertEquals(e3.code, "unreachable");
});
