/**
 * Traces of a real `cfgtool serve` with Deno's built-in OpenTelemetry
 * (`OTEL_DENO=true`), exported as OTLP/HTTP JSON to a receiver the test
 * runs: request spans named after their route, service spans under them,
 * KV spans under those, and a `feature_flag.evaluation` event per evaluated
 * flag with OpenFeature's attributes; no query (and so no credential in
 * one) ever reaches the exported spans.
 */
import { assert, assertEquals } from "../assert.ts";
import { runCli } from "./installation.ts";
import { startServer } from "./server_process.ts";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp_receiver.ts";
import { manifestFiles } from "./evaluation_fixture.ts";

const PUSH_ROUTE = "PUT /api/v1/tenants/:tenant/namespaces/:ns/manifest";
const EVALUATE_ROUTE = "POST /api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate";
const OFREP_ROUTE = "POST /ofrep/v1/evaluate/flags/:key";
const STREAM_ROUTE = "GET /ofrep/v1/event-stream";
/** One-time codes sign-in pages take in their query (made up: only where they land matters). */
const QUERY_SECRETS = [
  "operator-code-SECRET",
  "oidc-code-SECRET",
  "oidc-state-SECRET",
  "BCDF-SECRET",
];
const QUERY_SECRET_PATHS = [
  `/auth/operator?code=${QUERY_SECRETS[0]}`,
  `/auth/oidc/callback?code=${QUERY_SECRETS[1]}&state=${QUERY_SECRETS[2]}`,
  `/auth/cli/device?user_code=${QUERY_SECRETS[3]}`,
];

/**
 * Where `secret` appears in one raw OTLP/JSON export: `deno url.full` and
 * `deno url.query` for the first value of those keys on a server span (the
 * URL Deno records), `<where>` for anywhere else.
 */
function secretPlaces(body: string, secret: string): string[] {
  if (!body.includes(secret)) return [];
  const data = JSON.parse(body);
  const places: string[] = [];
  const batches = [
    ...(data.resourceSpans ?? []),
    ...(data.resourceLogs ?? []),
    ...(data.resourceMetrics ?? []),
  ];
  for (const batch of batches) {
    if (JSON.stringify(batch.resource ?? {}).includes(secret)) places.push("resource");
    const spans = (batch.scopeSpans ?? []).flatMap((s: { spans?: unknown[] }) => s.spans ?? []);
    // deno-lint-ignore no-explicit-any
    for (const span of spans as any[]) {
      const seen = new Set<string>();
      for (const { key, value } of span.attributes ?? []) {
        const first = !seen.has(key);
        seen.add(key);
        if (!JSON.stringify(value).includes(secret)) continue;
        const deno = first && span.kind === 2 && (key === "url.full" || key === "url.query");
        places.push(deno ? `deno ${key}` : `span ${span.name} attribute ${key}`);
      }
      const { attributes: _a, ...rest } = span;
      if (JSON.stringify(rest).includes(secret)) {
        places.push(`span ${span.name} (name, events, links or status)`);
      }
    }
    if (
      (batch.scopeLogs ?? batch.scopeMetrics) !== undefined &&
      JSON.stringify(batch).includes(secret)
    ) {
      places.push(batch.scopeLogs ? "log records" : "metrics");
    }
  }
  return places;
}

/** The chain of span names from a span up to its root. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): string[] {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const names: string[] = [];
  for (let s: ReceivedSpan | undefined = span; s; s = byId.get(s.parentSpanId)) {
    names.push(s.name);
  }
  return names;
}

Deno.test("request → service → KV spans and evaluation events reach an OTLP collector", async () => {
  const otlp = startOtlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-traces-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const boot = await runCli(["admin", "bootstrap", "--kv", kvPath]);
  assertEquals(boot.code, 0, boot.stderr);
  const admin = boot.stdout.trim().split("\n").at(-1)!;
  const server = await startServer({
    kv: kvPath,
    env: {
      OTEL_DENO: "true",
      OTEL_SERVICE_NAME: "cfgtool",
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "50", // export spans quickly
      OTEL_METRIC_EXPORT_INTERVAL: "600000", // not the point here
    },
  });
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: body === undefined ? null : JSON.stringify(body),
    });
    const text = await res.text();
    assert(res.status < 300, `${method} ${path} → ${res.status} ${text}`);
    return JSON.parse(text);
  };
  const ofrepHeaders = {
    "x-cfgtool-tenant": "acme",
    "x-cfgtool-namespace": "web",
    "x-cfgtool-environment": "staging",
  };
  try {
    await call("POST", "/api/v1/tenants", { slug: "acme" });
    await call("POST", "/api/v1/tenants/acme/namespaces", { slug: "web" });
    await call("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", manifestFiles());
    const evaluated = await call(
      "POST",
      "/api/v1/tenants/acme/namespaces/web/environments/staging/evaluate",
      { flag: "theme", context: { targeting_key: "user-42", user: { email: "a@example.com" } } },
    );
    assertEquals(evaluated.variation, "dark");
    const ofrep = await fetch(`${server.url}/ofrep/v1/evaluate/flags/nope`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, ...ofrepHeaders },
      body: JSON.stringify({ context: { targetingKey: "user-7" } }),
    });
    assertEquals(ofrep.status, 404);
    await ofrep.body?.cancel();

    // an OFREP event stream carries its credential in the query
    const client = await call("POST", "/api/v1/tokens", {
      type: "namespace-client",
      name: "browser",
      tenant_slug: "acme",
      namespace_slug: "web",
      environment_slug: "staging",
    });
    const stream = await fetch(`${server.url}/ofrep/v1/event-stream?token=${client.secret}`);
    assertEquals(stream.status, 200);
    await stream.body!.getReader().read();
    await stream.body?.cancel().catch(() => {});
    // hono decodes parameter names: `tok%65n` is `token` too
    const spelled = await fetch(`${server.url}/ofrep/v1/event-stream?tok%65n=${client.secret}`);
    assertEquals(spelled.status, 200);
    await spelled.body!.getReader().read();
    await spelled.body?.cancel().catch(() => {});
    // the one-time codes of sign-in pages travel in the query too
    for (const path of QUERY_SECRET_PATHS) {
      const res = await fetch(`${server.url}${path}`, { redirect: "manual" });
      await res.body?.cancel();
    }

    const spans = await otlp.waitFor((s) =>
      [PUSH_ROUTE, EVALUATE_ROUTE, OFREP_ROUTE].every((n) => s.some((x) => x.name === n)) &&
      s.filter((x) => x.name === STREAM_ROUTE).length === 2 &&
      QUERY_SECRET_PATHS.every((p) =>
        s.some((x) => x.kind === 2 && x.attributes["url.path"] === p.split("?")[0])
      )
    );

    // the push: request → cfgtool.service.push_manifest → cfgtool.kv.commit
    const push = spans.find((s) => s.name === PUSH_ROUTE)!;
    assertEquals(push.kind, 2, "a server span");
    assertEquals(push.attributes["http.route"], "/api/v1/tenants/:tenant/namespaces/:ns/manifest");
    assertEquals(push.attributes["http.response.status_code"], "201"); // as Deno records it
    const service = spans.find((s) =>
      s.name === "cfgtool.service.push_manifest" && s.parentSpanId === push.spanId
    );
    assert(service, "the service span is a child of the request span");
    const commits = spans.filter((s) =>
      s.name === "cfgtool.kv.commit" && s.traceId === push.traceId
    );
    assert(commits.length > 0, "the push commits through the KV inside its trace");
    for (const c of commits) {
      const chain = ancestry(spans, c);
      assertEquals(chain.at(-1), PUSH_ROUTE, chain.join(" < "));
      assert(chain.includes("cfgtool.service.push_manifest"), chain.join(" < "));
      assertEquals(c.kind, 3, "a client span");
      assertEquals(c.attributes["db.system.name"], "deno_kv");
    }

    // the evaluation: KV reads under the request, one evaluation event
    const evaluation = spans.find((s) => s.name === EVALUATE_ROUTE)!;
    assert(
      spans.some((s) => s.name.startsWith("cfgtool.kv.") && s.parentSpanId === evaluation.spanId),
      "the evaluation's KV reads are children of its request span",
    );
    assertEquals(evaluation.events.map((e) => [e.name, e.attributes]), [[
      "feature_flag.evaluation",
      {
        "feature_flag.key": "theme",
        "feature_flag.result.variant": "dark",
        "feature_flag.result.reason": "targeting_match",
        "feature_flag.provider.name": "cfgtool",
        "feature_flag.set.id": "acme/web/staging",
        "feature_flag.version": "1",
        "feature_flag.context.id": "user-42",
      },
    ]]);

    // OFREP: an unknown flag is an error event
    const single = spans.find((s) => s.name === OFREP_ROUTE)!;
    assertEquals(single.attributes["http.response.status_code"], "404");
    const [event] = single.events;
    assertEquals(event?.attributes["feature_flag.key"], "nope");
    assertEquals(event?.attributes["feature_flag.result.reason"], "error");
    assertEquals(event?.attributes["error.type"], "flag_not_found");
    assertEquals(event?.attributes["feature_flag.context.id"], "user-7");

    // the stream's span has the route for a name and never the credential
    const streamSpan = spans.find((s) => s.name === STREAM_ROUTE)!;
    assertEquals(streamSpan.attributes["url.query"], "");
    assertEquals(streamSpan.attributes["url.full"], `${server.url}/ofrep/v1/event-stream`);
    assertEquals(streamSpan.attributes["url.path"], "/ofrep/v1/event-stream");
    // Where a secret appears in what was exported: Deno records the URL as the client sent it
    // (its own first url.full and url.query of the request span) and setAttribute can only add
    // a later value of the same key, not remove the first; anywhere else would be a leak of ours.
    for (const p of QUERY_SECRET_PATHS) {
      const span = spans.find((s) => s.kind === 2 && s.attributes["url.path"] === p.split("?")[0])!;
      assertEquals(span.attributes["url.query"], "", "the last url.query is the query-less one");
      assertEquals(span.attributes["url.full"], `${server.url}${p.split("?")[0]}`);
    }
    const exported = otlp.exports().map((e) => e.body);
    for (const secret of [client.secret, ...QUERY_SECRETS]) {
      const found = exported.flatMap((b) => secretPlaces(b, secret));
      assert(found.length > 0 || secret !== client.secret, "the test sends the secret");
      assertEquals(
        found.filter((f) => f !== "deno url.full" && f !== "deno url.query"),
        [],
        `${secret} reached the exports`,
      );
    }

    // background work (credential and head pollers) makes no KV spans of its own
    const roots = spans.filter((s) => s.name.startsWith("cfgtool.kv.") && s.parentSpanId === "");
    assertEquals(roots.map((s) => s.name), []);
  } finally {
    await server.stop();
    await otlp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
