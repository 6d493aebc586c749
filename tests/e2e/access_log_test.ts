/**
 * What `cfgtool serve` writes to its access log for careless clients: a
 * request body cut off mid-way, and a secret pasted into the URL.
 */
import { assert, assertEquals } from "../assert.ts";
import { startInstallation } from "./installation.ts";

const encoder = new TextEncoder();

function records(logs: string): Record<string, unknown>[] {
  return logs.trim().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
}

Deno.test("a client that aborts mid-body is logged as a client abort (499, info), not a 500 error", async () => {
  const inst = await startInstallation();
  try {
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: Number(new URL(inst.url).port),
    });
    await conn.write(encoder.encode(
      "POST /api/v1/tenants HTTP/1.1\r\nhost: 127.0.0.1\r\n" +
        `authorization: Bearer ${inst.admin}\r\ncontent-type: application/json\r\n` +
        'content-length: 1000\r\nx-request-id: aborted-upload\r\n\r\n{"slug": "ac',
    ));
    await new Promise((r) => setTimeout(r, 300));
    conn.close();
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      await new Promise((r) => setTimeout(r, 100));
      line = records(inst.server.logs()).find((r) =>
        r.msg === "request" && r.request_id === "aborted-upload"
      );
    }
    assert(line, `no access log line:\n${inst.server.logs()}`);
    assertEquals(line.status, 499);
    assertEquals(line.level, "info");
    const logs = records(await inst.server.logsSettled());
    assertEquals(logs.filter((r) => r.level === "error"), [], "nothing logged as an error");
  } finally {
    await inst.close();
  }
});

Deno.test("a secret pasted into a URL path or query never reaches the access log", async () => {
  const inst = await startInstallation();
  try {
    const leaked = inst.admin; // svc_admin_…
    const paths = [
      `/api/v1/tokens/${leaked}`,
      `/api/v1/tenants/${leaked}/namespaces`,
      `/nope/${leaked.replaceAll("_", "%5F")}`,
      `/api/v1/tenants?token=abc.def&secret=hunter2`,
      `/ses_4Hq8ZyXb7nQ2mK9vT3pL1sR6wD5eF8gJ`,
    ];
    for (const p of paths) {
      const res = await fetch(`${inst.url}${p}`, {
        headers: { authorization: `Bearer ${inst.admin}` },
      });
      await res.body?.cancel();
    }
    const logs = await inst.server.logsSettled();
    const payload = leaked.slice("svc_admin_".length);
    assert(!logs.includes(payload), "the token's payload is in the log");
    assert(!logs.includes("4Hq8ZyXb7nQ2mK9vT3pL1sR6wD5eF8gJ"), "a session secret is in the log");
    assert(!logs.includes("hunter2") && !logs.includes("abc.def"), "a query secret is in the log");
    assert(logs.includes("svc_admin_[redacted]"), "the redacted shape is kept");
  } finally {
    await inst.close();
  }
});

Deno.test("the server log stays JSON lines when requests fail: no plain-text runtime warning", async () => {
  const inst = await startInstallation();
  try {
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" });
    // a manifest that does not validate (422), a bad body (400), an unknown route (404)
    await inst.api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", inst.admin, {
      files: { "notes.txt": "x" },
    });
    await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: 5 });
    await inst.api("GET", "/nope", inst.admin);
    const lines = (await inst.server.logsSettled()).trim().split("\n");
    const plain = lines.filter((l) => !l.startsWith("{"));
    assertEquals(plain, [], "every line of the log is a JSON object");
    for (const l of lines) JSON.parse(l);
  } finally {
    await inst.close();
  }
});
