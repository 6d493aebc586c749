import { assert, assertEquals } from "../assert.ts";
import { LocalClosures, readSse } from "../events/sse_client.ts";
import { flagToml, NS_TOML } from "../events/world.ts";
import { startServer } from "./server_process.ts";
import { startInstallation } from "./installation.ts";

Deno.test("two serve processes on one KV file: a push on one reaches a stream on the other", async () => {
  // Process A comes with the installation; process B serves the same KV file (and key file).
  const inst = await startInstallation({ args: ["--head-poll-ms", "50"] });
  const b = await startServer({ kv: inst.kvPath, args: ["--head-poll-ms", "50"] });
  const ac = new AbortController();
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
    const push = async (description: string) => {
      const res = await inst.api(
        "PUT",
        "/api/v1/tenants/acme/namespaces/web/manifest",
        inst.admin,
        {
          files: { "namespace.toml": NS_TOML, "flags/a.toml": flagToml(description) },
        },
      );
      assertEquals(res.status, 201);
      return performance.now();
    };
    await push("A1");
    const stream = readSse(
      await fetch(`${b.url}/api/v1/events?ns=acme/web:a`, {
        headers: { authorization: `Bearer ${inst.admin}` },
        signal: ac.signal,
      }),
      ac,
    );
    assertEquals(stream.response.status, 200);
    const local = new LocalClosures();
    const first = await stream.next();
    const snapshot = JSON.parse(first.data);
    assert(snapshot.snapshot_url.startsWith(b.url));
    await local.apply(first);
    // the signed URL of B is also valid on A: both use the installation's key
    const onA = await fetch(snapshot.snapshot_url.replace(b.url, inst.url));
    assertEquals(onA.status, 200);
    await onA.body?.cancel();
    for (const d of ["A2", "A3"]) {
      const pushed = await push(d); // handled by process A
      const e = await stream.next(undefined, 5000);
      const data = await local.apply(e);
      assertEquals(data.delivery, "inline");
      const latency = e.at - pushed;
      assert(latency < 2000, `event after ${latency} ms`);
    }
    assertEquals(local.namespaces.get("web")!.version, 3);
  } finally {
    ac.abort();
    await b.stop();
    await inst.close();
  }
});
