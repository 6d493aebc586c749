import { assert, assertEquals } from "../assert.ts";
import { flagToml, NS_TOML, type Res, world } from "./world.ts";

function assertError(res: Res, status: number, code: string, what: string) {
  const seen = `${what}: ${res.status} ${JSON.stringify(res.body)}`;
  assertEquals(res.status, status, seen);
  assertEquals(res.body?.code, code, seen);
  assertEquals(res.body.request_id, res.headers.get("x-request-id"), seen);
}

Deno.test("GET /events answers every pre-stream error row of the spec", async (t) => {
  const namespaces = ["web", ...Array.from({ length: 32 }, (_, i) => `n${i}`)];
  const w = await world({}, namespaces);
  try {
    await w.push({ "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A") });
    const read = await w.mint({
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const ev = (q: string, token: string | null = w.admin, h: Record<string, string> = {}) =>
      w.request("GET", `/api/v1/events${q === "" ? "" : `?${q}`}`, token, undefined, h);

    await t.step("no credential → 401 unauthorized", async () => {
      assertError(await ev("ns=web:*", null), 401, "unauthorized", "no auth");
    });

    await t.step("no ns parameter → 400 invalid_request", async () => {
      assertError(await ev(""), 400, "invalid_request", "no ns");
      assertError(await ev("since=web:1", read), 400, "invalid_request", "only since");
    });

    await t.step("malformed ns values → 400 invalid_request", async () => {
      for (const q of ["ns=web", "ns=web:", "ns=web:A", "ns=web:a&ns=web:b"]) {
        assertError(await ev(q, read), 400, "invalid_request", q);
      }
    });

    await t.step("a credential bound to no tenant must write <tenant>/<slug>", async () => {
      assertError(await ev("ns=web:*"), 400, "invalid_request", "superadmin without tenant");
      assertError(
        await ev("ns=acme/web:*&ns=other/api:*"),
        400,
        "invalid_request",
        "two tenants",
      );
    });

    await t.step("caller lacks manifest.read on a listed namespace → 403 forbidden", async () => {
      assertError(await ev("ns=web:*&ns=n0:*", read), 403, "forbidden", "read token, other ns");
      assertError(await ev("ns=other/web:*", read), 403, "forbidden", "other tenant");
      const tenantAdmin = await w.mint({ type: "tenant-admin", tenant_slug: "acme" });
      assertEquals((await w.stream("ns=web:a", tenantAdmin)).response.status, 200);
    });

    await t.step("namespace-client tokens cannot use the stream (403)", async () => {
      await w.push({
        "namespace.toml": NS_TOML + "[namespace.environments.staging]\npublic_evaluate = true\n",
        "flags/a.toml": flagToml("A"),
      });
      const client = await w.mint({
        type: "namespace-client",
        tenant_slug: "acme",
        namespace_slug: "web",
        environment_slug: "staging",
      });
      assertError(await ev("ns=web:*", client), 403, "forbidden", "client token");
    });

    await t.step("unknown namespace → 400 invalid_subscription unknown_namespace", async () => {
      const res = await ev("ns=acme/nope:*");
      assertError(res, 400, "invalid_subscription", "unknown");
      assertEquals(res.body.details.reason, "unknown_namespace");
    });

    await t.step("33 namespaces → 400 invalid_subscription too_many_namespaces", async () => {
      const q = namespaces.map((n) => `ns=acme/${n}:*`).join("&");
      const res = await ev(q);
      assertError(res, 400, "invalid_subscription", "33 namespaces");
      assertEquals(res.body.details.reason, "too_many_namespaces");
      const ok = await w.stream(
        namespaces.slice(0, 32).map((n) => `ns=acme/${n}:*`).join("&"),
        w.admin,
      );
      assertEquals(ok.response.status, 200);
    });

    await t.step("65 flags in one namespace → too_many_flags with details.namespace", async () => {
      const flags = (n: number) => Array.from({ length: n }, (_, i) => `f${i}`).join(",");
      const res = await ev(`ns=acme/n1:*&ns=acme/web:${flags(65)}`);
      assertError(res, 400, "invalid_subscription", "65 flags");
      assertEquals(res.body.details, { reason: "too_many_flags", namespace: "web" });
      assertEquals((await w.stream(`ns=acme/web:${flags(64)}`, w.admin)).response.status, 200);
      assertEquals((await w.stream("ns=acme/web:*", w.admin)).response.status, 200);
    });

    await t.step("query string longer than 8 KiB → 414 without a body", async () => {
      const res = await ev(`ns=acme/web:*&pad=${"x".repeat(8 * 1024)}`);
      assertEquals(res.status, 414);
      assertEquals(res.bytes.length, 0);
    });

    await t.step("Origin is accepted and no Access-Control-Allow-Origin is sent", async () => {
      const s = await w.stream("ns=web:a", read, { origin: "https://example.com" });
      assertEquals(s.response.status, 200);
      assertEquals(s.response.headers.get("access-control-allow-origin"), null);
      assertEquals(s.response.headers.get("content-type"), "text/event-stream; charset=utf-8");
      s.close();
      await s.ended;
    });
  } finally {
    await w.close();
  }
});

Deno.test("GET /events allows 16 concurrent connections per token; the 17th gets 429", async () => {
  const w = await world();
  try {
    const read = await w.mint({
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const open = [];
    for (let i = 0; i < 16; i++) {
      const s = await w.stream("ns=web:*", read);
      assertEquals(s.response.status, 200);
      open.push(s);
    }
    const res = await w.request("GET", "/api/v1/events?ns=web:*", read);
    assertError(res, 429, "rate_limit_exceeded", "17th");
    assert(res.headers.get("retry-after"));
    // other tokens are counted separately
    assertEquals((await w.stream("ns=acme/web:*", w.admin)).response.status, 200);
    // closing one frees a slot
    open[0]!.close();
    await open[0]!.ended;
    await new Promise((r) => setTimeout(r, 20));
    assertEquals((await w.stream("ns=web:*", read)).response.status, 200);
  } finally {
    await w.close();
  }
});
