/**
 * The credential cache across real processes: two `cfgtool serve`
 * processes on one KV file, a token authenticated through both (so both
 * cache it), revoked through one.
 */
import { assert, assertEquals } from "../assert.ts";
import { readSse } from "../events/sse_client.ts";
import { flagToml, NS_TOML } from "../events/world.ts";
import { startInstallation } from "./installation.ts";
import { startServer } from "./server_process.ts";

Deno.test("a token revoked through process A is refused by A at once and by process B within 100 ms", async () => {
  const inst = await startInstallation();
  const b = await startServer({ kv: inst.kvPath });
  const ac = new AbortController();
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
    const pushed = await inst.api(
      "PUT",
      "/api/v1/tenants/acme/namespaces/web/manifest",
      inst.admin,
      { files: { "namespace.toml": NS_TOML, "flags/a.toml": flagToml("A1") } },
    );
    assertEquals(pushed.status, 201);
    const created = await inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "tenant-admin",
      tenant_slug: "acme",
      name: "ci",
    });
    assertEquals(created.status, 201);
    const secret: string = created.body.secret;
    const read = (base: string) =>
      fetch(`${base}/api/v1/tenants/acme`, { headers: { authorization: `Bearer ${secret}` } })
        .then(async (r) => {
          await r.body?.cancel();
          return r.status;
        });
    // both processes have authenticated (and cached) the token
    for (let i = 0; i < 3; i++) {
      assertEquals(await read(inst.url), 200);
      assertEquals(await read(b.url), 200);
    }
    // and the token holds an event stream on B
    const stream = readSse(
      await fetch(`${b.url}/api/v1/events?ns=acme/web:a`, {
        headers: { authorization: `Bearer ${secret}` },
        signal: ac.signal,
      }),
      ac,
    );
    assertEquals(stream.response.status, 200);
    await stream.next();
    const revoked = await inst.api(
      "DELETE",
      `/api/v1/tokens/${created.body.token.id}`,
      inst.admin,
    );
    assertEquals(revoked.status, 200);
    const at = performance.now();
    // the revoking process: the very next request
    assertEquals(await read(inst.url), 401);
    // the other process: within 100 ms of the revocation's answer
    let status = await read(b.url);
    while (status === 200 && performance.now() - at < 2000) {
      await new Promise((r) => setTimeout(r, 5));
      status = await read(b.url);
    }
    const after = performance.now() - at;
    assertEquals(status, 401);
    assert(after <= 100, `process B refused the token ${after.toFixed(1)} ms after revocation`);
    // B's stream ends with the change too, long before its 5 s periodic credential check
    await Promise.race([stream.ended, new Promise((r) => setTimeout(r, 2000))]);
    const ended = performance.now() - at;
    assert(stream.done, "the revoked token's stream on B has ended");
    assert(ended < 2000, `stream on B ended ${ended.toFixed(0)} ms after revocation`);
  } finally {
    ac.abort();
    await b.stop();
    await inst.close();
  }
});

Deno.test("a cached token stops working at its expires_at, though nothing about it changed in the store", async () => {
  const inst = await startInstallation();
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    const expires = new Date(Date.now() + 1500).toISOString();
    const created = await inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "tenant-admin",
      tenant_slug: "acme",
      name: "short",
      expires_at: expires,
    });
    assertEquals(created.status, 201);
    const read = () =>
      fetch(`${inst.url}/api/v1/tenants/acme`, {
        headers: { authorization: `Bearer ${created.body.secret}` },
      }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    assertEquals(await read(), 200);
    assertEquals(await read(), 200);
    await new Promise((r) => setTimeout(r, Date.parse(expires) - Date.now() + 50));
    assertEquals(await read(), 401);
  } finally {
    await inst.close();
  }
});
