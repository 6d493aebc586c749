/**
 * ServiceClient's failures in plain words: a 401 names the server and the
 * credential's public prefix; a failed connection says which kind.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { requestIdOf, ServiceClient } from "../../lib/client/api.ts";
import { CfgtoolError, UnauthorizedError } from "../../lib/errors.ts";

const TOKEN = `svc_tenant_${"Q".repeat(44)}`;

/** A loopback port nothing listens on (bound, then closed). */
function closedPort(): number {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("a 401 names the server asked and the credential's public prefix, never the secret", async () => {
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    () =>
      Response.json(
        { code: "unauthorized", message: "Unknown credential", request_id: "req_9" },
        { status: 401 },
      ),
  );
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const client = new ServiceClient({ server: `${url}/`, token: TOKEN });
    const err = await assertRejects(() => client.listTenants(), UnauthorizedError);
    assertEquals(
      err.message,
      `${url} rejected the token svc_tenant_QQQ…: Unknown credential`,
    );
    assert(!err.message.includes(TOKEN));
    assertEquals(err.details?.reason, "Unknown credential");
    assertEquals(err.details?.server, url);
    assertEquals(requestIdOf(err), "req_9");
  } finally {
    ac.abort();
    await server.finished;
  }
});

Deno.test("a closed port and an unresolvable name are told apart in code details and message", async () => {
  const refused = `http://127.0.0.1:${closedPort()}`;
  const e1 = await assertRejects(
    () => new ServiceClient({ server: refused, token: TOKEN }).listTenants(),
    CfgtoolError,
    `cannot reach ${refused}: connection refused`,
  );
  assertEquals([e1.code, e1.details?.reason], ["unreachable", "connection_refused"]);
  const e2 = await assertRejects(
    () => new ServiceClient({ server: "http://nonexistent.invalid", token: TOKEN }).listTenants(),
    CfgtoolError,
    "cannot reach http://nonexistent.invalid: the host name nonexistent.invalid cannot be resolved",
  );
  assertEquals([e2.code, e2.details?.reason], ["unreachable", "name_not_resolved"]);
  assert(!e2.message.includes("fetch failed"));
});

Deno.test("a server that does not answer like cfgtool serve is named as the likely mistake", async () => {
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    () => new Response("<h1>Not Found</h1>", { status: 404, headers: { server: "nginx" } }),
  );
  try {
    const client = new ServiceClient({
      server: `http://127.0.0.1:${server.addr.port}`,
      token: TOKEN,
    });
    const err = await assertRejects(() => client.listTenants(), CfgtoolError);
    assertEquals(
      err.message,
      "GET /api/v1/tenants: HTTP 404 from nginx that does not answer like cfgtool serve: " +
        "is --server (CFGTOOL_SERVER) the address of the cfgtool service?",
    );
  } finally {
    ac.abort();
    await server.finished;
  }
});
