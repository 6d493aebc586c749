import { assert, assertEquals } from "../assert.ts";
import { LocalClosures, readSse, type SseClient } from "../events/sse_client.ts";
import { flagToml, NS_TOML, segmentToml } from "../events/world.ts";
import { type Installation, startInstallation } from "./installation.ts";

async function subscribe(
  inst: Installation,
  query: string,
  headers: Record<string, string> = {},
): Promise<SseClient> {
  const ac = new AbortController();
  const res = await fetch(`${inst.url}/api/v1/events?${query}`, {
    headers: { authorization: `Bearer ${inst.admin}`, ...headers },
    signal: ac.signal,
  });
  assertEquals(res.status, 200);
  return readSse(res, ac);
}

Deno.test("a real SSE client follows pushes that add, modify, remove, enter and leave files", async () => {
  const inst = await startInstallation({ args: ["--head-poll-ms", "50"] });
  const streams: SseClient[] = [];
  try {
    assertEquals(
      (await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" })).status,
      201,
    );
    assertEquals(
      (await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" }))
        .status,
      201,
    );
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/checkout.toml": flagToml("Checkout", ["beta"]),
      "flags/other.toml": flagToml("Other"),
      "segments/beta.toml": segmentToml("Beta", ["staff"]),
      "segments/staff.toml": segmentToml("Staff"),
      "segments/eu.toml": segmentToml("EU"),
    };
    const push = async () => {
      const res = await inst.api(
        "PUT",
        "/api/v1/tenants/acme/namespaces/web/manifest",
        inst.admin,
        {
          files,
        },
      );
      assert(res.status === 201, JSON.stringify(res.body));
      return res.body.version as number;
    };
    await push();
    // a narrow subscription (with a flag that does not exist yet) and a * one
    const narrow = await subscribe(inst, "ns=acme/web:checkout,later");
    const star = await subscribe(inst, "ns=acme/web:*");
    streams.push(narrow, star);
    const clients = [
      { stream: narrow, local: new LocalClosures() },
      { stream: star, local: new LocalClosures() },
    ];
    const expectVersion = async (version: number, narrowEvent: boolean) => {
      for (const { stream, local } of clients) {
        if (stream === narrow && !narrowEvent) continue;
        const e = await stream.next();
        const d = await local.apply(e); // pre-apply, per-file and post-apply checks
        assertEquals(d.version, version);
      }
    };
    await expectVersion(1, true); // first events: snapshots

    const steps: [string, () => void, boolean][] = [
      ["modify a subscribed flag", () => {
        files["flags/checkout.toml"] = flagToml("Checkout v2", ["beta"]);
      }, true],
      ["a subscribed flag starts naming a segment (enter)", () => {
        files["flags/checkout.toml"] = flagToml("Checkout v3", ["beta", "eu"]);
      }, true],
      ["…and stops naming segments (leave)", () => {
        files["flags/checkout.toml"] = flagToml("Checkout v4", ["eu"]);
      }, true],
      ["a flag outside the narrow subscription changes", () => {
        files["flags/other.toml"] = flagToml("Other v2");
      }, false],
      ["the missing subscribed flag appears (added)", () => {
        files["flags/later.toml"] = flagToml("Later", ["staff"]);
      }, true],
      ["a referenced segment is modified", () => {
        files["segments/staff.toml"] = segmentToml("Staff v2");
      }, true],
      ["a subscribed flag and its segment are removed", () => {
        delete files["flags/later.toml"];
        delete files["segments/staff.toml"];
        files["segments/beta.toml"] = segmentToml("Beta v2");
      }, true],
    ];
    for (const [what, change, narrowEvent] of steps) {
      change();
      const v = await push();
      try {
        await expectVersion(v, narrowEvent);
      } catch (err) {
        throw new Error(`${what}: ${(err as Error).message}`);
      }
    }
    const ops = new Set([...clients[0]!.local.ops, ...clients[1]!.local.ops]);
    assertEquals([...ops].sort(), ["added", "enter", "leave", "modified", "removed"]);
    assertEquals(clients[0]!.local.deliveries[0], "snapshot");
    assert(clients[0]!.local.deliveries.slice(1).every((d) => d === "inline"));
    // the narrow stream never saw version 5 (its closure did not change)
    assert(!narrow.received.some((r) => r.id === "web:5"));
    // the local copies equal what the closure endpoint serves now
    for (const { local } of clients) {
      const ns = local.namespaces.get("web")!;
      assertEquals(ns.version, 8);
    }
  } finally {
    for (const s of streams) s.close();
    await inst.close();
  }
});

Deno.test("keepalive comments and idle close with small serve settings", async () => {
  const inst = await startInstallation({
    args: ["--keepalive-ms", "150", "--idle-close-ms", "900"],
  });
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
    await inst.api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", inst.admin, {
      files: { "namespace.toml": NS_TOML },
    });
    const s = await subscribe(inst, "ns=acme/web:*");
    const started = performance.now();
    await s.next();
    await s.ended;
    const lasted = performance.now() - started;
    assert(lasted >= 800 && lasted < 3000, `closed after ${lasted} ms`);
    const keepalives = s.received.filter((r) => r.kind === "comment" && r.data === "keepalive");
    assert(keepalives.length >= 3, `${keepalives.length} keepalives`);
  } finally {
    await inst.close();
  }
});

Deno.test("with --public-url, snapshot URLs name the public origin instead of the request's", async () => {
  const inst = await startInstallation({ args: ["--public-url", "https://flags.example.com/"] });
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
    await inst.api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", inst.admin, {
      files: { "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") },
    });
    const stream = await subscribe(inst, "ns=acme/web:*");
    try {
      const first = await stream.next((r) => r.event === "version");
      const url = new URL(JSON.parse(first.data).snapshot_url);
      assertEquals(url.origin, "https://flags.example.com");
      assert(url.pathname.startsWith("/api/v1/tenants/acme/namespaces/web/closure"));
    } finally {
      stream.close();
    }
  } finally {
    await inst.close();
  }
});
