/**
 * The data plane (lib/http/data_plane.ts, lib/server/data_plane.ts) answers
 * evaluation and OFREP requests exactly as the router does: every kind of
 * request is sent both ways, in one process over one store, and the
 * status, every header but `Date`, the body byte for byte, the access-log
 * line and the request metrics must be the same. Requests the data plane
 * leaves to the router are checked to be left.
 */
import { assert, assertEquals } from "../assert.ts";
import { createApp } from "../../lib/server/app.ts";
import { createDataPlane } from "../../lib/server/data_plane.ts";
import { matchDataPlane } from "../../lib/http/data_plane.ts";
import { SLUG_PATTERN } from "../../lib/protocol/slug.ts";
import fc from "fast-check";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { Runtime } from "../../lib/runtime/runtime.ts";
import { ServiceMetrics } from "../../lib/metrics/service_metrics.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import type { FetchEnv } from "../../lib/http/client_ip.ts";
import { ALLOWED_ORIGIN, manifestFiles, OTHER_ORIGIN } from "../e2e/evaluation_fixture.ts";

const EVAL = "/api/v1/tenants/acme/namespaces/web/environments";
const OFREP = "/ofrep/v1/evaluate/flags";
const CONTEXT = { user: { email: "a@example.com", beta: true }, targeting_key: "u1" };

interface Case {
  name: string;
  path: string;
  token?: string;
  headers?: Record<string, string>;
  body?: string;
  /** The data plane takes it (default true). */
  taken?: boolean;
}

type Tokens = Record<"read" | "readApi" | "client" | "clientProduction" | "unknown", string>;

interface World {
  router: (req: Request, env: FetchEnv) => Response | Promise<Response>;
  plane: ReturnType<typeof createDataPlane>;
  logs: Record<string, unknown>[];
  metrics: ServiceMetrics;
  tokens: Tokens;
  close(): void;
}

async function startWorld(): Promise<World> {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const logs: Record<string, unknown>[] = [];
  const log = (_level: string, msg: string, fields?: Record<string, unknown>) => {
    if (msg === "request") logs.push(fields!);
  };
  const metrics = new ServiceMetrics();
  const settings = { ...DEFAULT_SETTINGS, clientRateLimitPerMinute: 1_000_000 };
  const runtime = new Runtime({ kv, key, log, settings, metrics });
  const deps = { kv, key, log, settings, runtime };
  const app = createApp(deps);
  const { secret: admin } = await bootstrapSuperadmin(kv, key);
  const api = async (method: string, path: string, body: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    assert(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  await api("POST", "/api/v1/tenants", { slug: "acme" });
  await api("POST", "/api/v1/tenants/acme/namespaces", { slug: "web" });
  await api("POST", "/api/v1/tenants/acme/namespaces", { slug: "api" });
  await api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", manifestFiles());
  let minted = 0;
  const mint = async (body: Record<string, unknown>) =>
    (await api("POST", "/api/v1/tokens", { name: `t${++minted}`, ...body })).secret as string;
  const client = (env: string, origins: string[]) =>
    mint({
      type: "namespace-client",
      tenant_slug: "acme",
      namespace_slug: "web",
      environment_slug: env,
      allowed_origins: origins,
    });
  const tokens = {
    read: await mint({ type: "namespace-read", tenant_slug: "acme", namespace_slug: "web" }),
    readApi: await mint({ type: "namespace-read", tenant_slug: "acme", namespace_slug: "api" }),
    client: await client("staging", [ALLOWED_ORIGIN]),
    clientProduction: await client("production", [ALLOWED_ORIGIN]),
    unknown: "svc_read_" + "1".repeat(44),
  };
  logs.length = 0;
  return {
    router: (req, env) => app.fetch(req, env),
    plane: createDataPlane(deps),
    logs,
    metrics,
    tokens,
    close() {
      runtime.close();
      kv.close();
    },
  };
}

function cases(tokens: Tokens): Case[] {
  const body = (x: unknown) => JSON.stringify(x);
  const one = (flag: unknown, context: unknown = CONTEXT) => body({ flag, context });
  return [
    { name: "evaluate", path: `${EVAL}/staging/evaluate`, token: tokens.read, body: one("theme") },
    {
      name: "evaluate/all",
      path: `${EVAL}/staging/evaluate/all`,
      token: tokens.read,
      body: body({ context: CONTEXT }),
    },
    {
      name: "unknown flag",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.read,
      body: one("nope"),
    },
    {
      name: "no flag",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.read,
      body: body({ context: {} }),
    },
    {
      name: "flag not a string",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.read,
      body: one(7),
    },
    { name: "bad JSON", path: `${EVAL}/staging/evaluate`, token: tokens.read, body: "{nope" },
    {
      name: "bad context",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.read,
      body: one("theme", 5),
    },
    { name: "empty body", path: `${EVAL}/staging/evaluate/all`, token: tokens.read },
    {
      name: "body over 64 KiB",
      path: `${EVAL}/staging/evaluate/all`,
      token: tokens.read,
      body: body({ context: { a: "x".repeat(70_000) } }),
    },
    {
      name: "unknown environment",
      path: `${EVAL}/qa/evaluate`,
      token: tokens.read,
      body: one("theme"),
    },
    {
      name: "unknown namespace",
      path: "/api/v1/tenants/acme/namespaces/nope/environments/staging/evaluate",
      token: tokens.read,
      body: one("theme"),
    },
    {
      name: "unknown tenant",
      path: "/api/v1/tenants/nope/namespaces/web/environments/staging/evaluate",
      token: tokens.read,
      body: one("theme"),
    },
    {
      name: "namespace without a version",
      path: "/api/v1/tenants/acme/namespaces/api/environments/staging/evaluate",
      token: tokens.readApi,
      body: one("theme"),
    },
    {
      name: "token of another namespace",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.readApi,
      body: one("theme"),
    },
    {
      name: "unknown token",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.unknown,
      body: one("theme"),
    },
    {
      name: "malformed credential",
      path: `${EVAL}/staging/evaluate`,
      token: "abc",
      body: one("theme"),
    },
    {
      name: "client, allowed Origin",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.client,
      headers: { origin: ALLOWED_ORIGIN },
      body: one("theme"),
    },
    {
      name: "client, other Origin",
      path: `${EVAL}/staging/evaluate/all`,
      token: tokens.client,
      headers: { origin: OTHER_ORIGIN },
      body: body({ context: CONTEXT }),
    },
    {
      name: "client, error with allowed Origin",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.client,
      headers: { origin: ALLOWED_ORIGIN },
      body: "[]",
    },
    {
      name: "client, another environment",
      path: `${EVAL}/production/evaluate`,
      token: tokens.client,
      headers: { origin: ALLOWED_ORIGIN },
      body: one("theme"),
    },
    {
      name: "client, environment not public",
      path: `${EVAL}/production/evaluate`,
      token: tokens.clientProduction,
      headers: { origin: ALLOWED_ORIGIN },
      body: one("theme"),
    },
    {
      name: "own request id",
      path: `${EVAL}/staging/evaluate`,
      token: tokens.read,
      headers: { "x-request-id": "mine-1" },
      body: one("theme"),
    },
    {
      name: "OFREP bulk",
      path: OFREP,
      token: tokens.client,
      headers: { origin: ALLOWED_ORIGIN },
      body: body({ context: { targetingKey: "u1" } }),
    },
    {
      name: "OFREP bulk, refetch",
      path: `${OFREP}?flagConfigEtag=%22v1-ab%22`,
      token: tokens.client,
      body: body({ context: {} }),
    },
    {
      name: "OFREP bulk, read token without triple",
      path: OFREP,
      token: tokens.read,
      body: body({ context: {} }),
    },
    {
      name: "OFREP bulk, read token naming the triple",
      path: OFREP,
      token: tokens.read,
      headers: {
        "x-cfgtool-tenant": "acme",
        "x-cfgtool-namespace": "web",
        "x-cfgtool-environment": "staging",
      },
      body: body({ context: {} }),
    },
    {
      name: "OFREP single",
      path: `${OFREP}/theme`,
      token: tokens.client,
      body: body({ context: { targetingKey: "u1", user: { email: "x@example.com" } } }),
    },
    {
      name: "OFREP single, unknown flag",
      path: `${OFREP}/nope`,
      token: tokens.client,
      headers: { origin: ALLOWED_ORIGIN },
      body: body({ context: {} }),
    },
    {
      name: "OFREP single, empty targetingKey",
      path: `${OFREP}/theme`,
      token: tokens.client,
      body: body({ context: { targetingKey: "" } }),
    },
    {
      name: "OFREP, unknown token",
      path: `${OFREP}/theme`,
      token: tokens.unknown,
      headers: { origin: ALLOWED_ORIGIN },
      body: "{}",
    },
    {
      name: "OFREP, environment not public",
      path: OFREP,
      token: tokens.clientProduction,
      body: "{}",
    },
    { name: "OFREP, bad JSON", path: OFREP, token: tokens.client, body: "{" },
    // left to the router
    { name: "no credential", path: `${EVAL}/staging/evaluate`, body: one("theme"), taken: false },
    {
      name: "Basic credential",
      path: `${EVAL}/staging/evaluate`,
      headers: { authorization: "Basic eDp5" },
      body: one("theme"),
      taken: false,
    },
    {
      name: "bad slug",
      path: "/api/v1/tenants/ACME/namespaces/web/environments/staging/evaluate",
      token: tokens.read,
      body: one("theme"),
      taken: false,
    },
    {
      name: "percent escape",
      path: `${EVAL}/stag%69ng/evaluate`,
      token: tokens.read,
      body: one("theme"),
      taken: false,
    },
    {
      name: "trailing slash",
      path: `${EVAL}/staging/evaluate/`,
      token: tokens.read,
      body: one("theme"),
      taken: false,
    },
    { name: "GET", path: `${EVAL}/staging/evaluate`, token: tokens.read, taken: false },
    {
      name: "OFREP key with a slash",
      path: `${OFREP}/a/b`,
      token: tokens.client,
      body: "{}",
      taken: false,
    },
  ];
}

function request(c: Case, n: number): Request {
  const headers: Record<string, string> = { "x-request-id": `case-${n}`, ...c.headers };
  if (c.token !== undefined) headers.authorization = `Bearer ${c.token}`;
  if (c.body !== undefined) headers["content-type"] = "application/json";
  return new Request(`http://127.0.0.1:8080${c.path}`, {
    method: c.name === "GET" ? "GET" : "POST",
    headers,
    ...(c.body === undefined ? {} : { body: c.body }),
  });
}

async function shape(res: Response) {
  const headers = [...res.headers].filter(([k]) => k !== "date");
  return { status: res.status, headers, body: await res.text() };
}

const ENV: FetchEnv = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 5000 } };

Deno.test("the data plane answers every evaluation request as the router does", async () => {
  const w = await startWorld();
  try {
    for (const [n, c] of cases(w.tokens).entries()) {
      const viaPlane = w.plane(request(c, n), ENV);
      if (c.taken === false) {
        assertEquals(viaPlane, null, `${c.name}: left to the router`);
        continue;
      }
      assert(viaPlane !== null, `${c.name}: taken by the data plane`);
      w.logs.length = 0;
      const fromPlane = await shape(await viaPlane);
      const fromRouter = await shape(await w.router(request(c, n), ENV));
      assertEquals(fromPlane, fromRouter, c.name);
      assertEquals(w.logs.length, 2, c.name);
      const [a, b] = w.logs.map(({ ms: _, ...rest }) => rest);
      assertEquals(a, b, `${c.name}: the access-log line`);
    }
  } finally {
    w.close();
  }
});

Deno.test("the data plane counts its requests under the router's route names", async () => {
  const w = await startWorld();
  try {
    const all = cases(w.tokens);
    const picked = ["evaluate", "evaluate/all", "unknown token", "OFREP bulk", "OFREP single"];
    for (const name of picked) {
      const n = all.findIndex((c) => c.name === name);
      const res = await w.plane(request(all[n]!, n), ENV);
      await res!.body?.cancel();
    }
    const text = await w.metrics.render();
    const count = (route: string, status: number) =>
      text.includes(
        `cfgtool_http_request_duration_seconds_count{method="POST",route="${route}",status="${status}"} `,
      );
    const base = "/api/v1/tenants/:tenant/namespaces/:ns/environments/:env";
    assert(count(`${base}/evaluate`, 200), text);
    assert(count(`${base}/evaluate`, 401), text);
    assert(count(`${base}/evaluate/all`, 200), text);
    assert(count("/ofrep/v1/evaluate/flags", 200), text);
    assert(count("/ofrep/v1/evaluate/flags/:key", 200), text);
  } finally {
    w.close();
  }
});

/** The data plane's path rule, written the slow obvious way. */
function referenceMatch(method: string, path: string) {
  if (method !== "POST" || path.includes("%")) return null;
  const ofrep = /^\/ofrep\/v1\/evaluate\/flags(?:\/([^/]+))?$/.exec(path);
  if (ofrep) return { route: ofrep[1] ? "ofrep-flag" : "ofrep-bulk", key: ofrep[1] ?? "" };
  const parts = path.split("/");
  if (parts.length !== 10 && parts.length !== 11) return null;
  const [, api, v1, tenants, t, nss, ns, envs, env, evaluate, all] = parts;
  if (api !== "api" || v1 !== "v1" || tenants !== "tenants" || nss !== "namespaces") return null;
  if (envs !== "environments" || evaluate !== "evaluate") return null;
  if (all !== undefined && all !== "all") return null;
  if (![t, ns, env].every((s) => SLUG_PATTERN.test(s!))) return null;
  return {
    route: all === undefined ? "evaluate" : "evaluate-all",
    tenant: t,
    namespace: ns,
    environment: env,
  };
}

Deno.test("the data plane takes exactly the paths the router's rules give its routes", () => {
  const segment = fc.oneof(
    { arbitrary: fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,62}$/), weight: 6 },
    { arbitrary: fc.stringMatching(/^[a-zA-Z0-9._%/-]{0,66}$/), weight: 2 },
    {
      arbitrary: fc.constantFrom("a".repeat(63), "a".repeat(64), "", "-a", "A", "a.b_c-d"),
      weight: 1,
    },
  );
  const evaluatePath = fc.tuple(
    segment,
    segment,
    segment,
    fc.constantFrom("", "/all", "/", "/al", "/all/", "x", "/all/x"),
  ).map(([t, ns, env, tail]) =>
    `/api/v1/tenants/${t}/namespaces/${ns}/environments/${env}/evaluate${tail}`
  );
  const ofrepPath = fc.tuple(fc.constantFrom("", "/", "s", "/x/"), segment).map(([a, b]) =>
    `/ofrep/v1/evaluate/flags${a}${b}`
  );
  fc.assert(
    fc.property(
      fc.oneof(evaluatePath, ofrepPath),
      fc.constantFrom("POST", "GET"),
      (path, method) => {
        const got = matchDataPlane(method, `http://127.0.0.1:8080${path}?q=1`);
        const want = referenceMatch(method, path);
        if (want === null) return got === null;
        return got !== null &&
          Object.entries(want).every(([k, v]) => got[k as keyof typeof got] === v);
      },
    ),
    { numRuns: 5000 },
  );
});
