/**
 * FlagClient against a real server through a fault-injecting proxy on
 * loopback: the proxy forwards to the server and rewrites the SSE stream
 * (events are parsed with eventsource-parser and re-framed) and closure
 * responses. Each fault must be detected, the last good model kept, the
 * failure reported through lastRefreshError(), and the client must converge
 * after the fallback.
 */
import { assert, assertEquals } from "../assert.ts";
import { createParser } from "sse-parser";
import { base64 } from "base";
import { packArchive, unpackArchive } from "../../lib/closure/archive.ts";
import { FlagClient, type RefreshError } from "../../lib/client/flag_client.ts";
import {
  boolFlag,
  NS_TOML,
  startWorld,
  stringFlag,
  waitFor,
  type World,
} from "../client/fixture.ts";

interface Frame {
  event: string;
  id: string | undefined;
  data: string;
}

interface ProxyOptions {
  /** Rewrites one event: return the frames to send instead (empty: drop it). */
  onEvent?: (frame: Frame) => Frame[];
  /** Rewrites a closure response body (after it was read); null keeps it. */
  onClosure?: (url: URL, body: Uint8Array) => Promise<Uint8Array | null>;
  /** Awaited before a closure request with a bearer token is forwarded. */
  gate?: () => Promise<void>;
}

interface Proxy {
  url: string;
  /** Closure requests seen: whether signed, and their If-None-Match. */
  closures: { signed: boolean; ifNoneMatch: string | null }[];
  close(): Promise<void>;
}

const enc = new TextEncoder();

function startProxy(upstream: string, options: ProxyOptions): Proxy {
  const closures: Proxy["closures"] = [];
  const ac = new AbortController();
  let origin = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const headers = new Headers();
      for (const h of ["authorization", "last-event-id", "if-none-match", "accept"]) {
        const v = req.headers.get(h);
        if (v !== null) headers.set(h, v);
      }
      const isClosure = url.pathname.endsWith("/closure");
      if (isClosure) {
        closures.push({
          signed: url.searchParams.has("token"),
          ifNoneMatch: req.headers.get("if-none-match"),
        });
        if (!url.searchParams.has("token")) await options.gate?.();
      }
      // (no request.signal: the response body's cancel() ends the upstream stream)
      const res = await fetch(`${upstream}${url.pathname}${url.search}`, { headers });
      if (isClosure && res.status === 200) {
        const body = new Uint8Array(await res.arrayBuffer());
        const out = (await options.onClosure?.(url, body)) ?? body;
        const h = new Headers(res.headers);
        h.set("content-length", String(out.length));
        return new Response(out as Uint8Array<ArrayBuffer>, { status: 200, headers: h });
      }
      if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) return res;
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          const parser = createParser({
            onEvent(m) {
              const frame = {
                event: m.event ?? "message",
                id: m.id,
                data: m.data.replaceAll(upstream, origin),
              };
              for (const f of options.onEvent?.(frame) ?? [frame]) {
                controller.enqueue(
                  enc.encode(
                    `event: ${f.event}\n${f.id ? `id: ${f.id}\n` : ""}data: ${f.data}\n\n`,
                  ),
                );
              }
            },
            onComment(c) {
              controller.enqueue(enc.encode(`:${c}\n\n`));
            },
          });
          try {
            while (true) {
              const { done, value } = await reader.read();
              if (done) break;
              parser.feed(decoder.decode(value, { stream: true }));
            }
            controller.close();
          } catch {
            try {
              controller.close();
            } catch {
              // cancelled
            }
          }
        },
        cancel() {
          return reader.cancel();
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    },
  );
  origin = `http://127.0.0.1:${server.addr.port}`;
  return {
    url: origin,
    closures,
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

/** A gate that holds bearer closure requests until opened. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const p = new Promise<void>((r) => open = r);
  return { wait: () => p, open };
}

const V1 = { "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("one") };
const V2 = { ...V1, "flags/banner.toml": stringFlag("two") };
const V3 = { ...V1, "flags/banner.toml": stringFlag("three") };

interface Scenario {
  world: World;
  proxy: Proxy;
  client: FlagClient;
  errors: RefreshError[];
}

async function scenario(
  options: ProxyOptions,
  fn: (s: Scenario) => Promise<void>,
  serverArgs?: string[],
): Promise<void> {
  const world = await startWorld(["web"], serverArgs);
  const proxy = startProxy(world.inst.url, options);
  const client = new FlagClient({
    server: proxy.url,
    token: world.token,
    namespaces: ["web:*"],
    backoff: { initialMs: 40, maxMs: 200 },
    readyTimeoutMs: 10_000,
  });
  const errors: RefreshError[] = [];
  client.onError((e) => errors.push(e));
  try {
    await world.push(V1);
    await client.ready();
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    await fn({ world, proxy, client, errors });
  } finally {
    await client.close();
    await proxy.close();
    await world.close();
  }
}

function firstInline(mutate: (data: Record<string, unknown>) => Frame[] | Record<string, unknown>) {
  let done = false;
  return (f: Frame): Frame[] => {
    if (done || f.event !== "version" || !f.data.includes('"delivery":"inline"')) return [f];
    done = true;
    const out = mutate(JSON.parse(f.data));
    return Array.isArray(out) ? out : [{ ...f, data: JSON.stringify(out) }];
  };
}

Deno.test("FlagClient detects a delta whose content does not match its sha256 and falls back", async () => {
  const g = gate();
  await scenario({
    gate: g.wait,
    onEvent: firstInline((d) => {
      const files = d.files as { content_b64?: string }[];
      files[0]!.content_b64 = base64.encode(enc.encode(stringFlag("evil")));
      return d;
    }),
  }, async ({ world, client, proxy }) => {
    await world.push(V2);
    await waitFor(() => client.lastRefreshError() !== null, "the failed check");
    assertEquals(client.lastRefreshError()?.check, "file_sha256");
    assertEquals(client.lastRefreshError()?.namespace, "web");
    // the last good model is kept while the fallback is pending
    assertEquals(client.closure("web")?.version, 1);
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    assert(client.status()[0]!.stale);
    g.open();
    await waitFor(() => client.closure("web")?.version === 2, "convergence");
    assertEquals(client.evaluate("web", "production", "banner").value, "two");
    assert(!client.status()[0]!.stale);
    // the fallback used the closure endpoint with the bearer token
    assert(proxy.closures.some((c) => !c.signed));
  });
});

Deno.test("FlagClient detects a dropped event by prev_closure_hash and falls back", async () => {
  const g = gate();
  await scenario({ gate: g.wait, onEvent: firstInline(() => []) }, async ({ world, client }) => {
    await world.push(V2); // dropped by the proxy: the client cannot know yet
    await world.push(V3);
    await waitFor(() => client.lastRefreshError() !== null, "the failed check");
    assertEquals(client.lastRefreshError()?.check, "prev_closure_hash");
    assertEquals(client.closure("web")?.version, 1);
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    g.open();
    await waitFor(() => client.closure("web")?.version === 3, "convergence");
    assertEquals(client.evaluate("web", "production", "banner").value, "three");
  });
});

Deno.test("FlagClient rejects a tampered snapshot, re-fetches with backoff and conditional requests", async () => {
  let tamper = false;
  await scenario(
    {
      onClosure: async (_url, body) => {
        if (!tamper) return null;
        const files = await unpackArchive(body);
        files.set("flags/banner.toml", enc.encode(stringFlag("evil")));
        return await packArchive(files);
      },
    },
    async ({ world, client, proxy, errors }) => {
      tamper = true;
      const before = proxy.closures.length;
      // two files change: over --delta-file-limit 1, so the event is a snapshot
      await world.push({ ...V2, "flags/extra.toml": boolFlag() });
      await waitFor(
        () => errors.filter((e) => e.check === "snapshot_hash").length >= 3,
        "repeated failed snapshot checks",
      );
      assertEquals(client.lastRefreshError()?.check, "snapshot_hash");
      assertEquals(client.closure("web")?.version, 1);
      assertEquals(client.evaluate("web", "production", "banner").value, "one");
      // re-fetches are conditional on the closure held
      const held = client.closure("web")!.etag;
      const refetches = proxy.closures.slice(before);
      assert(refetches.length >= 3);
      assert(refetches[0]!.signed, "the first download uses the signed snapshot_url");
      assert(refetches.every((c) => c.ifNoneMatch === held));
      tamper = false;
      await waitFor(() => client.closure("web")?.version === 2, "convergence");
      assertEquals(client.evaluate("web", "production", "banner").value, "two");
      assert(client.closure("web")!.files.has("flags/extra.toml"));
    },
    ["--head-poll-ms", "20", "--delta-file-limit", "1"],
  );
});

Deno.test("FlagClient rejects an event whose protocol is not v2 and recovers on the next one", async () => {
  await scenario({
    onEvent: firstInline((d) => ({ ...d, protocol: "v3" })),
  }, async ({ world, client }) => {
    await world.push(V2);
    await waitFor(() => client.lastRefreshError() !== null, "the rejected event");
    assertEquals(client.lastRefreshError()?.check, "protocol");
    assertEquals(client.closure("web")?.version, 1);
    await world.push(V3);
    await waitFor(() => client.closure("web")?.version === 3, "convergence");
    assertEquals(client.evaluate("web", "production", "banner").value, "three");
  });
});

Deno.test("FlagClient treats a protocol_downgrade resync as fatal and keeps the last model", async () => {
  await scenario({
    onEvent: firstInline((d) => [{
      event: "resync",
      id: `web:${d.version}`,
      data: JSON.stringify({
        protocol: "v2",
        namespace: "web",
        current_version: d.version,
        reason: "protocol_downgrade",
        snapshot_url: "http://127.0.0.1:1/x",
      }),
    }]),
  }, async ({ world, client }) => {
    const done = client.done();
    await world.push(V2);
    let failure: Error | null = null;
    await done.catch((e) => failure = e);
    assertEquals((failure as { code?: string } | null)?.code, "protocol_downgrade");
    assertEquals(client.fatalError()?.code, "protocol_downgrade");
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    await waitFor(() => !client.connected, "the stream to end");
  });
});

Deno.test("FlagClient.ready() rejects at once on 401", async () => {
  const world = await startWorld();
  try {
    await world.push(V1);
    const client = new FlagClient({
      server: world.inst.url,
      token: "svc_read_wrongwrongwrong",
      namespaces: ["web:*"],
    });
    const t = Date.now();
    let err: { code?: string; status?: number } | null = null;
    await client.ready().catch((e) => err = e);
    assert(Date.now() - t < 5000);
    assertEquals(err!.status, 401);
    await client.close();
  } finally {
    await world.close();
  }
});
