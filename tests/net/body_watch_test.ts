/** watchBody(): a request's body reads, tracked in place, failing once its watch expires. */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { RequestTimeoutError, watchBody } from "../../lib/net/request_timeout.ts";

const post = (body: BodyInit) => new Request("http://x/", { method: "POST", body });

/** A body that sends `first` and then nothing, ever. */
function stalled(first: string): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(first));
    },
  });
  return new Request("http://x/", { method: "POST", body, duplex: "half" } as RequestInit);
}

Deno.test("every whole-body read, and the body stream read to its end, counts as done", async () => {
  const reads: [string, (req: Request) => Promise<unknown>][] = [
    ["arrayBuffer", (r) => r.arrayBuffer()],
    ["bytes", (r) => r.bytes()],
    ["text", (r) => r.text()],
    ["json", (r) => r.json()],
    ["blob", (r) => r.blob()],
    ["stream", async (r) => {
      for await (const _ of r.body!) { /* drain */ }
    }],
  ];
  for (const [name, read] of reads) {
    const req = post('{"a":1}');
    const watch = watchBody(req, performance.now() + 1000, () => {});
    assertEquals(watch.done, false, name);
    await read(req);
    assertEquals(watch.done, true, name);
  }
  const form = post(new URLSearchParams({ a: "1" }));
  const watch = watchBody(form, performance.now() + 1000, () => {});
  assertEquals((await form.formData()).get("a"), "1");
  assert(watch.done);
});

Deno.test("the request stays itself: a Request, its headers and url, the body unlocked until read", async () => {
  const req = new Request("http://x/p?q=1", {
    method: "PUT",
    headers: { "content-type": "text/plain" },
    body: "hello",
  });
  watchBody(req, performance.now() + 1000, () => {});
  assert(req instanceof Request);
  assertEquals([req.method, req.url, req.headers.get("content-type")], [
    "PUT",
    "http://x/p?q=1",
    "text/plain",
  ]);
  assert(req.body !== null && req.body === req.body, "one stream, however often asked");
  assertEquals(req.bodyUsed, false);
  assertEquals(await req.text(), "hello", "looking at .body does not lock it");
});

Deno.test("once expired, pending and later reads fail with the timeout, and onExpire runs once", async () => {
  let expired = 0;
  const req = stalled("ab");
  const watch = watchBody(req, performance.now(), () => expired++);
  const reader = req.body!.getReader();
  assertEquals(new TextDecoder().decode((await reader.read()).value), "ab");
  const pending = reader.read();
  watch.expire(new RequestTimeoutError(50));
  watch.expire(new RequestTimeoutError(50));
  await assertRejects(() => pending, RequestTimeoutError);
  assertEquals([watch.expired, watch.done, expired], [true, false, 1]);

  const other = stalled("x");
  const late = watchBody(other, performance.now(), () => {});
  late.expire(new RequestTimeoutError(50));
  await assertRejects(() => other.arrayBuffer(), RequestTimeoutError);
});

Deno.test("a body read to its end cannot expire any more", async () => {
  let expired = false;
  const req = post("whole");
  const watch = watchBody(req, performance.now(), () => (expired = true));
  await req.arrayBuffer();
  watch.expire(new RequestTimeoutError(50));
  assertEquals([watch.done, watch.expired, expired], [true, false, false]);
});

Deno.test("a transport error reaches the handler as it is, not as a timeout", async () => {
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      controller.error(new Deno.errors.ConnectionReset("connection reset"));
    },
  });
  const req = new Request("http://x/", { method: "POST", body, duplex: "half" } as RequestInit);
  const watch = watchBody(req, performance.now() + 1000, () => {});
  await assertRejects(() => req.arrayBuffer(), Deno.errors.ConnectionReset);
  assertEquals(watch.done, false);
});
