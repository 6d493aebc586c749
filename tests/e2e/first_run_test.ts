/**
 * The first run of a new installation, with real `cfgtool serve` processes:
 * on a store with no tenant and no user, `serve` prints one line with a
 * one-time operator console link after its listening line (once for a
 * `--workers` group; how to make one instead when it listens on a
 * non-loopback address without `--public-url`; nothing on a store that is
 * not new). The link asks its opener's email, opens the console as the
 * operator once, and is written nowhere but that stdout line: not in the
 * log, not in the store. The sign-in page of a new installation says how
 * to get in; an unknown tenant is "no such tenant", a tenant without a
 * login policy "has no sign-in set up", and such answers count against
 * the per-address limit. A link made against another store says so.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli } from "./installation.ts";
import { type ServerProcess, startServer } from "./server_process.ts";

const LINK = /^new installation: .*: (https?:\/\/\S+\/auth\/operator\?code=(\w+))$/;

/** The first-run lines a server printed on stdout. */
function firstRunLines(server: ServerProcess): string[] {
  return server.stdout().split("\n").filter((l) => l.startsWith("new installation:"));
}

/** Waits until the server printed its first-run line, and returns the link's URL and code. */
async function printedLink(server: ServerProcess): Promise<{ url: URL; code: string }> {
  const end = Date.now() + 20_000;
  while (firstRunLines(server).length === 0) {
    if (Date.now() > end) throw new Error(`no first-run line in:\n${server.stdout()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const m = LINK.exec(firstRunLines(server)[0]!);
  assert(m, server.stdout());
  return { url: new URL(m[1]!), code: m[2]! };
}

async function page(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { redirect: "manual", ...init });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

function openLink(server: ServerProcess, fields: Record<string, string>) {
  return page(`${server.url}/auth/operator`, {
    method: "POST",
    headers: { origin: server.url },
    body: new URLSearchParams(fields),
  });
}

/** Every key and value of a KV file, as text (the server must be stopped). */
async function storeText(path: string): Promise<string> {
  const kv = await Deno.openKv(path);
  try {
    const out: string[] = [];
    for await (const e of kv.list({ prefix: [] })) {
      out.push(
        JSON.stringify(
          [e.key, e.value],
          (_, v) =>
            typeof v === "bigint"
              ? String(v)
              : v instanceof Uint8Array
              ? new TextDecoder().decode(v)
              : v,
        ),
      );
    }
    return out.join("\n");
  } finally {
    kv.close();
  }
}

Deno.test("a new store: serve prints one console link; it opens the console once and is logged nowhere", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-first-run-" });
  const kvPath = `${dir}/kv.sqlite3`;
  let server = await startServer({ kv: kvPath });
  try {
    const { url, code } = await printedLink(server);

    await t.step("the line follows the listening line and points at the server", () => {
      const lines = server.stdout().trim().split("\n");
      assertEquals(lines.length, 2, server.stdout());
      assertStringIncludes(lines[0]!, `cfgtool listening on ${server.url}`);
      assertEquals(url.origin, server.url);
      assertStringIncludes(lines[1]!, "works once, for 10 minutes");
    });

    await t.step("the sign-in page of a new installation says how to get in", async () => {
      const login = await page(`${server.url}/auth/login`);
      assertEquals(login.status, 200);
      assertStringIncludes(login.text, "This installation has no tenant yet");
      assertStringIncludes(login.text, "<code>cfgtool serve</code> printed");
      assertStringIncludes(login.text, "cfgtool admin console-link");
      const console = await page(`${server.url}/ui`);
      assertEquals(console.status, 303);
      const sent = await page(new URL(console.headers.get("location")!, server.url).href);
      assertStringIncludes(sent.text, "This installation has no tenant yet");
      const named = await page(`${server.url}/auth/login?tenant=acme`);
      assertEquals(named.status, 404);
      assertStringIncludes(named.text, "No such tenant: acme");
      assertStringIncludes(named.text, "This installation has no tenant yet");
      assert(!named.text.includes("no sign-in set up"), named.text);
    });

    await t.step("a link made against another store says it may be another store", async () => {
      const other = `${dir}/other/kv.sqlite3`;
      const made = await runCli([
        "admin",
        "console-link",
        "--user",
        "ops@example.com",
        "--url",
        server.url,
      ], { env: { CFGTOOL_KV: other } });
      assertEquals(made.code, 0, made.stderr);
      const foreign = new URL(made.stdout.trim().split("\n").at(-1)!);
      const shown = await page(foreign.href);
      assertEquals(shown.status, 403);
      assertStringIncludes(shown.text, "may have been made against another store");
      assertStringIncludes(shown.text, "CFGTOOL_KV");
      const posted = await openLink(server, { code: foreign.searchParams.get("code")! });
      assertEquals(posted.status, 403);
      assertStringIncludes(posted.text, "another store");
    });

    let cookie = "";
    await t.step(
      "the link asks the opener's email, then opens the console as operator",
      async () => {
        const confirm = await page(url.href);
        assertEquals(confirm.status, 200);
        assertStringIncludes(confirm.text, '<label for="email">Your email</label>');
        const refused = await openLink(server, { code, email: "not an address" });
        assertEquals(refused.status, 400, "a bad email shows the form again…");
        assertStringIncludes(refused.text, 'aria-invalid="true"');
        assertStringIncludes(refused.text, 'value="not an address"');
        const opened = await openLink(server, { code, email: "Ops@Example.com" });
        assertEquals(opened.status, 303, "…and leaves the link usable");
        assertEquals(opened.headers.get("location"), "/ui");
        cookie = opened.headers.get("set-cookie")!.split(";")[0]!;
        const me = await (await fetch(`${server.url}/api/v1/me`, { headers: { cookie } })).json();
        assertEquals(me.principal.user.email, "ops@example.com");
        assertEquals(me.principal.session.login_method, "operator");
        assertEquals(me.principal.session.superadmin, true);
        const home = await page(`${server.url}/ui`, { headers: { cookie } });
        assertEquals(home.status, 200);
        assertStringIncludes(home.text, "Create a tenant");
        const made = await page(`${server.url}/ui/tenants`, {
          method: "POST",
          headers: { cookie, origin: server.url },
          body: new URLSearchParams({ _csrf: me.csrf_token, slug: "acme" }),
        });
        assertEquals(made.status, 303, made.text);
        assertEquals(made.headers.get("location"), "/ui/t/acme");
      },
    );

    await t.step("the link works once", async () => {
      const again = await openLink(server, { code, email: "eve@example.com" });
      assertEquals(again.status, 403);
      assertStringIncludes(again.text, "console link was used already");
      assertEquals((await page(url.href)).status, 403);
    });

    await t.step("an unknown tenant is no such tenant, one without sign-in says so", async () => {
      const unknown = await page(`${server.url}/auth/login?tenant=nope`);
      assertEquals(unknown.status, 404);
      assertStringIncludes(unknown.text, "No such tenant: nope");
      assert(!unknown.text.includes("no sign-in set up"), unknown.text);
      const bare = await page(`${server.url}/auth/login?tenant=acme`);
      assertEquals(bare.status, 404);
      assertStringIncludes(bare.text, "Tenant acme has no sign-in set up");
      const chooser = await page(`${server.url}/auth/login`);
      assertStringIncludes(chooser.text, '<label for="tenant">');
      assert(!chooser.text.includes("no tenant yet"), "the installation has a tenant now");
    });

    await t.step(
      "the link is in no log line, nowhere in the store, and the audit names the operator",
      async () => {
        assert(!(await server.logsSettled()).includes(code), "the secret reached the log");
        assertStringIncludes(server.logs(), "printed a one-time operator console link on stdout");
        assertEquals(await server.stop(), 0);
        const stored = await storeText(kvPath);
        assert(!stored.includes(code), "the secret reached the store");
        const signIns = stored.split("\n").filter((l) =>
          l.startsWith('[["audit_by_time"') && l.includes('"type":"login.succeeded"')
        );
        assertEquals(signIns.length, 1, signIns.join("\n"));
        assertStringIncludes(signIns[0]!, '"first_run":true');
        assertStringIncludes(signIns[0]!, '"method":"operator"');
      },
    );

    await t.step("started again on a store that is not new, serve prints no link", async () => {
      server = await startServer({ kv: kvPath });
      // telling tenants apart counts against the per-address sign-in limit
      let status = 0;
      for (let i = 0; i < 61 && status !== 429; i++) {
        status = (await page(`${server.url}/auth/login?tenant=guess-${i}`)).status;
      }
      assertEquals(status, 429, "names cannot be tried in bulk");
      assertEquals(await server.stop(), 0);
      assertEquals(firstRunLines(server), [], server.stdout());
    });
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a --workers group on a new store prints one link, on its --public-url", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-first-run-" });
  const server = await startServer({
    kv: `${dir}/kv.sqlite3`,
    args: ["--workers", "2", "--hostname", "0.0.0.0", "--public-url", "https://flags.example.test"],
  });
  try {
    const { url, code } = await printedLink(server);
    assertEquals(url.origin, "https://flags.example.test");
    const port = new URL(server.url).port;
    const confirm = await page(`http://127.0.0.1:${port}/auth/operator?code=${code}`);
    assertEquals(confirm.status, 200, confirm.text);
    assertStringIncludes(confirm.text, "Your email");
    assertEquals(await server.stop(), 0);
    assertEquals(firstRunLines(server).length, 1, server.stdout());
    assert(!server.logs().includes(code), "the secret reached the log");
  } finally {
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("on a non-loopback address without --public-url, serve says how to make a link", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-first-run-" });
  const server = await startServer({ kv: `${dir}/kv.sqlite3`, args: ["--hostname", "0.0.0.0"] });
  try {
    assertEquals(await server.stop(), 0);
    const lines = firstRunLines(server);
    assertEquals(lines.length, 1, server.stdout());
    assertStringIncludes(lines[0]!, "no console link printed");
    assertStringIncludes(lines[0]!, "cfgtool admin console-link --user");
    assert(!server.stdout().includes("code="), server.stdout());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
