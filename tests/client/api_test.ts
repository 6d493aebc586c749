/**
 * ServiceClient against a real tiny HTTP server (Deno.serve on port 0) that
 * answers canned bodies: headers sent, bodies sent, envelope → error mapping,
 * JSON vs tar.gz, network failures.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { type ManifestArchive, requestIdOf, ServiceClient } from "../../lib/client/api.ts";
import { packArchive, unpackArchive } from "../../lib/closure/archive.ts";
import {
  CfgtoolError,
  ConflictError,
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  PreconditionFailedError,
  ProblemsError,
  RateLimitError,
  UnauthorizedError,
  UsageError,
} from "../../lib/errors.ts";

const TOKEN = "svc_write_TestSecretTokenValue123";

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Headers;
  body: Uint8Array;
}

type Handler = (req: Request, url: URL) => Response | Promise<Response>;

async function withServer(
  handler: Handler,
  fn: (client: ServiceClient, seen: Seen[], url: string) => Promise<void>,
): Promise<void> {
  const seen: Seen[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const body = new Uint8Array(await req.arrayBuffer());
      seen.push({
        method: req.method,
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      });
      return await handler(req, url);
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    await fn(new ServiceClient({ server: url, token: TOKEN }), seen, url);
  } finally {
    ac.abort();
    await server.finished;
  }
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

function envelope(status: number, code: string, message: string, details?: unknown): Response {
  return json(
    { code, message, ...(details === undefined ? {} : { details }), request_id: "req_1" },
    status,
    {
      "x-request-id": "req_1",
    },
  );
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("ServiceClient sends the bearer token and JSON, and unwraps {tenant}", async () => {
  await withServer(
    () => json({ tenant: { slug: "acme", description: "A" }, request_id: "r" }, 201),
    async (client, seen) => {
      const t = await client.createTenant({ slug: "acme", description: "A" });
      assertEquals(t, { slug: "acme", description: "A" });
      const req = seen[0]!;
      assertEquals(req.method, "POST");
      assertEquals(req.path, "/api/v1/tenants");
      assertEquals(req.headers.get("authorization"), `Bearer ${TOKEN}`);
      assertEquals(req.headers.get("content-type"), "application/json");
      assertEquals(JSON.parse(text(req.body)), { slug: "acme", description: "A" });
    },
  );
});

Deno.test("ServiceClient accepts a server URL with a trailing slash or /api/v1", () => {
  const a = new ServiceClient({ server: "http://h:1/", token: "t" });
  const b = new ServiceClient({ server: "http://h:1/api/v1/", token: "t" });
  assertEquals(a.server, "http://h:1");
  assertEquals(b.server, "http://h:1");
});

Deno.test("ServiceClient reads lists as arrays, {items,next} or {<plural>}", async () => {
  let shape = 0;
  await withServer(
    () => {
      shape++;
      if (shape === 1) return json([{ slug: "a" }]);
      if (shape === 2) return json({ tenants: [{ slug: "b" }], request_id: "r" });
      return json({ items: [{ id: "tok_1" }], next: "tok_0" });
    },
    async (client, seen) => {
      assertEquals((await client.listTenants()).map((t) => t.slug), ["a"]);
      assertEquals((await client.listTenants()).map((t) => t.slug), ["b"]);
      const page = await client.listTokens({ tenant: "acme", status: "revoked", limit: 5 });
      assertEquals(page.next, "tok_0");
      assertEquals(page.items.length, 1);
      const q = seen[2]!.query;
      assertEquals([q.get("tenant"), q.get("status"), q.get("limit")], ["acme", "revoked", "5"]);
      assertEquals(q.has("after"), false);
    },
  );
});

Deno.test("ServiceClient percent-encodes path segments", async () => {
  await withServer(() => json({ slug: "x" }), async (client, seen) => {
    await client.getNamespace("acme", "a/b c");
    assertEquals(seen[0]!.path, "/api/v1/tenants/acme/namespaces/a%2Fb%20c");
  });
});

Deno.test("ServiceClient maps error envelopes to typed errors with code, status and details", async () => {
  const cases: [Response, new (...a: never[]) => CfgtoolError, string, number][] = [
    [envelope(401, "unauthorized", "Token is revoked"), UnauthorizedError, "unauthorized", 401],
    [envelope(403, "forbidden", "Wrong tenant"), ForbiddenError, "forbidden", 403],
    [envelope(404, "tenant_not_found", "No tenant acme"), NotFoundError, "tenant_not_found", 404],
    [envelope(409, "conflict", "Tenant acme exists"), ConflictError, "conflict", 409],
    [
      envelope(412, "precondition_failed", "Head is v4"),
      PreconditionFailedError,
      "precondition_failed",
      412,
    ],
    [
      envelope(400, "invalid_request", "bad slug", { field: "slug" }),
      InvalidRequestError,
      "invalid_request",
      400,
    ],
    [envelope(413, "payload_too_large", "too big"), CfgtoolError, "payload_too_large", 413],
    [envelope(500, "internal", "internal server error"), CfgtoolError, "internal", 500],
  ];
  let i = 0;
  await withServer(() => cases[i++]![0], async (client) => {
    for (const [, cls, code, status] of cases) {
      const err = await assertRejects(() => client.getTenant("acme"), cls as never);
      const e = err as unknown as CfgtoolError;
      assertEquals([e.code, e.status], [code, status]);
      assertEquals(requestIdOf(e), "req_1");
      assert(!e.message.includes(TOKEN));
    }
  });
  await withServer(
    () => envelope(400, "invalid_request", "bad slug", { field: "slug" }),
    async (client) => {
      const e = await assertRejects(() => client.getTenant("x"), InvalidRequestError, "bad slug");
      assertEquals(e.details, { field: "slug" });
      // the server refused the request: not a mistake on the command line
      assert(!(e instanceof UsageError));
    },
  );
});

Deno.test("ServiceClient turns invalid_manifest into a ProblemsError", async () => {
  const problems = [{ path: "flags/a.toml", line: 3, column: 1, message: "bad" }, {
    path: "namespace.toml",
    key: "namespace.environments",
    message: "missing",
  }];
  await withServer(
    () => envelope(422, "invalid_manifest", "2 problems found", { problems }),
    async (client) => {
      const err = await assertRejects(
        () => client.putManifest("acme", "checkout", { "namespace.toml": "x" }),
        ProblemsError,
      );
      assertEquals(err.problems, problems);
      assertEquals(err.status, 422);
    },
  );
});

Deno.test("ServiceClient maps 429 with Retry-After", async () => {
  await withServer(
    () =>
      json({ code: "rate_limit_exceeded", message: "slow", request_id: "r" }, 429, {
        "retry-after": "7",
      }),
    async (client) => {
      const err = await assertRejects(() => client.listTenants(), RateLimitError);
      assertEquals(err.retryAfter, 7);
    },
  );
});

Deno.test("ServiceClient handles a non-envelope error body", async () => {
  await withServer(
    () => new Response("<html>bad gateway</html>", { status: 502 }),
    async (client) => {
      const err = await assertRejects(() => client.listTenants(), CfgtoolError, "HTTP 502");
      assertEquals([err.code, err.status], ["http_error", 502]);
    },
  );
  await withServer(
    () => new Response("nope", { status: 404 }),
    async (client) => {
      const err = await assertRejects(() => client.getToken("tok_x"), NotFoundError);
      assertEquals(err.code, "not_found");
    },
  );
});

Deno.test("ServiceClient does not follow redirects (the token stays on the given URL)", async () => {
  await withServer(
    () => new Response(null, { status: 307, headers: { location: "https://elsewhere.example/" } }),
    async (client, seen) => {
      const err = await assertRejects(() => client.listTenants(), CfgtoolError, "elsewhere");
      assertEquals(err.code, "unexpected_redirect");
      assertEquals(seen.length, 1);
    },
  );
});

Deno.test("putManifest() sends JSON files, message and If-Match; 201 vs 200", async () => {
  let status = 201;
  await withServer(
    () =>
      json({ version: 4, closure_hash: "sha256:ab", created_at: "2030-01-01T00:00:00Z" }, status),
    async (client, seen) => {
      const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
      const res = await client.putManifest("acme", "checkout", files, { message: "m", ifMatch: 3 });
      assertEquals(res, {
        changed: true,
        version: 4,
        closure_hash: "sha256:ab",
        created_at: "2030-01-01T00:00:00Z",
      });
      const req = seen[0]!;
      assertEquals([req.method, req.path], [
        "PUT",
        "/api/v1/tenants/acme/namespaces/checkout/manifest",
      ]);
      assertEquals(req.headers.get("if-match"), '"v3"');
      assertEquals(JSON.parse(text(req.body)), {
        files: { "namespace.toml": "schema_version = 1\n" },
        message: "m",
      });
      status = 200;
      const same = await client.putManifest("acme", "checkout", files);
      assertEquals([same.changed, same.version], [false, 4]);
      assertEquals(seen[1]!.headers.has("if-match"), false);
    },
  );
});

Deno.test("putManifest() refuses files that are not UTF-8 before sending", async () => {
  await withServer(() => json({}), async (client, seen) => {
    const files = new Map([["flags/a.toml", new Uint8Array([0xff, 0xfe])]]);
    await assertRejects(() => client.putManifest("a", "b", files), UsageError, "not UTF-8");
    assertEquals(seen.length, 0);
  });
});

Deno.test("putManifestArchive() sends the tar.gz body", async () => {
  await withServer(
    () => json({ version: 1, closure_hash: "sha256:x" }, 201),
    async (client, seen) => {
      const archive = await packArchive(new Map([["namespace.toml", new Uint8Array([65])]]));
      await client.putManifestArchive("a", "b", archive, { ifMatch: 0 });
      assertEquals(seen[0]!.headers.get("content-type"), "application/gzip");
      assertEquals(seen[0]!.headers.get("if-match"), '"v0"');
      assertEquals((await unpackArchive(seen[0]!.body)).get("namespace.toml")?.[0], 65);
    },
  );
});

Deno.test("getManifest() asks for JSON; downloadManifest() takes tar.gz and parses the ETag", async () => {
  const archive = await packArchive(new Map([["namespace.toml", new Uint8Array([65])]]));
  await withServer(
    (req) => {
      if (req.headers.get("accept") === "application/json") {
        return json({ version: 2, closure_hash: "sha256:cd", files: { "namespace.toml": "A" } });
      }
      if (req.headers.get("if-none-match") === '"v2-sha256:cd"') {
        return new Response(null, { status: 304, headers: { etag: '"v2-sha256:cd"' } });
      }
      return new Response(archive as BodyInit, {
        headers: { "content-type": "application/gzip", etag: '"v2-sha256:cd"' },
      });
    },
    async (client, seen) => {
      const m = await client.getManifest("acme", "checkout", { version: 2 });
      assertEquals(m, { version: 2, closure_hash: "sha256:cd", files: { "namespace.toml": "A" } });
      assertEquals(seen[0]!.query.get("version"), "2");
      const a: ManifestArchive = await client.downloadManifest("acme", "checkout");
      assertEquals([a.version, a.closure_hash, a.notModified], [2, "sha256:cd", false]);
      assertEquals(a.bytes, archive);
      assert(seen[1]!.headers.get("accept") !== "application/json");
      const nm = await client.downloadManifest("acme", "checkout", { ifNoneMatch: a.etag! });
      assertEquals([nm.notModified, nm.bytes.length], [true, 0]);
    },
  );
});

Deno.test("token methods: create/rotate return the secret, revoke unwraps {token}", async () => {
  await withServer(
    (req, url) => {
      if (req.method === "DELETE") {
        return json({
          token: { id: "tok_1", status: "revoked", revoked_at: "t" },
          request_id: "r",
        });
      }
      const token = {
        id: url.pathname.includes("rotate") ? "tok_2" : "tok_1",
        type: "namespace-read",
      };
      return json({ token, secret: "svc_read_abc", request_id: "r" }, 201);
    },
    async (client, seen) => {
      const c = await client.createToken({
        type: "namespace-read",
        name: "ci",
        tenant_slug: "a",
        namespace_slug: "b",
      });
      assertEquals([c.token.id, c.secret], ["tok_1", "svc_read_abc"]);
      const r = await client.rotateToken("tok_1", { expires_at: "2030-01-01T00:00:00Z" });
      assertEquals(r.token.id, "tok_2");
      assertEquals(seen[1]!.path, "/api/v1/tokens/tok_1/rotate");
      assertEquals(JSON.parse(text(seen[1]!.body)), { expires_at: "2030-01-01T00:00:00Z" });
      const v = await client.revokeToken("tok_1");
      assertEquals(v.status, "revoked");
      assertEquals([seen[2]!.method, seen[2]!.path], ["DELETE", "/api/v1/tokens/tok_1"]);
    },
  );
});

Deno.test("versions, rollback, lint and audit use their paths", async () => {
  await withServer(
    (_req, url) => {
      if (url.pathname.endsWith("/versions")) {
        return json({ items: [{ version: 3, closure_hash: "h" }], next: null });
      }
      if (url.pathname.endsWith("/rollback")) return json({ version: 5, closure_hash: "h2" }, 201);
      if (url.pathname.endsWith("/lint")) {
        return json({ ok: false, problems: [{ path: "x", message: "m" }] });
      }
      return json({ entries: [{ type: "token.created" }], next: "a1" });
    },
    async (client, seen) => {
      const v = await client.listVersions("t", "n", { limit: 1 });
      assertEquals([v.items[0]!.version, v.next], [3, null]);
      const rb = await client.rollback("t", "n", { version: 3 });
      assertEquals([rb.changed, rb.version], [true, 5]);
      assertEquals(JSON.parse(text(seen[1]!.body)), { version: 3 });
      const lint = await client.lintManifest("t", "n", {});
      assertEquals(lint, { ok: false, problems: [{ path: "x", message: "m" }] });
      const audit = await client.listAudit({ tenant: "t" });
      assertEquals([audit.items.length, audit.next], [1, "a1"]);
      assertEquals(seen[3]!.path, "/api/v1/audit");
    },
  );
});

Deno.test("ServiceClient reports an unreachable server with code unreachable", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const client = new ServiceClient({ server: `http://127.0.0.1:${port}`, token: TOKEN });
  const err = await assertRejects(() => client.listTenants(), CfgtoolError, "cannot reach");
  assertEquals(err.code, "unreachable");
  assert(err.message.includes(`http://127.0.0.1:${port}`));
  assert(!err.message.includes(TOKEN));
});

Deno.test("ServiceClient times out with code timeout", async () => {
  await withServer(
    async () => {
      await new Promise((r) => setTimeout(r, 300));
      return json({});
    },
    async (_client, _seen, url) => {
      const slow = new ServiceClient({ server: url, token: TOKEN, timeoutMs: 50 });
      const err = await assertRejects(() => slow.listTenants(), CfgtoolError, "no answer");
      assertEquals(err.code, "timeout");
    },
  );
});
