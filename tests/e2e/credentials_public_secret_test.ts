/**
 * A namespace-client secret is public by design (docs/api.md, "Tokens")
 * and may not call any admin endpoint:
 * holding it must not let anyone read the token record or revoke the token.
 * Also: error messages never echo request fields at any length.
 */
import { assert, assertEquals } from "../assert.ts";
import { startInstallation } from "./installation.ts";
import { createNamespace, createTenant, mint, pushManifest } from "./credentials_fixture.ts";

const CLIENT = {
  type: "namespace-client",
  tenant_slug: "acme",
  namespace_slug: "web",
  environment_slug: "staging",
  allowed_origins: ["https://shop.example.com"],
};

Deno.test("holding a (public) namespace-client secret does not let anyone revoke the token", async () => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
    const client = await mint(inst, inst.admin, CLIENT);
    const evalPath = "/api/v1/tenants/acme/namespaces/web/environments/staging/evaluate/all";
    assertEquals((await inst.api("POST", evalPath, client.secret, {})).status, 200);

    // an attacker who scraped the secret from the shipped bundle
    const res = await inst.api("DELETE", `/api/v1/tokens/${client.token.id}`, client.secret);
    const after = (await inst.api("POST", evalPath, client.secret, {})).status;
    assertEquals(
      res.status,
      403,
      `namespace-client self-revocation was answered ${res.status}; evaluation now answers ${after}`,
    );
    assertEquals(after, 200);
  } finally {
    await inst.close();
  }
});

Deno.test("a namespace-client token cannot read its own token record (an admin endpoint)", async () => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    await pushManifest(inst, inst.admin, "acme", "web", { staging: true });
    const client = await mint(inst, inst.admin, CLIENT);
    const res = await inst.api("GET", `/api/v1/tokens/${client.token.id}`, client.secret);
    assertEquals(
      res.status,
      403,
      `GET /tokens/{own id} with a namespace-client token → ${res.status} ${
        JSON.stringify(res.body).slice(0, 200)
      }`,
    );
  } finally {
    await inst.close();
  }
});

Deno.test("error messages do not echo request fields of any length", async () => {
  const inst = await startInstallation();
  try {
    await createTenant(inst, "acme");
    await createNamespace(inst, "acme", "web");
    const res = await inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "namespace-read",
      name: "a".repeat(900_000),
      tenant_slug: "acme",
      namespace_slug: "web",
    });
    assertEquals(res.status, 400);
    const size = JSON.stringify(res.body).length;
    assert(size < 4096, `the 400 body is ${size} bytes: the message quotes the whole name`);
  } finally {
    await inst.close();
  }
});
