/**
 * Property-based fuzzing of the whole HTTP service: random hostile requests
 * (methods, paths built from the app's own route list with hostile segments,
 * hostile query strings, headers and bodies) against an in-process server
 * over an in-memory KV that holds a real superadmin, a tenant, a namespace
 * with a manifest and namespace tokens, so authenticated routes are reached.
 * No request may get a 5xx, and no promise may reject unhandled.
 *
 * Set `FUZZ_SEED` to replay a failing run, `FUZZ_RUNS` to run longer.
 *
 * @module
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { createServer } from "../../server.ts";
import { Runtime } from "../../lib/runtime/runtime.ts";
import { createApp } from "../../lib/server/app.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { silentLogger } from "../../lib/log.ts";
import { createUser } from "../../lib/store/users.ts";
import { manifestFiles } from "../e2e/evaluation_fixture.ts";

const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 400);
const SEED = Deno.env.get("FUZZ_SEED");

/** Every route of the app, as `{method, path}` with `:param` placeholders. */
async function routeList(): Promise<{ method: string; path: string }[]> {
  const kv = await Deno.openKv(":memory:");
  const key = await randomTokenKey();
  const runtime = new Runtime({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS });
  try {
    const app = createApp({ kv, key, log: silentLogger, settings: DEFAULT_SETTINGS, runtime });
    const seen = new Set<string>();
    const out: { method: string; path: string }[] = [];
    for (const r of app.routes) {
      if (r.method === "ALL" || r.path.includes("*")) continue; // middleware
      const id = `${r.method} ${r.path}`;
      if (!seen.has(id)) seen.add(id) && out.push({ method: r.method, path: r.path });
    }
    return out;
  } finally {
    runtime.close();
    kv.close();
  }
}

/** Path segments a careless or hostile client sends. */
const hostileSegment = fc.oneof(
  fc.constantFrom(
    "",
    "..",
    ".",
    "%2e%2e",
    "%00",
    "a%00b",
    "%",
    "%E0%A4%A",
    "%2F",
    "%FF%FE",
    "-1",
    "1e309",
    "NaN",
    "0x10",
    "9".repeat(400),
    "99999999999999999999",
    "x".repeat(3000),
    `tok_${"A".repeat(3000)}`,
    `usr_${"0".repeat(26)}`,
    `tok_${"0".repeat(26)}`,
    encodeURIComponent("😀".repeat(800)),
    encodeURIComponent("\u202e\u0000\uffff"),
    "ACME",
    "a".repeat(63),
    "a".repeat(64),
    "_installation",
    "_tenant",
  ),
  fc.string({ maxLength: 80 }).map(encodeURIComponent),
  fc.string({ unit: "binary", maxLength: 40 }).map(encodeURIComponent),
  fc.nat({ max: 5000 }).map((n) => "z".repeat(n)),
);

/** Values for query parameters and header fields. */
const hostileValue = fc.oneof(
  fc.constantFrom(
    "",
    "-1",
    "0",
    "1",
    "1e309",
    "NaN",
    "99999999999999999999999",
    "x".repeat(3000),
    "a,b,c",
    "acme",
    "web",
    "staging",
    "*",
    "acme/web@5",
    "web:flag-a,flag-b",
    "\u0000",
    "😀".repeat(500),
  ),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.nat({ max: 4000 }).map((n) => "q".repeat(n)),
);

const QUERY_NAMES = [
  "limit",
  "after",
  "type",
  "status",
  "tenant",
  "namespace",
  "token_id",
  "version",
  "message",
  "subscription",
  "token",
  "since",
  "ns",
  "flagConfigEtag",
  "sseEtag",
  "x",
];

/** Fields request bodies carry, with hostile values. */
const BODY_FIELDS = [
  "slug",
  "description",
  "name",
  "type",
  "tenant_slug",
  "namespace_slug",
  "environment_slug",
  "allowed_origins",
  "scopes",
  "expires_at",
  "user_id",
  "message",
  "version",
  "files",
  "context",
  "flag",
];

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.constantFrom(
    "x".repeat(70 * 1024),
    1e308,
    -1,
    Number.MAX_SAFE_INTEGER,
    [],
    {},
    null,
    { "namespace.toml": "x".repeat(3000) },
    Array.from({ length: 200 }, (_, i) => `https://h${i}.example.com`),
  ),
  fc.array(fc.string({ maxLength: 300 }), { maxLength: 60 }),
  fc.dictionary(fc.string({ maxLength: 40 }), fc.string({ maxLength: 200 }), { maxKeys: 20 }),
);

type Body = { kind: "none" } | { kind: "json"; value: unknown } | {
  kind: "bytes";
  value: Uint8Array;
};

const hostileBody: fc.Arbitrary<Body> = fc.oneof(
  fc.constant<Body>({ kind: "none" }),
  fc.dictionary(fc.constantFrom(...BODY_FIELDS), hostileJson, { maxKeys: 6 })
    .map((value): Body => ({ kind: "json", value })),
  hostileJson.map((value): Body => ({ kind: "json", value })),
  fc.uint8Array({ maxLength: 2000 }).map((value): Body => ({ kind: "bytes", value })),
  fc.constantFrom<Body>(
    { kind: "bytes", value: new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]) },
    { kind: "bytes", value: new TextEncoder().encode('{"files": {"namespace.toml": ') },
    { kind: "bytes", value: new Uint8Array([0xff, 0xfe, 0xfd]) },
  ),
);

/** Which credential a request presents (by name; secrets are filled in later). */
const credential = fc.oneof(
  { arbitrary: fc.constantFrom("admin", "read", "write", "client"), weight: 6 },
  fc.constantFrom(
    "none",
    "Bearer",
    "Bearer ",
    "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    `Bearer ${"a".repeat(10000)}`,
    "Bearer svc_admin_",
    "Bearer svc_admin_zzzzzzzzzzzzzzzzzzzzzzzz",
    "Bearer ses_",
    "bearer  two words",
    "Bearer \u00ff\u00fe",
    "Bearer pub_",
    "Bearer tok_00000000000000000000000000",
  ),
  fc.string({ maxLength: 200 }).map((s) => `Bearer ${s}`),
  fc.string({ unit: "binary", maxLength: 60 }),
);

const HEADER_NAMES = [
  "if-match",
  "if-none-match",
  "accept",
  "content-type",
  "origin",
  "x-request-id",
  "last-event-id",
  "access-control-request-method",
  "x-forwarded-for",
];

const hostileRequest = fc.record({
  route: fc.nat(),
  method: fc.oneof(
    { arbitrary: fc.constant("(route)"), weight: 8 },
    fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
  ),
  segments: fc.array(
    fc.oneof({ arbitrary: fc.constant("(valid)"), weight: 4 }, {
      arbitrary: hostileSegment,
      weight: 2,
    }),
    { minLength: 6, maxLength: 6 },
  ),
  suffix: fc.oneof(
    { arbitrary: fc.constant(""), weight: 8 },
    fc.constantFrom("/", "/..", "//", "/x", "/%00"),
  ),
  query: fc.array(fc.tuple(fc.constantFrom(...QUERY_NAMES), hostileValue), { maxLength: 5 }),
  credential,
  headers: fc.array(fc.tuple(fc.constantFrom(...HEADER_NAMES), hostileValue), { maxLength: 4 }),
  contentType: fc.constantFrom(
    undefined,
    "application/json",
    "application/gzip",
    "application/merge-patch+json",
    "text/plain",
    "multipart/form-data; boundary=x",
  ),
  body: hostileBody,
});

/**
 * Valid values for each path parameter, so deeper handlers are reached too.
 * Deletions and rotations get a spare tenant, namespace and token, so the
 * fixture the other requests need stays in place.
 */
function validParam(
  name: string,
  method: string,
  ids: { read: string; spare: string; user: string },
): string {
  const spare = method === "DELETE" || method === "POST";
  switch (name) {
    case "tenant":
      return method === "DELETE" ? "spare" : "acme";
    case "ns":
      return method === "DELETE" ? "spare" : "web";
    case "env":
      return "staging";
    case "id":
      return spare ? ids.spare : ids.read;
    case "user":
      return ids.user;
    case "v":
      return "1";
    case "key":
      return "theme";
    default:
      return "x";
  }
}

Deno.test({
  name: "no hostile request to any route gets a 5xx or leaves an unhandled rejection",
  // streams opened by the fuzzer end on server.close(); their timers are not leaks
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const routes = await routeList();
    assert(routes.length >= 30, `route list: ${routes.length} routes`);
    const kv = await Deno.openKv(":memory:");
    const key = await randomTokenKey();
    const errors: string[] = [];
    const server = createServer({
      kv,
      key,
      log: (level, msg, fields) => {
        if (level === "error") errors.push(`${msg} ${JSON.stringify(fields)}`);
      },
      settings: { clientRateLimitPerMinute: 1e6 },
      // email sign-in without any mail set up is a deliberate 503; give it an outbox
      mail: { outboxDir: await Deno.makeTempDir(), from: "cfgtool <no-reply@localhost>" },
      // sign-in builds its URLs from the public URL only (else 503 for a non-loopback Host)
      publicUrl: "http://fuzz.test",
    });
    const rejections: unknown[] = [];
    const onRejection = (e: PromiseRejectionEvent) => {
      e.preventDefault();
      rejections.push(e.reason);
    };
    globalThis.addEventListener("unhandledrejection", onRejection);
    try {
      const { secret: admin } = await bootstrapSuperadmin(kv, key);
      const call = async (method: string, path: string, token: string, body?: unknown) => {
        const res = await server.fetch(
          new Request(`http://fuzz.test${path}`, {
            method,
            headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }),
        );
        const json = await res.json();
        assert(res.status < 300, `${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
        return json;
      };
      await call("POST", "/api/v1/tenants", admin, { slug: "acme" });
      await call("POST", "/api/v1/tenants/acme/namespaces", admin, { slug: "web" });
      await call("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", admin, manifestFiles());
      await call("POST", "/api/v1/tenants", admin, { slug: "spare" });
      await call("POST", "/api/v1/tenants/spare/namespaces", admin, { slug: "spare" });
      const mint = (body: Record<string, unknown>) =>
        call("POST", "/api/v1/tokens", admin, {
          tenant_slug: "acme",
          namespace_slug: "web",
          ...body,
        });
      const read = await mint({ type: "namespace-read", name: "reader" });
      const write = await mint({ type: "namespace-write", name: "writer" });
      const client = await mint({
        type: "namespace-client",
        name: "browser",
        environment_slug: "staging",
        allowed_origins: ["https://app.example.com"],
      });
      const secrets: Record<string, string> = {
        admin,
        read: read.secret,
        write: write.secret,
        client: client.secret,
      };
      const spare = await call("POST", "/api/v1/tokens", admin, {
        type: "tenant-admin",
        name: "spare",
        tenant_slug: "spare",
      });
      const user = await createUser(kv, { email: "ana@example.com" });
      await call("POST", "/api/v1/tenants/acme/admins", admin, { user_id: user.id });
      const ids = { read: read.token.id as string, spare: spare.token.id as string, user: user.id };

      let checked = 0;
      await fc.assert(
        fc.asyncProperty(hostileRequest, async (r) => {
          const route = routes[r.route % routes.length]!;
          const method = r.method === "(route)" ? route.method : r.method;
          let i = 0;
          const path = route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
            const seg = r.segments[i++ % r.segments.length]!;
            return seg === "(valid)" ? validParam(name, method, ids) : seg;
          }) + r.suffix;
          const query = r.query.length === 0
            ? ""
            : `?${new URLSearchParams(r.query as [string, string][]).toString()}`;
          const headers = new Headers();
          const setHeader = (name: string, value: string) => {
            try {
              headers.set(name, value);
            } catch {
              // not a valid header value: no client can send it
            }
          };
          if (r.credential in secrets) {
            setHeader("authorization", `Bearer ${secrets[r.credential]}`);
          } else if (r.credential !== "none") {
            setHeader("authorization", r.credential);
          }
          for (const [name, value] of r.headers) setHeader(name, value);
          if (r.contentType !== undefined) setHeader("content-type", r.contentType);
          let body: BodyInit | undefined;
          if (method !== "GET" && method !== "HEAD") {
            if (r.body.kind === "json") body = JSON.stringify(r.body.value);
            if (r.body.kind === "bytes") body = r.body.value as Uint8Array<ArrayBuffer>;
          }
          let req: Request;
          try {
            req = new Request(`http://fuzz.test${path}${query}`, {
              method,
              headers,
              ...(body === undefined ? {} : { body }),
            });
          } catch {
            return; // not a request a client can send
          }
          const res = await server.fetch(req, {
            remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
            completed: Promise.resolve(),
          });
          const type = res.headers.get("content-type") ?? "";
          if (type.includes("event-stream")) await res.body?.cancel();
          else await res.arrayBuffer();
          checked++;
          assert(
            res.status < 500,
            `${method} ${path.slice(0, 200)}${query.slice(0, 200)} → ${res.status}\n` +
              errors.slice(-3).join("\n"),
          );
        }),
        {
          numRuns: RUNS,
          ...(SEED === undefined ? {} : { seed: Number(SEED) }),
        },
      );
      assert(checked > RUNS / 2, `only ${checked} of ${RUNS} requests were sent`);
      await new Promise((resolve) => setTimeout(resolve, 50)); // let stray rejections surface
      assertEquals(rejections.map(String), []);
      assertEquals(errors, [], "no error was logged");
    } finally {
      globalThis.removeEventListener("unhandledrejection", onRejection);
      await server.close();
      kv.close();
    }
  },
});
