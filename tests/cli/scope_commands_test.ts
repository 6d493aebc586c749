/**
 * lib/cli/scope_commands.ts: `create`, `show`, `delete` and `admin
 * list|add|remove` are the same commands under `tenant` and `namespace`; a
 * namespace is also named by `--tenant`. Runs the commands against a stub
 * `fetch` that records each request and answers with canned JSON.
 */
import { Command } from "commander";
import { assertEquals } from "../assert.ts";
import {
  registerAdminCommands,
  registerCreateCommand,
  registerDeleteCommand,
  registerShowCommand,
  type Scope,
} from "../../lib/cli/scope_commands.ts";

const REMOTE = ["--server", "http://flags.test", "--token", "svc_test"];

/** The `tenant` or `namespace` group with every shared subcommand. */
function group(scope: Scope): Command {
  const g = new Command(scope).exitOverride();
  registerCreateCommand(g, scope, `Create a ${scope}.`, `cfgtool ${scope} create x`);
  registerShowCommand(g, scope);
  registerDeleteCommand(g, scope, `Delete a ${scope}.`);
  registerAdminCommands(g, scope);
  return g;
}

/** The long option names of a subcommand (`["admin", "list"]` for nested ones). */
function optionsOf(g: Command, path: string[]): string[] {
  let cmd: Command | undefined = g;
  for (const name of path) cmd = cmd?.commands.find((c) => c.name() === name) as Command;
  return cmd!.options.map((o) => o.long!);
}

interface Run {
  /** `METHOD path body` per request. */
  requests: string[];
  /** What the command printed: `out …` and `err …` lines. */
  printed: string[];
}

/** Runs `cfgtool <scope> <args>` with `fetch` answering `answer` to every request. */
async function run(scope: Scope, args: string[], answer: unknown): Promise<Run> {
  const result: Run = { requests: [], printed: [] };
  const { log, error } = console;
  const realFetch = globalThis.fetch;
  console.log = (line: string) => void result.printed.push(`out ${line}`);
  console.error = (line: string) => void result.printed.push(`err ${line}`);
  globalThis.fetch = async (input: Request | URL | string, init?: RequestInit) => {
    const req = new Request(input, init);
    const body = req.body === null ? "" : ` ${await req.text()}`;
    result.requests.push(`${req.method} ${new URL(req.url).pathname}${body}`);
    return Response.json(answer);
  };
  try {
    await group(scope).parseAsync([...args, ...REMOTE], { from: "user" });
  } finally {
    Object.assign(console, { log, error });
    globalThis.fetch = realFetch;
  }
  return result;
}

Deno.test("a namespace's shared subcommands take what a tenant's take, plus --tenant", () => {
  const tenant = group("tenant");
  const ns = group("namespace");
  const remote = ["--server", "--token", "--profile"];
  assertEquals(optionsOf(tenant, ["create"]), [...remote, "--description", "--json"]);
  assertEquals(optionsOf(ns, ["create"]), [...remote, "--tenant", "--description", "--json"]);
  assertEquals(optionsOf(tenant, ["show"]), [...remote, "--json"]);
  assertEquals(optionsOf(ns, ["show"]), [...remote, "--tenant", "--json"]);
  assertEquals(optionsOf(tenant, ["delete"]), [...remote, "--yes", "--json"]);
  assertEquals(optionsOf(ns, ["delete"]), [...remote, "--tenant", "--yes", "--json"]);
});

Deno.test("a tenant's admins are named by --tenant, a namespace's by --tenant and --namespace", () => {
  for (const verb of ["list", "add", "remove"]) {
    assertEquals(optionsOf(group("tenant"), ["admin", verb]), [
      "--server",
      "--token",
      "--profile",
      "--tenant",
      "--json",
    ]);
    assertEquals(optionsOf(group("namespace"), ["admin", verb]), [
      "--server",
      "--token",
      "--profile",
      "--tenant",
      "--namespace",
      "--json",
    ]);
  }
});

Deno.test("create sends the slug and description and names what it created", async () => {
  const tenant = await run("tenant", ["create", "acme", "--description", "ACME"], {
    tenant: { slug: "acme" },
  });
  assertEquals(tenant.requests, ['POST /api/v1/tenants {"slug":"acme","description":"ACME"}']);
  assertEquals(tenant.printed, ["out created tenant acme"]);
  const ns = await run("namespace", ["create", "web", "--tenant", "acme"], {
    namespace: { slug: "web" },
  });
  assertEquals(ns.requests, ['POST /api/v1/tenants/acme/namespaces {"slug":"web"}']);
  assertEquals(ns.printed, ["out created namespace acme/web"]);
});

Deno.test("show prints the service's fields but its request id", async () => {
  const r = await run("namespace", ["show", "web", "--tenant", "acme"], {
    namespace: { slug: "web", description: null },
    request_id: "req_1",
  });
  assertEquals(r.requests, ["GET /api/v1/tenants/acme/namespaces/web"]);
  assertEquals(r.printed, ["out slug:        web", "out description: -"]);
});

Deno.test("delete --yes deletes at once and says how many tokens were revoked", async () => {
  const tenant = await run("tenant", ["delete", "acme", "--yes"], { revoked_tokens: ["tok_1"] });
  assertEquals(tenant.requests, ["DELETE /api/v1/tenants/acme"]);
  assertEquals(tenant.printed, ["out deleted tenant acme (1 token revoked)"]);
  const ns = await run("namespace", ["delete", "web", "--tenant", "acme", "--yes", "--json"], {
    revoked_tokens: 2,
  });
  assertEquals(ns.requests, ["DELETE /api/v1/tenants/acme/namespaces/web"]);
  assertEquals(ns.printed, [`out ${JSON.stringify({ revoked_tokens: 2 }, null, 2)}`]);
});

Deno.test("admin add and remove change the admins of the named tenant or namespace", async () => {
  const add = await run("tenant", ["admin", "add", "usr_1", "--tenant", "acme"], {});
  assertEquals(add.requests, ['POST /api/v1/tenants/acme/admins {"user_id":"usr_1"}']);
  assertEquals(add.printed, ["out usr_1 is now an admin of tenant acme"]);
  const remove = await run(
    "namespace",
    ["admin", "remove", "usr_1", "--tenant", "acme", "--namespace", "web"],
    {},
  );
  assertEquals(remove.requests, ["DELETE /api/v1/tenants/acme/namespaces/web/admins/usr_1"]);
  assertEquals(remove.printed, ["out usr_1 is no longer an admin of namespace acme/web"]);
});

Deno.test("admin list prints who added each admin and when", async () => {
  const r = await run("namespace", ["admin", "list", "--tenant", "acme", "--namespace", "web"], {
    admins: [
      { user_id: "usr_1", added_by: "usr_0", added_at: "2030-01-01" },
      { user_id: "usr_2", created_at: "2030-01-02" },
    ],
  });
  assertEquals(r.requests, ["GET /api/v1/tenants/acme/namespaces/web/admins"]);
  assertEquals(r.printed, [
    "out USER   ADDED BY  ADDED",
    "out usr_1  usr_0     2030-01-01",
    "out usr_2  -         2030-01-02",
  ]);
});
