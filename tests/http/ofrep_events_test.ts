import { assert, assertEquals, assertMatch } from "../assert.ts";
import { eventStreamUrl } from "../../lib/http/ofrep_events.ts";
import { readSse, type SseClient } from "../events/sse_client.ts";
import { NS_TOML, ORIGIN, type World, world } from "../events/world.ts";

const PUBLIC_NS = NS_TOML + "[namespace.environments.staging]\npublic_evaluate = true\n";

/** A world with acme/web/staging public and a namespace-client token for it. */
async function clientWorld(
  settings: { keepaliveMs?: number; idleCloseMs?: number } = {},
): Promise<{ w: World; client: string }> {
  const w = await world(settings);
  await w.push({ "namespace.toml": PUBLIC_NS });
  const client = await w.mint({
    type: "namespace-client",
    tenant_slug: "acme",
    namespace_slug: "web",
    environment_slug: "staging",
  });
  return { w, client };
}

/** Opens the OFREP event stream of a token in process. */
async function open(w: World, token: string, headers: Record<string, string> = {}) {
  const ac = new AbortController();
  const res = await w.server.fetch(
    new Request(`${ORIGIN}/ofrep/v1/event-stream?token=${encodeURIComponent(token)}`, {
      headers,
      signal: ac.signal,
    }),
  );
  return readSse(res, ac);
}

Deno.test("eventStreamUrl() uses the public URL, else the request's origin, never X-Forwarded-*", () => {
  const req = new Request("http://10.0.0.5:8080/ofrep/v1/evaluate/flags", {
    headers: { "x-forwarded-proto": "https", "x-forwarded-host": "flags.example.com" },
  });
  assertEquals(
    eventStreamUrl(req, "svc_client_a b", "https://public.example/"),
    "https://public.example/ofrep/v1/event-stream?token=svc_client_a%20b",
  );
  assertEquals(
    eventStreamUrl(req, "t"),
    "http://10.0.0.5:8080/ofrep/v1/event-stream?token=t",
    "forwarding headers are forgeable: a credential-bearing URL never follows them",
  );
  assertEquals(
    eventStreamUrl(new Request("http://10.0.0.5:8080/x"), "t"),
    "http://10.0.0.5:8080/ofrep/v1/event-stream?token=t",
  );
});

Deno.test("the OFREP event stream opens with retry, a comment and one refetchEvaluation", async () => {
  const { w, client } = await clientWorld();
  let s: SseClient | undefined;
  try {
    s = await open(w, client);
    assertEquals(s.response.status, 200);
    assertEquals(s.response.headers.get("content-type"), "text/event-stream; charset=utf-8");
    assertEquals(s.response.headers.get("cache-control"), "no-store");
    const first = await s.next();
    assertEquals(first.id, "1");
    assertEquals(JSON.parse(first.data).type, "refetchEvaluation");
    assertMatch(JSON.parse(first.data).etag, /^"v1-sha256:[0-9a-f]{64}"$/);
    assertEquals(s.received[0]?.kind, "comment", "the opening comment comes first");
  } finally {
    s?.close();
    await w.close();
  }
});

Deno.test("the OFREP event stream refuses in OFREP's shape: 401 and 403 without a body", async () => {
  const { w } = await clientWorld();
  try {
    const read = await w.mint({
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    for (const [q, status] of [["", 401], [`?token=${read}`, 403], ["?token=nope", 401]] as const) {
      const res = await w.server.fetch(new Request(`${ORIGIN}/ofrep/v1/event-stream${q}`));
      assertEquals([res.status, await res.text()], [status, ""], q);
      assertEquals(res.headers.get("content-type"), null, q);
    }
  } finally {
    await w.close();
  }
});

Deno.test(
  "the OFREP event stream has the event stream's lifecycle: idle :keepalive comments, idle close, shutdown",
  async () => {
    const { w, client } = await clientWorld({ keepaliveMs: 100, idleCloseMs: 700 });
    try {
      const s = await open(w, client);
      await s.next();
      await s.ended; // the idle close: no event for 700 ms
      const keepalives = s.received.filter((r) => r.kind === "comment" && r.data === "keepalive");
      assert(keepalives.length >= 3, `only ${keepalives.length} keepalives`);
      const times = s.received.slice(1).map((r) => r.at);
      for (let i = 1; i < times.length; i++) {
        const gap = times[i]! - times[i - 1]!;
        assert(gap >= 50 && gap <= 180, `gap ${gap} ms`);
      }
      const s2 = await open(w, client, { "last-event-id": "1" });
      await s2.next((r) => r.kind === "comment");
      const version = await w.push({ "namespace.toml": PUBLIC_NS + "# changed\n" });
      const pushed = await s2.next();
      assertEquals(pushed.id, String(version), "no replay of version 1, then the push");
      await w.server.close();
      await s2.ended;
      assert(s2.done);
    } finally {
      await w.close();
    }
  },
);
