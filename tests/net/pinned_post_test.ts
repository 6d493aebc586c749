/**
 * The webhook sender (lib/net/pinned_post.ts): it connects to the address
 * it was given, never to a lookup of the URL's name, while the `Host`
 * header, and for HTTPS the certificate check, stay the URL's; it follows
 * no redirect, gives up at its deadline, and tries the next address when
 * one refuses.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { pinnedPost } from "../../lib/net/pinned_post.ts";
import { HAVE_OPENSSL, makeCa, makeServerPair } from "../server/tls_fixture.ts";

/** A loopback server recording what it got. */
function server(
  handler: (req: Request) => Response | Promise<Response> = () =>
    new Response(null, { status: 204 }),
  tls?: { cert: string; key: string },
) {
  const got: { host: string | null; path: string; body: string; headers: Headers }[] = [];
  const s = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {}, ...(tls ?? {}) },
    async (req) => {
      got.push({
        host: req.headers.get("host"),
        path: new URL(req.url).pathname + new URL(req.url).search,
        body: await req.text(),
        headers: req.headers,
      });
      return await handler(req);
    },
  );
  return { port: s.addr.port, got, close: () => s.shutdown() };
}

const post = (url: string, addresses: string[], extra: { caCerts?: string[] } = {}) =>
  pinnedPost({
    url: new URL(url),
    addresses,
    headers: { "content-type": "application/json", "webhook-id": "dlv_1" },
    body: '{"a":1}',
    timeoutMs: 5000,
    ...extra,
  });

Deno.test("it connects to the given address, with the URL's host, path, query and headers", async () => {
  const s = server();
  try {
    const answer = await post(`http://receiver.invalid:${s.port}/in/x?y=1`, ["127.0.0.1"]);
    assertEquals(answer, { status: 204 });
    assertEquals(s.got.length, 1);
    assertEquals(s.got[0]!.host, `receiver.invalid:${s.port}`);
    assertEquals(s.got[0]!.path, "/in/x?y=1");
    assertEquals(s.got[0]!.body, '{"a":1}');
    assertEquals(s.got[0]!.headers.get("webhook-id"), "dlv_1");
  } finally {
    await s.close();
  }
});

Deno.test("an address that refuses is skipped for the next; when none accepts, it says so", async () => {
  const s = server();
  try {
    // the server listens on 127.0.0.1 only: 127.0.0.2 refuses
    assertEquals(
      (await post(`http://r.invalid:${s.port}/`, ["127.0.0.2", "127.0.0.1"])).status,
      204,
    );
    const err = await post(`http://r.invalid:${s.port}/`, ["127.0.0.2"]).then(() => null, (e) => e);
    assertEquals((err as Error).message, "connection refused");
  } finally {
    await s.close();
  }
});

Deno.test("a redirect is an answer, not followed", async () => {
  const target = server();
  const s = server(() =>
    new Response(null, { status: 302, headers: { location: `http://127.0.0.1:${target.port}/` } })
  );
  try {
    const answer = await post(`http://r.invalid:${s.port}/`, ["127.0.0.1"]);
    assertEquals(answer, { status: 302, location: `http://127.0.0.1:${target.port}/` });
    assertEquals(target.got.length, 0);
  } finally {
    await s.close();
    await target.close();
  }
});

Deno.test("a receiver that never answers is given up at the deadline", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const port = (listener.addr as Deno.NetAddr).port;
    const started = Date.now();
    await assertRejects(
      () =>
        pinnedPost({
          url: new URL(`http://slow.invalid:${port}/`),
          addresses: ["127.0.0.1"],
          headers: {},
          body: "{}",
          timeoutMs: 300,
        }),
      Error,
      "timed out after 300 ms",
    );
    assert(Date.now() - started < 3000);
  } finally {
    listener.close();
    for (const c of held) c.close();
    await accepting.catch(() => {});
  }
});

Deno.test({
  name: "over HTTPS the certificate is checked against the URL's host, not the address",
  ignore: !HAVE_OPENSSL,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-pinned-" });
    try {
      const ca = await makeCa(dir, "a");
      const pair = await makeServerPair(dir, ca, "a");
      const s = server(undefined, { cert: pair.cert, key: pair.key });
      try {
        // the certificate names localhost: a URL of that name posts to the checked address
        const ok = await post(`https://localhost:${s.port}/in`, ["127.0.0.1"], {
          caCerts: [ca.pem],
        });
        assertEquals(ok.status, 204);
        // another name on the same address is refused by the certificate check
        const err = await post(`https://hooks.example.com:${s.port}/in`, ["127.0.0.1"], {
          caCerts: [ca.pem],
        }).then(() => null, (e) => e as Error);
        assert(err !== null && /certificate/i.test(err.message), String(err));
        // and a certificate no trusted authority signed is refused too
        const untrusted = await post(`https://localhost:${s.port}/in`, ["127.0.0.1"]).then(
          () => null,
          (e) => e as Error,
        );
        assert(untrusted !== null, "an untrusted certificate was accepted");
        assertEquals(s.got.length, 1);
      } finally {
        await s.close();
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
