import { assert, assertEquals } from "../assert.ts";
import { ServiceMetrics } from "../../lib/metrics/service_metrics.ts";
import { Histogram, Registry } from "prom-client";
import { VERSION } from "../../lib/version.ts";
import { parseExposition, samples, total } from "./exposition.ts";

const scrape = async (m: ServiceMetrics) => parseExposition(await m.render());

Deno.test("two servers' metrics in one process never count into each other", async () => {
  const a = new ServiceMetrics();
  const b = new ServiceMetrics();
  a.observeRequest("GET", "/healthz", 200, 0.001);
  a.observeRequest("GET", "/healthz", 200, 0.001);
  b.observeRequest("GET", "/healthz", 200, 0.001);
  assertEquals(total(await scrape(a), "cfgtool_http_requests_total"), 2);
  assertEquals(total(await scrape(b), "cfgtool_http_requests_total"), 1);
});

Deno.test("the exposition parses, with the process metrics after the server's", async () => {
  const m = new ServiceMetrics();
  const text = await m.render();
  const families = parseExposition(text);
  assertEquals(samples(families, "cfgtool_build_info"), [{
    labels: { version: VERSION },
    value: 1,
  }]);
  for (const name of ["process_resident_memory_bytes", "process_cpu_seconds_total"]) {
    assert(families.has(name), `${name} missing`);
  }
  assert(text.indexOf("cfgtool_build_info") < text.indexOf("process_resident_memory_bytes"));
  for (const [name, f] of families) {
    if (name.startsWith("cfgtool_")) assert(f.help !== "", `${name} has no help`);
  }
});

Deno.test("requests count, and their latency is a histogram, by method, route and status", async () => {
  const m = new ServiceMetrics();
  m.observeRequest("POST", "/e/:id", 200, 0.0003);
  m.observeRequest("POST", "/e/:id", 200, 0.002);
  m.observeRequest("POST", "/e/:id", 404, 0.0001);
  const f = await scrape(m);
  assertEquals(total(f, "cfgtool_http_requests_total", { route: "/e/:id", status: "200" }), 2);
  assertEquals(total(f, "cfgtool_http_requests_total", { route: "/e/:id", status: "404" }), 1);
  const [latency] = samples(f, "cfgtool_http_request_duration_seconds", {
    route: "/e/:id",
    status: "200",
  });
  assertEquals(latency!.count, 2);
  assertEquals(latency!.buckets!["0.0005"], 1);
  assertEquals(total(f, "cfgtool_http_request_duration_seconds", { route: "/e/:id" }), 3);
  assertEquals(f.get("cfgtool_http_request_duration_seconds")!.type, "HISTOGRAM");
});

Deno.test("pushes, their sizes, rollbacks and audit pruning are counted", async () => {
  const m = new ServiceMetrics();
  m.pushed(3000, true);
  m.pushed(100, false);
  m.rolledBack(true);
  m.auditPruned({ auditEntries: 7, tokens: 2 });
  m.auditPruned({ auditEntries: 1, tokens: 0 });
  const f = await scrape(m);
  assertEquals(total(f, "cfgtool_manifest_pushes_total", { result: "changed" }), 1);
  assertEquals(total(f, "cfgtool_manifest_pushes_total", { result: "unchanged" }), 1);
  const [size] = samples(f, "cfgtool_manifest_push_size_bytes");
  assertEquals([size!.count, size!.sum, size!.buckets!["4096"]], [2, 3100, 2]);
  assertEquals(total(f, "cfgtool_manifest_rollbacks_total", { result: "changed" }), 1);
  assertEquals(total(f, "cfgtool_audit_retention_pruned_total", { record: "audit_entry" }), 8);
  assertEquals(total(f, "cfgtool_audit_retention_pruned_total", { record: "token" }), 2);
});

Deno.test("KV operations: latency by op, errors and commit conflicts", async () => {
  const m = new ServiceMetrics();
  m.observeKv("get", 0.0001, "ok");
  m.observeKv("commit", 0.001, "conflict");
  m.observeKv("set", 0.01, "error");
  const f = await scrape(m);
  assertEquals(total(f, "cfgtool_kv_operation_duration_seconds", { op: "get" }), 1);
  assertEquals(total(f, "cfgtool_kv_operation_errors_total", { op: "set" }), 1);
  assertEquals(total(f, "cfgtool_kv_commit_conflicts_total"), 1);
});

Deno.test("stream gauges and cache counters are read from their sources at each scrape", async () => {
  const m = new ServiceMetrics();
  let open = 2;
  m.addStreams("ofrep", () => open);
  const remove = m.addStreams("ofrep", () => 1);
  const cache = { hits: 5, misses: 1, size: 3 };
  m.addCache("models", cache);
  let f = await scrape(m);
  assertEquals(total(f, "cfgtool_event_streams_open", { api: "ofrep" }), 3);
  assertEquals(total(f, "cfgtool_cache_requests_total", { cache: "models", result: "hit" }), 5);
  assertEquals(total(f, "cfgtool_cache_entries", { cache: "models" }), 3);
  open = 0;
  remove();
  cache.hits = 9;
  f = await scrape(m);
  assertEquals(total(f, "cfgtool_event_streams_open", { api: "ofrep" }), 0);
  assertEquals(total(f, "cfgtool_cache_requests_total", { cache: "models", result: "hit" }), 9);
});

Deno.test("evaluations are exposed with their bounded labels", async () => {
  const m = new ServiceMetrics({ evaluationBounds: { maxSeriesPerNamespace: 1 } });
  const web = m.evaluations("ofrep", "acme", "web");
  for (const flag of ["a", "b", "c"]) web.add(flag, "on", "SPLIT");
  const f = await scrape(m);
  assertEquals(samples(f, "cfgtool_evaluations_total").map((s) => [s.labels.flag, s.value]), [
    ["a", 1],
    ["_other", 2],
  ]);
});

Deno.test("switched off, nothing is recorded", async () => {
  const m = new ServiceMetrics({ enabled: false });
  m.observeRequest("GET", "/healthz", 200, 0.001);
  m.evaluations("cfgtool", "a", "b").add("c", "d", "DEFAULT");
  m.pushed(1, true);
  m.observeKv("get", 0.001, "ok");
  const f = await scrape(m);
  assertEquals(total(f, "cfgtool_http_requests_total"), 0);
  assertEquals(total(f, "cfgtool_evaluations_total"), 0);
  assertEquals(total(f, "cfgtool_manifest_pushes_total"), 0);
  assertEquals(total(f, "cfgtool_kv_operation_duration_seconds"), 0);
});

Deno.test("request latencies render as prom-client's own histogram renders the same observations", async () => {
  const m = new ServiceMetrics();
  const seen: [string, string, number, number][] = [
    ["GET", "/healthz", 200, 0.0001],
    ["GET", "/healthz", 200, 0.0002], // on a bucket's bound: counted in it
    ["POST", "/ofrep/v1/evaluate/flags", 200, 0.003],
    ["POST", "/ofrep/v1/evaluate/flags", 401, 0.07],
    ["GET", "/healthz", 200, 3],
    ["GET", "/healthz", 503, 99], // past the last bound: +Inf only
  ];
  for (const [method, route, status, s] of seen) m.observeRequest(method, route, status, s);
  const text = await m.render();
  const les = [...text.matchAll(/cfgtool_http_request_duration_seconds_bucket\{le="([^"]+)"/g)]
    .map((x) => x[1]!);
  const bounds = [...new Set(les)].filter((b) => b !== "+Inf").map(Number);
  assert(bounds.length > 5, text);
  const registry = new Registry();
  const reference = new Histogram({
    name: "cfgtool_http_request_duration_seconds",
    help: "x",
    labelNames: ["method", "route", "status"],
    buckets: bounds,
    registers: [registry],
  });
  for (const [method, route, status, s] of seen) {
    reference.observe({ method, route, status: String(status) }, s);
  }
  const lines = (t: string) =>
    t.split("\n").filter((l) => l.startsWith("cfgtool_http_request_duration_seconds_")).sort();
  assertEquals(lines(text), lines(await registry.metrics()));
});
