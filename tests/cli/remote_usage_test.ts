/**
 * Subprocess tests of the remote commands (push, pull, tenant, namespace,
 * token, admin): usage errors exit 2 with one clear line and no stack trace,
 * local validation stops a push before any request, output formats, and the
 * admin CLI on a real KV file. Where a service is needed, a tiny Deno.serve
 * in the test answers canned bodies and counts the requests.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { relative } from "node:path";
import { packArchive } from "../../lib/closure/archive.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { lifetimeWarning } from "../../lib/cli/token.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SECRET_TOKEN = "svc_write_DoNotPrintThisValue987";

type Run = CliResult;

function cfgtool(
  args: string[],
  env: Record<string, string> = {},
  cwd: string = ROOT,
): Promise<Run> {
  return runCfgtool(args, {
    cwd,
    env: { CFGTOOL_SERVER: "", CFGTOOL_TOKEN: "", CFGTOOL_KV: "", ...env },
  });
}

function assertUsage(r: Run, includes: string): void {
  assertEquals(r.code, 2, `exit ${r.code}; stderr: ${r.stderr}`);
  assertStringIncludes(r.stderr, includes);
  assert(!/^\s+at /m.test(r.stderr), `stack trace in stderr: ${r.stderr}`);
}

function lastLine(s: string): string {
  return s.trimEnd().split("\n").at(-1) ?? "";
}

interface Canned {
  url: string;
  requests: { method: string; path: string; headers: Headers; body: string }[];
  close(): Promise<void>;
}

function cannedServer(handler: (req: Request, path: string) => Response): Canned {
  const requests: Canned["requests"] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    async (req) => {
      const path = new URL(req.url).pathname;
      requests.push({ method: req.method, path, headers: req.headers, body: await req.text() });
      return handler(req, path);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const NAMESPACE_TOML = "schema_version = 1\n";
const FLAG_TOML = 'schema_version = 1\ntype = "boolean"\ndefault = "off"\n' +
  "[variations]\non = true\noff = false\n";

async function manifestDir(extra: Record<string, string> = {}): Promise<string> {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/flags`);
  await Deno.writeTextFile(`${dir}/namespace.toml`, NAMESPACE_TOML);
  await Deno.writeTextFile(`${dir}/flags/dark-mode.toml`, FLAG_TOML);
  for (const [path, text] of Object.entries(extra)) {
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  return dir;
}

const REMOTE = ["--server", "http://127.0.0.1:9", "--token", SECRET_TOKEN];

Deno.test("remote commands without --server or CFGTOOL_SERVER exit 2", async () => {
  assertUsage(await cfgtool(["tenant", "list"]), "pass --server <url> or set CFGTOOL_SERVER");
  assertUsage(
    await cfgtool(["push", ".", "--tenant", "a", "--namespace", "b", "--token", "x"]),
    "--server",
  );
});

Deno.test("remote commands without --token or CFGTOOL_TOKEN exit 2", async () => {
  const r = await cfgtool(["token", "list"], { CFGTOOL_SERVER: "http://127.0.0.1:9" });
  assertUsage(r, "pass --token <token> or set CFGTOOL_TOKEN");
});

Deno.test("token list --namespace without --tenant exits 2 and sends nothing", async () => {
  // port 9 (discard) is never listened on: a request sent would fail with exit 1
  const r = await cfgtool(["token", "list", "--namespace", "web"], {
    CFGTOOL_SERVER: "http://127.0.0.1:9",
    CFGTOOL_TOKEN: "svc_read_x",
  });
  assertUsage(r, "--namespace needs --tenant");
});

Deno.test("a --server that is not an http(s) URL exits 2", async () => {
  assertUsage(await cfgtool(["tenant", "list", "--server", "ftp://x", "--token", "t"]), "http(s)");
});

Deno.test("token create: bad durations and bindings exit 2, the token is never printed", async () => {
  const base = ["token", "create", "--type", "namespace-read", "--name", "ci", ...REMOTE];
  let r = await cfgtool([...base, "--tenant", "a", "--namespace", "b", "--expires-in", "10x"]);
  assertUsage(r, "--expires-in must be a positive whole number");
  assert(!r.stderr.includes(SECRET_TOKEN) && !r.stdout.includes(SECRET_TOKEN));
  r = await cfgtool([...base, "--tenant", "a", "--namespace", "b", "--expires-at", "tomorrow"]);
  assertUsage(r, "--expires-at must be an RFC 3339 timestamp");
  r = await cfgtool([
    ...base,
    "--tenant",
    "a",
    "--namespace",
    "b",
    "--expires-in",
    "1d",
    "--expires-at",
    "2099-01-01T00:00:00Z",
  ]);
  assertUsage(r, "either --expires-in or --expires-at");
  assertUsage(await cfgtool([...base, "--tenant", "a"]), "--namespace is required");
  assertUsage(
    await cfgtool([...base, "--tenant", "a", "--namespace", "b", "--environment", "prod"]),
    "--environment does not apply",
  );
  assertUsage(
    await cfgtool(["token", "create", "--type", "root", "--name", "x", ...REMOTE]),
    "Allowed choices",
  );
  assertUsage(
    await cfgtool(["admin", "session", "create", "--user", "x", "--ttl", "soon"]),
    "--ttl",
  );
});

Deno.test("push of a missing directory exits 2", async () => {
  const r = await cfgtool([
    "push",
    "/nonexistent/flags",
    "--tenant",
    "a",
    "--namespace",
    "b",
    ...REMOTE,
  ]);
  assertUsage(r, "manifest directory not found");
});

Deno.test("push validates locally: problems exit 1 and nothing is sent", async () => {
  const server = cannedServer(() => json({ version: 1, closure_hash: "x" }, 201));
  try {
    const dir = await manifestDir({
      "flags/bad.toml": 'schema_version = 1\ntype = "nope"\n',
      "notes.txt": "hi",
    });
    const r = await cfgtool([
      "push",
      dir,
      "--tenant",
      "a",
      "--namespace",
      "b",
      "--server",
      server.url,
      "--token",
      SECRET_TOKEN,
    ]);
    assertEquals(r.code, 1, r.stderr);
    // paths are relative to the current directory, so an editor can open them
    const shown = relative(Deno.cwd(), dir);
    const lines = r.stderr.split("\n");
    assert(lines.some((l) => l.startsWith(`${shown}/flags/bad.toml: `)), r.stderr);
    assert(lines.some((l) => l.startsWith(`${shown}/notes.txt: `)), r.stderr);
    assertMatch(r.stderr, /problems? found/);
    assertEquals(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

Deno.test("push uploads JSON files with If-Match and prints the version", async () => {
  let status = 201;
  const server = cannedServer(() =>
    json({ version: 4, closure_hash: "sha256:abc", created_at: "2030-01-01T00:00:00Z" }, status)
  );
  try {
    const dir = await manifestDir({ ".gitignore": "x\n" });
    const args = ["push", dir, "--tenant", "acme", "--namespace", "checkout", "--message", "m"];
    const env = { CFGTOOL_SERVER: server.url, CFGTOOL_TOKEN: SECRET_TOKEN };
    let r = await cfgtool([...args, "--if-match", "3"], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "version 4 (sha256:abc)\n");
    const req = server.requests[0]!;
    assertEquals([req.method, req.path], [
      "PUT",
      "/api/v1/tenants/acme/namespaces/checkout/manifest",
    ]);
    assertEquals(req.headers.get("if-match"), '"v3"');
    assertEquals(req.headers.get("authorization"), `Bearer ${SECRET_TOKEN}`);
    assertEquals(JSON.parse(req.body), {
      files: { "flags/dark-mode.toml": FLAG_TOML, "namespace.toml": NAMESPACE_TOML },
      message: "m",
    });
    status = 200;
    r = await cfgtool(args, env);
    assertEquals(r.stdout, "unchanged at version 4\n");
    assertUsage(
      await cfgtool([...args, "--if-match", "v3"], env),
      "--if-match must be a whole number",
    );
  } finally {
    await server.close();
  }
});

Deno.test("push reports the service's problems and errors", async () => {
  const server = cannedServer(() =>
    json({
      code: "precondition_failed",
      message: "Head is v5, not v3",
      request_id: "req_9",
    }, 412)
  );
  try {
    const dir = await manifestDir();
    const r = await cfgtool(
      ["push", dir, "--tenant", "a", "--namespace", "b", "--if-match", "3"],
      { CFGTOOL_SERVER: server.url, CFGTOOL_TOKEN: SECRET_TOKEN },
    );
    assertEquals(r.code, 1);
    assertEquals(r.stderr.trim(), "error: Head is v5, not v3");
  } finally {
    await server.close();
  }
});

Deno.test("an unreachable service exits 1 with 'cannot reach'", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const r = await cfgtool([
    "tenant",
    "list",
    "--server",
    `http://127.0.0.1:${port}`,
    "--token",
    SECRET_TOKEN,
  ]);
  assertEquals(r.code, 1);
  assertStringIncludes(r.stderr, `cannot reach http://127.0.0.1:${port}`);
  assert(!r.stderr.includes(SECRET_TOKEN));
});

Deno.test("pull writes a verified manifest, keeps dotfiles, drops stale files, refuses other dirs", async () => {
  const enc = new TextEncoder();
  const files = new Map([
    ["namespace.toml", enc.encode(NAMESPACE_TOML)],
    ["flags/dark-mode.toml", enc.encode(FLAG_TOML)],
  ]);
  const archive = await packArchive(files);
  const hash = await closureHash(files);
  let etagHash = hash;
  const server = cannedServer(() =>
    new Response(archive as BodyInit, {
      headers: { "content-type": "application/gzip", etag: `"v7-${etagHash}"` },
    })
  );
  const env = { CFGTOOL_SERVER: server.url, CFGTOOL_TOKEN: SECRET_TOKEN };
  const args = ["--tenant", "acme", "--namespace", "checkout"];
  try {
    const parent = await Deno.makeTempDir();
    const dir = `${parent}/flags-dir`;
    let r = await cfgtool(["pull", dir, ...args], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, `pulled version 7 (${hash}) into ${dir}: 2 files\n`);
    assertEquals(await Deno.readTextFile(`${dir}/flags/dark-mode.toml`), FLAG_TOML);

    // A manifest directory with a dotfile and a stale flag: replaced, dotfile kept.
    await Deno.writeTextFile(`${dir}/.keep`, "k");
    await Deno.writeTextFile(`${dir}/flags/old.toml`, FLAG_TOML);
    r = await cfgtool(["pull", dir, ...args, "--version", "7", "--json"], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(JSON.parse(r.stdout).version, 7);
    assertEquals(await Deno.readTextFile(`${dir}/.keep`), "k");
    assertEquals(await Deno.stat(`${dir}/flags/old.toml`).catch(() => null), null);
    assertEquals(server.requests.at(-1)!.path, "/api/v1/tenants/acme/namespaces/checkout/manifest");
    assertEquals([...(await Array.fromAsync(Deno.readDir(parent)))].map((e) => e.name), [
      "flags-dir",
    ]);

    // Pulling into the working directory keeps the directory itself.
    await Deno.writeTextFile(`${dir}/flags/old.toml`, FLAG_TOML);
    r = await cfgtool(["pull", ".", ...args], env, dir);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.stat(`${dir}/flags/old.toml`).catch(() => null), null);
    assertEquals(await Deno.readTextFile(`${dir}/.keep`), "k");
    assertEquals(await Deno.readTextFile(`${dir}/namespace.toml`), NAMESPACE_TOML);
    assertEquals([...(await Array.fromAsync(Deno.readDir(parent)))].map((e) => e.name), [
      "flags-dir",
    ]);

    // A directory with other files: refused before any request, unless --force.
    const other = await Deno.makeTempDir();
    await Deno.writeTextFile(`${other}/README.md`, "hello");
    const before = server.requests.length;
    assertUsage(await cfgtool(["pull", other, ...args], env), "not a manifest directory");
    assertEquals(server.requests.length, before);
    r = await cfgtool(["pull", other, ...args, "--force"], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(await Deno.readTextFile(`${other}/README.md`), "hello");
    assertEquals(await Deno.readTextFile(`${other}/namespace.toml`), NAMESPACE_TOML);

    // An ETag that does not match the files: nothing written.
    etagHash = "sha256:" + "0".repeat(64);
    const fresh = `${parent}/fresh`;
    r = await cfgtool(["pull", fresh, ...args], env);
    assertEquals(r.code, 1);
    assertStringIncludes(r.stderr, "nothing was written");
    assertEquals(await Deno.stat(fresh).catch(() => null), null);
  } finally {
    await server.close();
  }
});

Deno.test("token create prints the secret alone on the last line and warns on long lifetimes", async () => {
  const server = cannedServer((_req) =>
    json({
      token: {
        id: "tok_1",
        type: "namespace-write",
        name: "ci",
        tenant_slug: "acme",
        namespace_slug: "checkout",
        prefix: "svc_write_Abcd",
        status: "active",
        expires_at: null,
      },
      secret: "svc_write_NEWSECRET",
      request_id: "r",
    }, 201)
  );
  try {
    const env = { CFGTOOL_SERVER: server.url, CFGTOOL_TOKEN: SECRET_TOKEN };
    const args = [
      "token",
      "create",
      "--type",
      "namespace-write",
      "--name",
      "ci",
      "--tenant",
      "acme",
    ];
    let r = await cfgtool([...args, "--namespace", "checkout"], env);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(lastLine(r.stdout), "svc_write_NEWSECRET");
    assertStringIncludes(r.stdout, "tok_1");
    assertStringIncludes(r.stderr, "never expires");
    assert(!r.stdout.includes(SECRET_TOKEN) && !r.stderr.includes(SECRET_TOKEN));
    const body = JSON.parse(server.requests[0]!.body);
    assertEquals(body, {
      type: "namespace-write",
      name: "ci",
      tenant_slug: "acme",
      namespace_slug: "checkout",
    });

    r = await cfgtool([...args, "--namespace", "checkout", "--expires-in", "120d"], env);
    assertStringIncludes(r.stderr, "recommended maximum is 90 days");
    r = await cfgtool([...args, "--namespace", "checkout", "--expires-in", "30d", "--json"], env);
    assertEquals(r.stderr, "");
    assertEquals(JSON.parse(r.stdout).secret, "svc_write_NEWSECRET");
    assert(typeof JSON.parse(server.requests[2]!.body).expires_at === "string");
  } finally {
    await server.close();
  }
});

Deno.test("lifetimeWarning() follows the documented thresholds", () => {
  const now = new Date("2030-01-01T00:00:00Z");
  const days = (n: number) => new Date(now.getTime() + n * 86_400_000);
  assertEquals(lifetimeWarning("namespace-read", days(180), now), undefined);
  assert(lifetimeWarning("namespace-read", days(181), now));
  assertEquals(lifetimeWarning("namespace-write", days(90), now), undefined);
  assert(lifetimeWarning("namespace-write", days(91), now));
  assert(lifetimeWarning("namespace-client", days(91), now));
  assertEquals(lifetimeWarning("tenant-admin", days(30), now), undefined);
  assert(lifetimeWarning("tenant-admin", days(31), now));
  assert(lifetimeWarning("superadmin", null, now));
  assert(lifetimeWarning("namespace-read", null, now));
});

Deno.test("--help of each command group shows examples", async () => {
  for (const group of ["push", "pull", "tenant", "namespace", "token", "admin"]) {
    const r = await cfgtool([group, "--help"]);
    assertEquals(r.code, 0, `${group}: ${r.stderr}`);
    assertStringIncludes(r.stdout, "Examples:");
    assertStringIncludes(r.stdout, `cfgtool ${group}`);
  }
  const r = await cfgtool(["token", "create", "--help"]);
  assertStringIncludes(r.stdout, "--expires-in");
  assertStringIncludes(r.stdout, "$CFGTOOL_TOKEN");
});

Deno.test("namespace rollback --version is the subcommand's option, not the program version", async () => {
  const server = cannedServer(() => json({ version: 9, closure_hash: "sha256:r" }, 201));
  try {
    const r = await cfgtool(
      ["namespace", "rollback", "--tenant", "a", "--namespace", "b", "--version", "3"],
      { CFGTOOL_SERVER: server.url, CFGTOOL_TOKEN: SECRET_TOKEN },
    );
    assertEquals(r.code, 0, r.stderr);
    assertEquals(r.stdout, "version 9 (sha256:r), restored from version 3\n");
    assertEquals(JSON.parse(server.requests[0]!.body), { version: 3 });
  } finally {
    await server.close();
  }
});

Deno.test("admin bootstrap, user create and session create print the secret or id last", async () => {
  const dir = await Deno.makeTempDir();
  const kv = `${dir}/data/kv.sqlite3`;
  let r = await cfgtool(["admin", "bootstrap", "--kv", kv]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(lastLine(r.stdout), /^svc_admin_[1-9A-HJ-NP-Za-km-z]+$/);
  assertStringIncludes(r.stdout, "bootstrap-1");
  assert((await Deno.stat(`${dir}/data/token.key`)).isFile);

  r = await cfgtool(["admin", "bootstrap", "--kv", kv, "--json"]);
  const second = JSON.parse(r.stdout);
  assertEquals(second.token.name, "bootstrap-2");
  assertMatch(second.secret, /^svc_admin_/);

  r = await cfgtool(["admin", "user", "create", "--kv", kv, "--email", "Ana@Example.com"]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(lastLine(r.stdout), /^usr_/);

  r = await cfgtool([
    "admin",
    "session",
    "create",
    "--kv",
    kv,
    "--user",
    "ana@example.com",
    "--ttl",
    "1h",
  ]);
  assertEquals(r.code, 0, r.stderr);
  assertMatch(lastLine(r.stdout), /^ses_/);

  r = await cfgtool(["admin", "session", "create", "--kv", kv, "--user", "nobody@example.com"]);
  assertEquals(r.code, 1);
  assertStringIncludes(r.stderr, "No user nobody@example.com");
});
