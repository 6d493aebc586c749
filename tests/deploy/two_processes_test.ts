/**
 * examples/deploy/cfgtool@.service: two instances of the template, each a
 * real `cfgtool serve` started with the unit's ExecStart (`%i` a free port)
 * and the example config, on one KV file in one state directory, act as
 * one installation: a push through one is the head and the evaluation of
 * the other, a token issued on one works on the other, and a revocation on
 * one is refused by the other.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  type CliProcess,
  DEPLOY,
  freePort,
  parseUnit,
  rewrite,
  runCliOnce,
  setting,
  startCli,
} from "./deploy_files.ts";

const STATE_DIR = "/var/lib/cfgtool";
const template = parseUnit(await Deno.readTextFile(new URL("cfgtool@.service", DEPLOY)));

/** Waits until `check` holds (polling every 25 ms), up to `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

Deno.test("two instances of cfgtool@.service on one state directory are one installation", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-two-" });
  const servers: CliProcess[] = [];
  try {
    const config = `${dir}/cfgtool.toml`;
    await Deno.writeTextFile(
      config,
      (await Deno.readTextFile(new URL("cfgtool.toml", DEPLOY))).replaceAll(STATE_DIR, dir),
    );
    const exec = setting(template, "Service", "ExecStart")!.split(/\s+/);
    assert(exec.includes("%i"), "the instance name is the port");
    assertEquals(setting(template, "Service", "StateDirectory"), "cfgtool", "one shared directory");
    assertEquals(setting(template, "Service", "User"), "cfgtool", "one owner for the shared files");

    // the first superadmin, as the unit's comments say: admin bootstrap on the store
    const boot = await runCliOnce(["admin", "bootstrap", "--kv", `${dir}/kv.sqlite3`]);
    assertEquals(boot.code, 0, boot.stderr);
    const admin = boot.stdout.trim().split("\n").at(-1)!;

    const ports = [freePort(), freePort()];
    servers.push(
      ...await Promise.all(
        ports.map((port) =>
          startCli(rewrite(exec.slice(1), { "/etc/cfgtool/cfgtool.toml": config, "%i": `${port}` }))
        ),
      ),
    );
    const [a, b] = servers.map((s) => s.url) as [string, string];
    assertEquals([a, b], ports.map((p) => `http://127.0.0.1:${p}`));

    const call = async (
      base: string,
      method: string,
      path: string,
      token: string,
      body?: unknown,
    ) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: await res.json() };
    };
    const NS = "/api/v1/tenants/acme/namespaces/web";
    const files = (description: string) => ({
      "namespace.toml": "schema_version = 1\n[namespace]\n[namespace.environments.production]\n",
      "flags/checkout.toml":
        `schema_version = 1\ndescription = "${description}"\ntype = "boolean"\n` +
        `default = "off"\n[variations]\non = true\noff = false\n`,
    });

    // control plane through A
    assertEquals((await call(a, "POST", "/api/v1/tenants", admin, { slug: "acme" })).status, 201);
    assertEquals(
      (await call(a, "POST", "/api/v1/tenants/acme/namespaces", admin, { slug: "web" })).status,
      201,
    );
    const pushed = await call(a, "PUT", `${NS}/manifest`, admin, { files: files("first") });
    assertEquals(pushed.status, 201, JSON.stringify(pushed.body));
    const issued = await call(a, "POST", "/api/v1/tokens", admin, {
      type: "namespace-read",
      name: "reader",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    assertEquals(issued.status, 201);
    const read: string = issued.body.secret;

    // B sees the head, and evaluates it with the token A issued
    const head = await call(b, "GET", NS, read);
    assertEquals(head.body.namespace.head.version, pushed.body.version);
    const evaluate = (base: string) =>
      call(base, "POST", `${NS}/environments/production/evaluate`, read, { flag: "checkout" });
    const onB = await evaluate(b);
    assertEquals([onB.status, onB.body.version, onB.body.value], [200, 1, false]);

    // a push through B reaches A's evaluations (A polls the head every 250 ms)
    const second = await call(b, "PUT", `${NS}/manifest`, admin, { files: files("second") });
    assertEquals(second.body.version, 2);
    await until(async () => (await evaluate(a)).body.version === 2, "A evaluates version 2");

    // revoked through B: refused by A within its credential poll (25 ms)
    const revoked = await call(b, "DELETE", `/api/v1/tokens/${issued.body.token.id}`, admin);
    assertEquals(revoked.status, 200);
    await until(async () => (await evaluate(a)).status === 401, "A refuses the revoked token");

    // one KV file and one token key for both
    const state = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !n.endsWith(".toml"))
      .sort();
    assert(state.includes("kv.sqlite3") && state.includes("token.key"), state.join(" "));
    for (const server of servers) assertEquals(await server.stop(), 0);
  } finally {
    for (const server of servers) await server.stop("SIGKILL");
    await Deno.remove(dir, { recursive: true });
  }
});
