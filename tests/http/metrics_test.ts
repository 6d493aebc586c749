/**
 * `GET /metrics` of an in-process server (lib/http/metrics.ts): who may
 * read it (the peer address is given to the handler as `Deno.serve` would,
 * so remote clients can be played without sending traffic anywhere), what
 * requests and evaluations it counts, and that a client cannot grow its
 * label sets.
 */
import { assert, assertEquals } from "../assert.ts";
import { createServer, type FlagServer, type ServerOptions } from "../../lib/server/create.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { manifestFiles } from "../e2e/evaluation_fixture.ts";
import { parseExposition, samples, total } from "../metrics/exposition.ts";

const TOKEN = "metrics-token-for-tests";
const peer = (hostname: string): Deno.ServeHandlerInfo =>
  ({ remoteAddr: { transport: "tcp", hostname, port: 40000 } }) as Deno.ServeHandlerInfo;
const LOCAL = peer("127.0.0.1");
const REMOTE = peer("192.0.2.7"); // TEST-NET-1: nothing is sent there, the handler is told so

interface World {
  server: FlagServer;
  admin: string;
  call(method: string, path: string, options?: {
    bearer?: string;
    json?: unknown;
    headers?: Record<string, string>;
    from?: Deno.ServeHandlerInfo;
  }): Promise<Response>;
  scrape(from?: Deno.ServeHandlerInfo, headers?: Record<string, string>): Promise<Response>;
}

async function withWorld(
  options: Partial<ServerOptions>,
  fn: (w: World) => Promise<void>,
): Promise<void> {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const { secret: admin } = await bootstrapSuperadmin(kv, key);
  const server = createServer({ kv, key, log: () => {}, ...options });
  const call: World["call"] = (method, path, o = {}) => {
    const headers = new Headers(o.headers);
    if (o.bearer) headers.set("authorization", `Bearer ${o.bearer}`);
    if (o.json !== undefined) headers.set("content-type", "application/json");
    const body = o.json === undefined ? null : JSON.stringify(o.json);
    return Promise.resolve(
      server.fetch(
        new Request(`http://127.0.0.1:8080${path}`, { method, headers, body }),
        o.from ?? LOCAL,
      ),
    );
  };
  try {
    await fn({
      server,
      admin,
      call,
      scrape: (from = LOCAL, headers = {}) => call("GET", "/metrics", { from, headers }),
    });
  } finally {
    await server.close();
    kv.close();
  }
}

async function setUpAcmeWeb(w: World): Promise<void> {
  const ok = async (res: Promise<Response>) => {
    const r = await res;
    const text = await r.text();
    assert(r.status < 300, `${r.status} ${text}`);
  };
  await ok(w.call("POST", "/api/v1/tenants", { bearer: w.admin, json: { slug: "acme" } }));
  await ok(
    w.call("POST", "/api/v1/tenants/acme/namespaces", { bearer: w.admin, json: { slug: "web" } }),
  );
  await ok(
    w.call("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", {
      bearer: w.admin,
      json: manifestFiles(),
    }),
  );
}

const EVALUATE = "/api/v1/tenants/acme/namespaces/web/environments/staging/evaluate";

async function families(res: Response) {
  assertEquals(res.status, 200);
  assertEquals(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await res.text());
}

async function assertRefused(res: Response, status: number, code: string): Promise<void> {
  assertEquals(res.status, status);
  const body = await res.json();
  assertEquals(body.code, code, JSON.stringify(body));
  assertEquals(body.request_id, res.headers.get("x-request-id"));
}

Deno.test("a loopback client may scrape without the token; others need it", async () => {
  await withWorld({ metricsToken: TOKEN }, async (w) => {
    await families(await w.scrape(LOCAL));
    await families(await w.scrape(peer("::1")));
    const refused = await w.scrape(REMOTE);
    assertEquals(refused.headers.get("www-authenticate"), "Bearer");
    await assertRefused(refused, 401, "unauthorized");
    await families(await w.scrape(REMOTE, { authorization: `Bearer ${TOKEN}` }));
  });
});

Deno.test("a wrong token is refused from everywhere, loopback too", async () => {
  await withWorld({ metricsToken: TOKEN }, async (w) => {
    for (const from of [LOCAL, REMOTE]) {
      await assertRefused(
        await w.scrape(from, { authorization: `Bearer ${TOKEN}x` }),
        401,
        "unauthorized",
      );
      await assertRefused(
        await w.scrape(from, { authorization: `Bearer ${w.admin}` }),
        401,
        "unauthorized",
      );
      await assertRefused(
        await w.scrape(from, { authorization: `Basic ${btoa(TOKEN)}` }),
        401,
        "unauthorized",
      );
    }
  });
});

Deno.test("a request passed on by a local proxy is not local: it needs the token", async () => {
  await withWorld({ metricsToken: TOKEN }, async (w) => {
    for (
      const h of [
        { "x-forwarded-for": "198.51.100.4" },
        { forwarded: "for=198.51.100.4;proto=https" },
        { "x-real-ip": "198.51.100.4" },
      ]
    ) {
      await assertRefused(await w.scrape(LOCAL, h), 401, "unauthorized");
      await families(await w.scrape(LOCAL, { ...h, authorization: `Bearer ${TOKEN}` }));
    }
  });
});

Deno.test("without a metrics token, remote clients are forbidden (403)", async () => {
  await withWorld({}, async (w) => {
    await assertRefused(await w.scrape(REMOTE), 403, "forbidden");
    await assertRefused(
      await w.scrape(LOCAL, { "x-forwarded-for": "198.51.100.4" }),
      403,
      "forbidden",
    );
    await families(await w.scrape(LOCAL));
  });
});

Deno.test("a server without metrics has no /metrics", async () => {
  await withWorld({ metrics: false }, async (w) => {
    await assertRefused(await w.scrape(LOCAL), 404, "not_found");
  });
});

Deno.test("requests count under their route pattern, never the raw path", async () => {
  await withWorld({}, async (w) => {
    await setUpAcmeWeb(w);
    for (const t of ["acme", "nope-1", "nope-2"]) {
      await (await w.call("GET", `/api/v1/tenants/${t}`, { bearer: w.admin })).body?.cancel();
    }
    await (await w.call("GET", "/no/such/path/1")).body?.cancel();
    await (await w.call("GET", "/no/such/path/2")).body?.cancel();
    await (await w.call("BREW", "/healthz")).body?.cancel();
    const f = await families(await w.scrape());
    const requests = (labels: Record<string, string>) =>
      total(f, "cfgtool_http_requests_total", labels);
    assertEquals(requests({ route: "/api/v1/tenants/:tenant", status: "200" }), 1);
    assertEquals(requests({ route: "/api/v1/tenants/:tenant", status: "404" }), 2);
    assertEquals(requests({ route: "_unmatched", status: "404" }), 3);
    assertEquals(requests({ method: "_other" }), 1);
    assertEquals(
      requests({ route: "/api/v1/tenants/:tenant/namespaces/:ns/manifest", method: "PUT" }),
      1,
    );
    const routes = new Set(samples(f, "cfgtool_http_requests_total").map((s) => s.labels.route));
    for (const r of routes) assert(!/nope|such/.test(r!), `raw path in a label: ${r}`);
    const latency = (status: string) =>
      total(f, "cfgtool_http_request_duration_seconds", {
        route: "/api/v1/tenants/:tenant",
        method: "GET",
        status,
      });
    assertEquals([latency("200"), latency("404")], [1, 2]);
  });
});

Deno.test("evaluations count by flag, variation and reason; a push by size", async () => {
  await withWorld({}, async (w) => {
    await setUpAcmeWeb(w);
    const evaluate = async (flag: string, context = {}) => {
      const res = await w.call("POST", EVALUATE, { bearer: w.admin, json: { flag, context } });
      assertEquals(res.status, 200);
      await res.body?.cancel();
    };
    await evaluate("theme");
    await evaluate("theme");
    await evaluate("theme", { user: { email: "ana@example.com" } });
    await evaluate("new-checkout", { user: { beta: true } });
    const f = await families(await w.scrape());
    const evals = (labels: Record<string, string>) =>
      total(f, "cfgtool_evaluations_total", {
        api: "cfgtool",
        tenant: "acme",
        namespace: "web",
        ...labels,
      });
    assertEquals(evals({ flag: "theme", variation: "light", reason: "DEFAULT" }), 2);
    assertEquals(evals({ flag: "theme", variation: "dark", reason: "TARGETING_MATCH" }), 1);
    assertEquals(evals({ flag: "new-checkout", variation: "on", reason: "TARGETING_MATCH" }), 1);
    assertEquals(total(f, "cfgtool_manifest_pushes_total", { result: "changed" }), 1);
    const [size] = samples(f, "cfgtool_manifest_push_size_bytes");
    assertEquals(size!.count, 1);
    assert(size!.sum! > 500, `push of ${size!.sum} bytes`);
    // a new model cache entry reads its head until its watch is trusted: misses at first
    assertEquals(total(f, "cfgtool_cache_requests_total", { cache: "models" }), 4);
    // every request looks its token up; a busy machine may delay the epoch poll
    // past its trust window, so some lookups read the store: count both
    const credentials = (result: string) =>
      total(f, "cfgtool_cache_requests_total", { cache: "credentials", result });
    assert(credentials("hit") + credentials("miss") >= 5);
    assert(credentials("hit") >= 1);
    assert(total(f, "cfgtool_kv_operation_duration_seconds", { op: "commit" }) >= 3);
  });
});

Deno.test("thousands of made-up flag keys add one series, not thousands", async () => {
  await withWorld({}, async (w) => {
    await setUpAcmeWeb(w);
    for (let i = 0; i < 2000; i++) {
      const res = await w.call("POST", EVALUATE, {
        bearer: w.admin,
        json: { flag: `made-up-${i}`, context: {} },
      });
      await res.body?.cancel();
    }
    const f = await families(await w.scrape());
    const evals = samples(f, "cfgtool_evaluations_total");
    assertEquals(evals.map((s) => [s.labels.flag, s.labels.variation, s.labels.reason, s.value]), [
      ["_unknown", "_none", "ERROR", 2000],
    ]);
  });
});

Deno.test("two servers in one process keep their own counts", async () => {
  await withWorld({}, async (a) => {
    await withWorld({}, async (b) => {
      for (let i = 0; i < 3; i++) await (await a.call("GET", "/healthz")).body?.cancel();
      await (await b.call("GET", "/healthz")).body?.cancel();
      const count = async (w: World) =>
        total(await families(await w.scrape()), "cfgtool_http_requests_total", {
          route: "/healthz",
        });
      assertEquals([await count(a), await count(b)], [3, 1]);
    });
  });
});
