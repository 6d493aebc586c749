/**
 * FlagClient against an in-memory fake of the service (an injected fetch):
 * the protocol paths that a real server does not produce on demand.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { packArchive } from "../../lib/closure/archive.ts";
import { type ChangeEvent, FlagClient, type RefreshError } from "../../lib/client/flag_client.ts";
import { CfgtoolError } from "../../lib/errors.ts";
import { NS_TOML, stringFlag, waitFor } from "./fixture.ts";
import { base64 } from "base";
import { sha256Hex } from "../../lib/bytes.ts";

const ORIGIN = "http://svc.test";
const enc = new TextEncoder();

interface Stream {
  url: URL;
  headers: Headers;
  controller: ReadableStreamDefaultController<Uint8Array>;
}

class FakeService {
  readonly versions = new Map<number, Map<string, Uint8Array>>();
  readonly streams: Stream[] = [];
  readonly closureRequests: { url: URL; headers: Headers }[] = [];
  /** Answers for signed closure requests (default: serve). */
  signedStatus = 200;

  setVersion(v: number, banner: string): void {
    this.versions.set(
      v,
      new Map([
        ["namespace.toml", enc.encode(NS_TOML)],
        ["flags/banner.toml", enc.encode(stringFlag(banner))],
      ]),
    );
  }

  hash(v: number): Promise<string> {
    return closureHash(this.versions.get(v)!);
  }

  readonly fetch: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const headers = new Headers(init?.headers);
    if (url.pathname === "/api/v1/events") {
      let controller!: ReadableStreamDefaultController<Uint8Array>;
      const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
      init?.signal?.addEventListener("abort", () => {
        try {
          controller.error(new DOMException("aborted", "AbortError"));
        } catch {
          // closed
        }
      });
      this.streams.push({ url, headers, controller });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    const m = /^\/api\/v1\/tenants\/acme\/namespaces\/web\/closure$/.exec(url.pathname);
    if (m !== null) {
      this.closureRequests.push({ url, headers });
      if (url.searchParams.has("token") && this.signedStatus !== 200) {
        return Response.json({ code: "closure_token_invalid", message: "expired" }, {
          status: this.signedStatus,
        });
      }
      const v = Number(url.searchParams.get("version"));
      const files = this.versions.get(v);
      if (files === undefined) {
        return Response.json({ code: "namespace_not_found" }, { status: 404 });
      }
      const etag = `"v${v}-${await closureHash(files)}"`;
      if (headers.get("if-none-match") === etag) {
        return new Response(null, { status: 304, headers: { etag } });
      }
      return new Response(await packArchive(files) as Uint8Array<ArrayBuffer>, {
        headers: { etag, "content-type": "application/x-tar" },
      });
    }
    return new Response("not found", { status: 404 });
  };

  get last(): Stream {
    return this.streams.at(-1)!;
  }

  send(event: string, id: string, data: unknown): void {
    this.raw(`event: ${event}\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  raw(text: string): void {
    this.last.controller.enqueue(enc.encode(text));
  }

  end(): void {
    this.last.controller.close();
  }

  async snapshot(v: number, origin = ORIGIN): Promise<void> {
    this.send("version", `web:${v}`, {
      protocol: "v2",
      namespace: "web",
      version: v,
      prev_version: null,
      prev_closure_hash: null,
      closure_hash: await this.hash(v),
      delivery: "snapshot",
      snapshot_url:
        `${origin}/api/v1/tenants/acme/namespaces/web/closure?version=${v}&subscription=Kg&token=t.s`,
      snapshot_size_bytes: 3072,
    });
  }

  async inline(prev: number, v: number): Promise<void> {
    const bytes = this.versions.get(v)!.get("flags/banner.toml")!;
    this.send("version", `web:${v}`, {
      protocol: "v2",
      namespace: "web",
      version: v,
      prev_version: prev,
      prev_closure_hash: await this.hash(prev),
      closure_hash: await this.hash(v),
      delivery: "inline",
      files: [{
        path: "flags/banner.toml",
        op: "modified",
        sha256: await sha256Hex(bytes),
        content_b64: base64.encode(bytes),
      }],
    });
  }

  resync(v: number, reason = "unknown_since"): void {
    this.send("resync", `web:${v}`, {
      protocol: "v2",
      namespace: "web",
      current_version: v,
      reason,
      snapshot_url:
        `${ORIGIN}/api/v1/tenants/acme/namespaces/web/closure?version=${v}&subscription=Kg&token=t.s`,
    });
  }
}

async function withClient(
  fn: (
    svc: FakeService,
    client: FlagClient,
    changes: ChangeEvent[],
    errors: RefreshError[],
  ) => Promise<void>,
  options: { idleTimeoutMs?: number } = {},
): Promise<void> {
  const svc = new FakeService();
  for (let v = 1; v <= 3; v++) svc.setVersion(v, `b${v}`);
  const client = new FlagClient({
    server: `${ORIGIN}/`,
    token: "svc_test",
    namespaces: ["web:*"],
    fetch: svc.fetch,
    backoff: { initialMs: 5, maxMs: 20 },
    ...options,
  });
  const changes: ChangeEvent[] = [];
  const errors: RefreshError[] = [];
  client.onChange((c) => changes.push(c));
  client.onError((e) => errors.push(e));
  try {
    await fn(svc, client, changes, errors);
  } finally {
    await client.close();
  }
}

Deno.test("FlagClient reconnects with Last-Event-ID and since; a snapshot of the held closure costs no download", async () => {
  await withClient(async (svc, client, changes) => {
    await waitFor(() => svc.streams.length === 1, "the stream");
    assertEquals(svc.last.url.searchParams.getAll("ns"), ["web:*"]);
    assertEquals(svc.last.headers.get("authorization"), "Bearer svc_test");
    assertEquals(svc.last.headers.get("last-event-id"), null);
    await svc.snapshot(1);
    await client.ready(2000);
    assertEquals(svc.closureRequests.length, 1);
    assertEquals(
      svc.closureRequests[0]!.headers.get("authorization"),
      null,
      "signed URL, no bearer",
    );
    await svc.inline(1, 2);
    await waitFor(() => client.closure("web")?.version === 2, "v2");
    svc.end();
    await waitFor(() => svc.streams.length === 2, "the reconnect");
    assertEquals(svc.last.headers.get("last-event-id"), "web:2");
    assertEquals(svc.last.url.searchParams.get("since"), "web:2");
    await svc.snapshot(2);
    await svc.inline(2, 3);
    await waitFor(() => client.closure("web")?.version === 3, "v3");
    assertEquals(svc.closureRequests.length, 1, "the held closure was not downloaded again");
    assertEquals(changes.map((c) => `${c.version}:${c.delivery}`), [
      "1:snapshot",
      "2:inline",
      "3:inline",
    ]);
    assertEquals(client.evaluate("web", "production", "banner").value, "b3");
  });
});

Deno.test("FlagClient ignores keepalives and unknown events, and rejects a version that does not increase", async () => {
  await withClient(async (svc, client, _changes, errors) => {
    await waitFor(() => svc.streams.length === 1, "the stream");
    svc.raw(":keepalive\n\nevent: ping\ndata: {}\n\n");
    await svc.snapshot(1);
    await client.ready(2000);
    svc.raw(":keepalive\n\n");
    await svc.inline(1, 2);
    await waitFor(() => client.closure("web")?.version === 2, "v2");
    await svc.inline(1, 2); // a repeat of version 2
    await waitFor(() => errors.length === 1, "the rejection");
    assertEquals(errors[0]!.check, "ordering");
    assertEquals(client.closure("web")?.version, 2);
  });
});

Deno.test("FlagClient handles resync: a lower version (unknown_since) verified by the ETag, and 304 for the held one", async () => {
  await withClient(async (svc, client, changes, errors) => {
    await waitFor(() => svc.streams.length === 1, "the stream");
    await svc.snapshot(2);
    await client.ready(2000);
    svc.resync(1);
    await waitFor(() => client.closure("web")?.version === 1, "the resync snapshot");
    assertEquals(changes.at(-1)!.delivery, "resync");
    assertEquals(client.evaluate("web", "production", "banner").value, "b1");
    // inline events continue from the resync version
    await svc.inline(1, 2);
    await waitFor(() => client.closure("web")?.version === 2, "inline after the resync");
    // a resync to the version held: the conditional request answers 304, nothing changes
    const before = changes.length;
    svc.resync(2, "version_too_old");
    await waitFor(() => svc.closureRequests.length === 3, "the conditional request");
    const req = svc.closureRequests[2]!;
    assertEquals(req.headers.get("if-none-match"), client.closure("web")!.etag);
    await new Promise((r) => setTimeout(r, 30));
    assertEquals(changes.length, before);
    assertEquals(errors, []);
  });
});

Deno.test("FlagClient uses the bearer closure endpoint when the signed URL is refused or on another host", async () => {
  await withClient(async (svc, client, _changes, errors) => {
    svc.signedStatus = 401;
    await waitFor(() => svc.streams.length === 1, "the stream");
    await svc.snapshot(1);
    await client.ready(2000);
    assertEquals(errors.map((e) => e.code), ["closure_token_invalid"]);
    const bearer = svc.closureRequests[1]!;
    assertEquals(bearer.headers.get("authorization"), "Bearer svc_test");
    assertEquals(bearer.url.searchParams.get("token"), null);
    assertEquals(bearer.url.searchParams.get("subscription"), "Kg");
    assertEquals(bearer.url.searchParams.get("version"), "1");

    svc.signedStatus = 200;
    svc.send("version", "web:2", {
      protocol: "v2",
      namespace: "web",
      version: 2,
      prev_version: 1,
      prev_closure_hash: await svc.hash(1),
      closure_hash: await svc.hash(2),
      delivery: "snapshot",
      snapshot_url: "http://evil.test/steal?token=x",
      snapshot_size_bytes: 1,
    });
    await waitFor(() => client.closure("web")?.version === 2, "v2 through the bearer endpoint");
    assertEquals(errors.length, 1, "a foreign snapshot_url is skipped, not an error");
    assert(svc.closureRequests.every((r) => r.url.origin === ORIGIN));
  });
});

Deno.test("FlagClient.ready() times out naming the namespaces; close() rejects waiters and stops", async () => {
  await withClient(async (svc, client) => {
    await waitFor(() => svc.streams.length === 1, "the stream");
    const err = await assertRejects(() => client.ready(30), CfgtoolError);
    assertEquals(err.code, "ready_timeout");
    assertStringIncludes(err.message, "web");
    const pending = client.ready(60_000);
    await client.close();
    const closed = await assertRejects(() => pending, CfgtoolError);
    assertEquals(closed.code, "client_closed");
    await client.done();
    assertEquals(client.evaluate("web", "production", "banner").reason, "ERROR");
  });
});

Deno.test("FlagClient drops a silent stream after idleTimeoutMs and reconnects", async () => {
  await withClient(async (svc, _client, _changes, errors) => {
    await waitFor(() => svc.streams.length === 1, "the stream");
    await waitFor(() => svc.streams.length === 2, "the reconnect", 3000);
    assertEquals(errors[0]!.code, "stream_idle");
  }, { idleTimeoutMs: 80 });
});

Deno.test("FlagClient rejects bad options with UsageError", () => {
  for (
    const opts of [
      { server: "ftp://x", token: "t", namespaces: ["web:*"] },
      { server: "http://x", token: "", namespaces: ["web:*"] },
      { server: "http://x", token: "t", namespaces: [] },
      { server: "http://x", token: "t", namespaces: ["web"] },
      { server: "http://x", token: "t", namespaces: ["web:*", "web:a"] },
    ]
  ) {
    let threw = false;
    try {
      new FlagClient(opts);
    } catch (err) {
      threw = (err as CfgtoolError).code === "invalid_request";
    }
    assert(threw, JSON.stringify(opts));
  }
});
