/**
 * Long-lived streams and revocation (lib/auth/stream_guard.ts): the event
 * stream and the OFREP event stream are authenticated when they open; a
 * token revoked afterwards must stop receiving data, at once in the process
 * that revoked it and within --stream-auth-check-ms elsewhere.
 */
import { assert, assertEquals } from "../assert.ts";
import { readSse } from "../events/sse_client.ts";
import { startInstallation } from "./installation.ts";
import {
  createNamespace,
  createTenant,
  manifest,
  mint,
  pushManifest,
  sleep,
} from "./credentials_fixture.ts";

Deno.test("revoking a token ends its open /api/v1/events stream", async () => {
  const inst = await startInstallation({ args: ["--head-poll-ms", "50"] });
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
    const read = await mint(inst, inst.admin, {
      type: "namespace-read",
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    const ac = new AbortController();
    const stream = readSse(
      await fetch(`${inst.url}/api/v1/events?ns=web:*`, {
        headers: { authorization: `Bearer ${read.secret}` },
        signal: ac.signal,
      }),
      ac,
    );
    try {
      assertEquals(stream.response.status, 200);
      const first = await stream.next((r) => r.event === "version");
      assertEquals(JSON.parse(first.data).delivery, "snapshot");

      const del = await inst.api("DELETE", `/api/v1/tokens/${read.token.id}`, inst.admin);
      assertEquals(del.status, 200);
      // the token is refused everywhere else from now on
      const probe = await fetch(`${inst.url}/api/v1/events?ns=web:*`, {
        headers: { authorization: `Bearer ${read.secret}` },
      });
      await probe.body?.cancel();
      assertEquals(probe.status, 401);

      // a new version committed after the revocation
      const files = manifest({ staging: true, production: false });
      files.files["flags/secret-launch.toml"] = files.files["flags/new-checkout.toml"]!;
      const put = await inst.api(
        "PUT",
        "/api/v1/tenants/acme/namespaces/web/manifest",
        inst.admin,
        files,
      );
      assertEquals(put.status, 201);
      await sleep(1000);
      const leaked = stream.received.filter((r) => r.event === "version").slice(1);
      assert(
        leaked.length === 0,
        `after revocation the stream delivered ${leaked.length} version event(s): ${
          leaked.map((r) => r.data.slice(0, 160)).join(" | ")
        }`,
      );
    } finally {
      stream.close();
    }
  } finally {
    await inst.close();
  }
});

Deno.test("revoking a namespace-client token ends its OFREP event stream", async () => {
  const inst = await startInstallation({ args: ["--head-poll-ms", "50"] });
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
    const client = await mint(inst, inst.admin, {
      type: "namespace-client",
      tenant_slug: "acme",
      namespace_slug: "web",
      environment_slug: "staging",
    });
    const ac = new AbortController();
    const stream = readSse(
      await fetch(
        `${inst.url}/ofrep/v1/event-stream?token=${encodeURIComponent(client.secret)}`,
        { signal: ac.signal },
      ),
      ac,
    );
    try {
      assertEquals(stream.response.status, 200);
      await stream.next((r) => r.kind === "event");
      assertEquals(
        (await inst.api("DELETE", `/api/v1/tokens/${client.token.id}`, inst.admin)).status,
        200,
      );
      await pushManifest(inst, inst.admin, "acme", "web", { staging: true, qa: true });
      await sleep(1000);
      assert(
        stream.done,
        `stream still open after revocation; events since: ${
          stream.received.filter((r) => r.kind === "event").length - 1
        }`,
      );
    } finally {
      stream.close();
    }
  } finally {
    await inst.close();
  }
});
