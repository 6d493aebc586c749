import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { startServer } from "./server_process.ts";
import { NS_TOML, startWorld, stringFlag, waitFor } from "../client/fixture.ts";

const CLI = new URL("../../cli.ts", import.meta.url).pathname;

interface Watcher {
  child: Deno.ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code. */
  exit: Promise<number>;
}

function spawnWatch(args: string[]): Watcher {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", CLI, "watch", ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1" },
  }).spawn();
  let out = "";
  let err = "";
  const dec = new TextDecoder();
  const pump = async (s: ReadableStream<Uint8Array>, isOut: boolean) => {
    for await (const c of s) {
      if (isOut) out += dec.decode(c, { stream: true });
      else err += dec.decode(c, { stream: true });
    }
  };
  const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  const exit = child.status.then(async (s) => {
    await pumps;
    return s.code;
  });
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function readText(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return null;
  }
}

async function waitForFile(path: string, want: (text: string) => boolean, what: string) {
  let text: string | null = null;
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    text = await readText(path);
    if (text !== null && want(text)) return text;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}; last content: ${text}`);
}

Deno.test("cfgtool watch mirrors verified closures atomically, writes status, survives a restart", async () => {
  const world = await startWorld(["web", "api"]);
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-watch-" });
  const statusFile = `${dir}/.cfgtool-watch.json`;
  let restarted: Awaited<ReturnType<typeof startServer>> | null = null;
  let watcher: Watcher | null = null;
  try {
    const files: Record<string, string> = {
      "namespace.toml": NS_TOML,
      "flags/banner.toml": stringFlag("one"),
    };
    await world.push(files);
    await world.push({ "namespace.toml": NS_TOML, "flags/other.toml": stringFlag("x") }, "api");
    watcher = spawnWatch([
      dir,
      "--server",
      world.inst.url,
      "--token",
      world.token,
      "--ns",
      "web:*",
      "--ns",
      "api:banner",
    ]);
    await waitForFile(`${dir}/web/flags/banner.toml`, (t) => t.includes('"one"'), "v1");
    // api subscribes to a flag that does not exist yet: its closure is namespace.toml alone
    await waitForFile(`${dir}/api/namespace.toml`, (t) => t === NS_TOML, "api");
    assertEquals(await readText(`${dir}/api/flags/other.toml`), null);

    const st1 = JSON.parse(
      await waitForFile(statusFile, (t) => t.includes('"version": 1'), "status"),
    );
    assertEquals(st1.namespaces.web.version, 1);
    assertMatch(st1.namespaces.web.closure_hash, /^sha256:[0-9a-f]{64}$/);
    assertEquals(st1.namespaces.web.last_error, null);
    assert(!JSON.stringify(st1).includes(world.token), "the status file never holds the token");

    files["flags/banner.toml"] = stringFlag("two");
    const v2 = await world.push(files);
    const pushed = await world.inst.api(
      "GET",
      "/api/v1/tenants/acme/namespaces/web/manifest",
      world.token,
      undefined,
      { accept: "application/json" },
    );
    await waitForFile(`${dir}/web/flags/banner.toml`, (t) => t.includes('"two"'), "v2");
    const link = await Deno.lstat(`${dir}/web`);
    assert(link.isSymlink, "<dir>/web is swapped atomically as a link");
    const listVersionDirs = () =>
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.startsWith(".web.v"));
    // the swap comes first, the removal of the old version right after it
    await waitFor(() => listVersionDirs().length === 1, "old versions are removed");
    const versionDirs = listVersionDirs();
    assertEquals(versionDirs.length, 1, `old versions are removed: ${versionDirs}`);
    assertMatch(versionDirs[0]!, new RegExp(`^\\.web\\.v${v2}\\.`));
    await waitFor(() => watcher!.stdout().includes(`applied web v${v2} `), "the apply line");
    const st2 = JSON.parse(
      await waitForFile(statusFile, (t) => JSON.parse(t).namespaces.web.version === v2, "status 2"),
    );
    assertEquals(st2.namespaces.web.closure_hash, pushed.body.closure_hash);

    // kill the server; the agent keeps the mirror and reconnects to the restarted one
    await world.inst.server.kill();
    await waitFor(
      () => watcher!.stderr().includes("event stream interrupted: "),
      "the agent to notice",
    );
    restarted = await startServer({
      kv: world.inst.kvPath,
      args: ["--head-poll-ms", "20", "--port", new URL(world.inst.url).port],
    });
    files["flags/banner.toml"] = stringFlag("three");
    const v3 = await world.push(files);
    await waitForFile(`${dir}/web/flags/banner.toml`, (t) => t.includes('"three"'), "v3");
    const st3 = JSON.parse(
      await waitForFile(statusFile, (t) => JSON.parse(t).namespaces.web.version === v3, "status 3"),
    );
    assert(st3.last_error !== null, "the outage is recorded");
    assertEquals(st3.namespaces.web.last_error, null);
    assertEquals(st3.namespaces.web.stale, false);

    await waitFor(
      () => watcher!.stderr().includes("event stream reconnected"),
      "the reconnect line",
    );
    watcher.child.kill("SIGTERM");
    assertEquals(await watcher.exit, 0, watcher.stderr());
    // the outage is told in plain words, never as a raw transport error
    assertMatch(watcher.stderr(), /event stream interrupted: .+; reconnecting in \d+\.\d s\n/);
    assertMatch(
      watcher.stderr(),
      /event stream unavailable: cannot reach http:\/\/127\.0\.0\.1:\d+: connection refused/,
    );
    for (
      const raw of ["error reading a body", "fetch failed", "error sending request", "TypeError"]
    ) {
      assert(!watcher.stderr().includes(raw), `raw "${raw}" in:\n${watcher.stderr()}`);
    }
    watcher = null;
    const lines = (await readText(`${dir}/web/flags/banner.toml`))!;
    assertStringIncludes(lines, '"three"');
  } finally {
    if (watcher !== null) {
      watcher.child.kill("SIGKILL");
      await watcher.exit;
    }
    await restarted?.stop();
    await world.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool watch exits 1 on a fatal error (401), and 2 without --ns or on a file", async () => {
  const world = await startWorld();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-watch-" });
  try {
    await world.push({ "namespace.toml": NS_TOML });
    const bad = spawnWatch([
      dir,
      "--server",
      world.inst.url,
      "--token",
      "svc_x_nope",
      "--ns",
      "web:*",
    ]);
    assertEquals(await bad.exit, 1);
    assertStringIncludes(bad.stderr(), `error: ${world.inst.url} rejected the credential of`);
    assertStringIncludes(bad.stderr(), "not shaped like a cfgtool token");
    const st = JSON.parse((await readText(`${dir}/.cfgtool-watch.json`))!);
    assertEquals(st.fatal.code, "unauthorized");
    assertEquals(st.connected, false);
    assertMatch(st.stopped_at, /^\d{4}-\d\d-\d\dT/);
    const usage = spawnWatch([dir, "--server", world.inst.url, "--token", world.token]);
    assertEquals(await usage.exit, 2);
    assertStringIncludes(usage.stderr(), "--ns");
    const notDir = spawnWatch([
      statusOf(dir),
      "--server",
      world.inst.url,
      "--token",
      world.token,
      "--ns",
      "web:*",
    ]);
    assertEquals(await notDir.exit, 2, "a file given as the mirror directory is a usage error");
    assertStringIncludes(notDir.stderr(), "exists and is not a directory");
  } finally {
    await world.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool watch stopped by SIGTERM leaves a status file that says disconnected, with the time", async () => {
  const world = await startWorld();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-watch-" });
  const statusFile = `${dir}/.cfgtool-watch.json`;
  let watcher: Watcher | null = null;
  try {
    await world.push({ "namespace.toml": NS_TOML, "flags/banner.toml": stringFlag("one") });
    watcher = spawnWatch([
      dir,
      "--server",
      world.inst.url,
      "--token",
      world.token,
      "--ns",
      "web:*",
    ]);
    const running = JSON.parse(
      await waitForFile(
        statusFile,
        (t) => JSON.parse(t).connected === true && JSON.parse(t).namespaces.web.version === 1,
        "a connected status",
      ),
    );
    assertEquals(running.disconnected_at, null);
    assertEquals(running.stopped_at, null);

    watcher.child.kill("SIGTERM");
    assertEquals(await watcher.exit, 0, watcher.stderr());
    watcher = null;
    const stopped = JSON.parse((await readText(statusFile))!);
    assertEquals(stopped.connected, false);
    assertMatch(stopped.disconnected_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assertEquals(stopped.stopped_at, stopped.disconnected_at);
    assert(
      Date.parse(stopped.disconnected_at) >= Date.parse(running.updated_at),
      "the disconnection is after the last connected status",
    );
    assertEquals(stopped.namespaces.web.version, 1, "the mirror state is kept");
  } finally {
    if (watcher !== null) {
      watcher.child.kill("SIGKILL");
      await watcher.exit;
    }
    await world.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cfgtool watch with an unknown token names the server and the token's public prefix only", async () => {
  const world = await startWorld();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-watch-" });
  try {
    await world.push({ "namespace.toml": NS_TOML });
    // a well-formed token this server never issued
    const unknown = `svc_read_${"Z".repeat(43)}`;
    const bad = spawnWatch([dir, "--server", world.inst.url, "--token", unknown, "--ns", "web:*"]);
    assertEquals(await bad.exit, 1);
    const stderr = bad.stderr();
    assertStringIncludes(
      stderr,
      `error: ${world.inst.url} rejected the token svc_read_ZZZZZ…: Unknown credential`,
    );
    assert(!stderr.includes(unknown), "the secret is never printed");
    assertStringIncludes(stderr, "admin rekey");
    assertStringIncludes(stderr, "CFGTOOL_KV");
    const st = JSON.parse((await readText(`${dir}/.cfgtool-watch.json`))!);
    assert(!JSON.stringify(st).includes(unknown), "nor written to the status file");
    assertStringIncludes(st.fatal.message, "svc_read_ZZZZZ…");
  } finally {
    await world.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** The status file inside a mirror directory: a regular file. */
function statusOf(dir: string): string {
  return `${dir}/.cfgtool-watch.json`;
}
