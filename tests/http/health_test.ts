import { assertEquals } from "../assert.ts";
import { startServer } from "../e2e/server_process.ts";
import denoJson from "../../deno.json" with { type: "json" };

Deno.test("GET /healthz reports the cfgtool version and the build's commit", async () => {
  const server = await startServer({ env: { CFGTOOL_BUILD_COMMIT: "89abcdef0123" } });
  try {
    const res = await fetch(`${server.url}/healthz`);
    assertEquals(res.status, 200);
    assertEquals(await res.json(), {
      status: "ok",
      version: denoJson.version,
      commit: "89abcdef0123",
    });
  } finally {
    await server.stop();
  }
});

Deno.test("GET /healthz leaves the commit out when the build does not know it", async () => {
  const server = await startServer({ env: { CFGTOOL_BUILD_COMMIT: "" } });
  try {
    const res = await fetch(`${server.url}/healthz`);
    assertEquals(await res.json(), { status: "ok", version: denoJson.version });
  } finally {
    await server.stop();
  }
});

Deno.test("every response carries Server: cfgtool/<version>, errors included", async () => {
  const server = await startServer();
  try {
    const requests: [string, RequestInit, number][] = [
      ["/healthz", {}, 200],
      ["/readyz", {}, 200],
      ["/nope", {}, 404],
      ["/api/v1/tenants", {}, 401],
      ["/api/v1/tenants", { headers: { authorization: "Bearer svc_admin_wrong" } }, 401],
    ];
    for (const [path, init, status] of requests) {
      const res = await fetch(`${server.url}${path}`, init);
      await res.body?.cancel();
      assertEquals(res.status, status, path);
      assertEquals(res.headers.get("server"), `cfgtool/${denoJson.version}`, path);
    }
  } finally {
    await server.stop();
  }
});
