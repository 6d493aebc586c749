/**
 * describeNetworkFailure() on the errors a real fetch throws: a closed
 * loopback port, a name that cannot resolve, https:// against a plain-HTTP
 * loopback server, a server that never answers; and Node's error codes.
 */
import { assert, assertEquals, assertStringIncludes } from "./assert.ts";
import { describeNetworkFailure } from "../lib/network_errors.ts";

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): number {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function fetchError(url: string, init: RequestInit = {}): Promise<unknown> {
  try {
    const res = await fetch(url, init);
    await res.body?.cancel();
  } catch (err) {
    return err;
  }
  throw new Error(`${url} answered`);
}

Deno.test("a closed loopback port is connection refused, naming host and port", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  const f = describeNetworkFailure(await fetchError(url), url);
  assertEquals(f.kind, "connection_refused");
  assertStringIncludes(f.text, `connection refused (nothing listens on ${new URL(url).host})`);
});

Deno.test("a name that cannot resolve is a DNS failure naming the host", async () => {
  const url = "http://nonexistent.invalid";
  const f = describeNetworkFailure(await fetchError(url), url);
  assertEquals(f.kind, "name_not_resolved");
  assertStringIncludes(f.text, "the host name nonexistent.invalid cannot be resolved");
});

Deno.test("https:// against a plain-HTTP server is a TLS failure that suggests http://", async () => {
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    () => new Response("plain"),
  );
  try {
    const url = `https://127.0.0.1:${server.addr.port}`;
    const f = describeNetworkFailure(await fetchError(url), url);
    assertEquals(f.kind, "tls");
    assertStringIncludes(f.text, "TLS handshake failed");
    assertStringIncludes(f.text, "use an http:// URL");
  } finally {
    ac.abort();
    await server.finished;
  }
});

Deno.test("a server that accepts and never answers is a timeout", async () => {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
    const err = await fetchError(url, { signal: AbortSignal.timeout(200) });
    const f = describeNetworkFailure(err, url);
    assertEquals(f.kind, "timeout");
    assertStringIncludes(f.text, "timed out");
  } finally {
    listener.close();
    for (const c of held) c.close();
    await accepting.catch(() => {});
  }
});

Deno.test("Node's error codes in the cause chain are recognised too", () => {
  const node = (code: string, message: string) =>
    new TypeError("fetch failed", { cause: Object.assign(new Error(message), { code }) });
  const url = "https://flags.example.com";
  assertEquals(
    describeNetworkFailure(node("ECONNREFUSED", "connect ECONNREFUSED 1.2.3.4:443"), url).kind,
    "connection_refused",
  );
  assertEquals(
    describeNetworkFailure(node("ENOTFOUND", "getaddrinfo ENOTFOUND x"), url).kind,
    "name_not_resolved",
  );
  const cert = describeNetworkFailure(node("DEPTH_ZERO_SELF_SIGNED_CERT", "self-signed"), url);
  assertEquals(cert.kind, "tls");
  assertStringIncludes(cert.text, "certificate of flags.example.com:443 is not trusted");
  assertEquals(
    describeNetworkFailure(node("UND_ERR_CONNECT_TIMEOUT", "Connect Timeout Error"), url).kind,
    "timeout",
  );
});

Deno.test("a body cut mid-stream is a cut connection, and an unknown cause keeps its words", () => {
  const cut = describeNetworkFailure(
    new TypeError("error reading a body from connection"),
    "http://127.0.0.1:8080",
  );
  assertEquals(cut.kind, "connection_reset");
  assert(!cut.text.includes("error reading"), cut.text);
  const other = describeNetworkFailure(
    new TypeError("fetch failed", {
      cause: new Error("error sending request for url (http://h/): something new"),
    }),
    "http://h",
  );
  assertEquals(other, { kind: "network", text: "something new" });
});
