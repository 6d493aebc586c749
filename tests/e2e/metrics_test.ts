/**
 * `GET /metrics` of a real `cfgtool serve` process, scraped from loopback
 * (no token needed there) and read with a Prometheus text-format parser:
 * evaluations through both APIs, a push, a rollback and open event streams
 * show up as counters and gauges.
 */
import { assert, assertEquals } from "../assert.ts";
import { evalPath, manifestFiles, startFixture } from "./evaluation_fixture.ts";
import { type Family, parseExposition, samples, total } from "../metrics/exposition.ts";

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  assertEquals(res.status, 200, text);
  assertEquals(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(text);
}

Deno.test("a real server's /metrics counts evaluations, pushes, rollbacks and open streams", async () => {
  const f = await startFixture();
  const { inst, tokens } = f;
  const streams: Response[] = [];
  try {
    const before = await scrape(inst.url);
    const pushesBefore = total(before, "cfgtool_manifest_pushes_total", { result: "changed" });

    // evaluations: two through /evaluate, one bulk, two through OFREP
    for (let i = 0; i < 2; i++) {
      const res = await inst.api("POST", evalPath("acme", "web", "staging"), tokens.read, {
        flag: "theme",
      });
      assertEquals([res.status, res.body.reason], [200, "DEFAULT"]);
    }
    const all = await inst.api("POST", evalPath("acme", "web", "staging", true), tokens.read, {
      context: { user: { beta: true } },
    });
    assertEquals(all.status, 200);
    const ofrep = await inst.api("POST", "/ofrep/v1/evaluate/flags/new-checkout", tokens.client, {
      context: { targetingKey: "u-1", user: { beta: true } },
    });
    assertEquals([ofrep.status, ofrep.body.variant], [200, "on"]);
    const ofrepBulk = await inst.api("POST", "/ofrep/v1/evaluate/flags", tokens.client, {
      context: { targetingKey: "u-1" },
    });
    assertEquals(ofrepBulk.status, 200);

    // a push that changes the manifest, then a rollback
    const pushed = await f.push(manifestFiles({ "flags/banner.toml": null }));
    assertEquals(pushed.status, 201);
    const back = await inst.api(
      "POST",
      "/api/v1/tenants/acme/namespaces/web/rollback",
      inst.admin,
      { version: 1 },
    );
    assertEquals(back.status, 201, JSON.stringify(back.body));

    // two event streams held open while scraping
    streams.push(
      await fetch(`${inst.url}/api/v1/events?ns=acme/web:*`, {
        headers: { authorization: `Bearer ${tokens.read}` },
      }),
      await fetch(`${inst.url}/ofrep/v1/event-stream?token=${tokens.client}`),
    );
    for (const s of streams) assertEquals(s.status, 200);

    const m = await scrape(inst.url);
    const evals = (labels: Record<string, string>) =>
      total(m, "cfgtool_evaluations_total", { tenant: "acme", namespace: "web", ...labels });
    // theme: the two single evaluations and the bulk one
    assertEquals(
      evals({ api: "cfgtool", flag: "theme", variation: "light", reason: "DEFAULT" }),
      3,
    );
    assertEquals(evals({ api: "cfgtool", flag: "new-checkout", reason: "TARGETING_MATCH" }), 1);
    // no targeting key: the rollout is skipped
    assertEquals(evals({ api: "cfgtool", flag: "cart-limit", reason: "SPLIT" }), 0);
    assertEquals(evals({ api: "cfgtool" }), 6, "2 single + 4 flags in the bulk answer");
    assertEquals(evals({ api: "ofrep", flag: "new-checkout", variation: "on" }), 1);
    assertEquals(evals({ api: "ofrep" }), 1 + 4);

    const requests = (route: string, status: string) =>
      total(m, "cfgtool_http_requests_total", { route, status });
    assertEquals(
      requests("/api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate", "200"),
      2,
    );
    assertEquals(requests("/ofrep/v1/evaluate/flags/:key", "200"), 1);
    assertEquals(requests("/api/v1/tenants/:tenant/namespaces/:ns/manifest", "201"), 4);

    assertEquals(
      total(m, "cfgtool_manifest_pushes_total", { result: "changed" }) - pushesBefore,
      1,
    );
    const [sizes] = samples(m, "cfgtool_manifest_push_size_bytes");
    assertEquals(sizes!.count, 4, "three fixture pushes and ours");
    assertEquals(total(m, "cfgtool_manifest_rollbacks_total", { result: "changed" }), 1);

    assertEquals(total(m, "cfgtool_event_streams_open", { api: "cfgtool" }), 1);
    assertEquals(total(m, "cfgtool_event_streams_open", { api: "ofrep" }), 1);

    for (const op of ["get", "commit"]) {
      assert(total(m, "cfgtool_kv_operation_duration_seconds", { op }) > 0, `no ${op}`);
    }
    assert(total(m, "cfgtool_cache_requests_total", { cache: "credentials", result: "hit" }) > 0);
    assert(total(m, "cfgtool_cache_requests_total", { cache: "models" }) >= 5);
    assert(total(m, "process_resident_memory_bytes") > 0);
    assertEquals(samples(m, "cfgtool_build_info").length, 1);

    // the streams end: the gauges go back to zero
    for (const s of streams.splice(0)) await s.body?.cancel();
    let open = -1;
    for (let i = 0; i < 50 && open !== 0; i++) {
      await new Promise((r) => setTimeout(r, 40));
      open = total(await scrape(inst.url), "cfgtool_event_streams_open");
    }
    assertEquals(open, 0);
  } finally {
    for (const s of streams) await s.body?.cancel();
    await inst.close();
  }
});
