/**
 * Hostile input against a real `cfgtool serve`: identifiers too long or of
 * the wrong shape in paths and query strings, and stored fields over their
 * limits, are answered 400/404/422 with the error envelope, never 500.
 *
 * @module
 */
import { assert, assertEquals } from "../assert.ts";
import type { ApiResponse } from "./installation.ts";
import { evalPath, manifestFiles, startFixture } from "./evaluation_fixture.ts";

const LONG = "x".repeat(3000);
const HUGE = "y".repeat(70 * 1024); // over the 64 KiB KV value limit

function assertEnvelope(res: ApiResponse, status: number, code: string, field?: string): void {
  const what = `${res.status} ${JSON.stringify(res.body)?.slice(0, 300)}`;
  assertEquals(res.status, status, what);
  assertEquals(res.body?.code, code, what);
  assert(typeof res.body?.message === "string", what);
  assert(typeof res.body?.request_id === "string", what);
  if (field !== undefined) assertEquals(res.body?.details?.field, field, what);
}

Deno.test("hostile input: long and malformed identifiers and oversized fields never give 500", async (t) => {
  const fx = await startFixture();
  const { inst, tokens } = fx;
  const admin = inst.admin;
  try {
    await t.step("a 3,000-character token id is 404 token_not_found for a read token", async () => {
      assertEnvelope(
        await inst.api("GET", `/api/v1/tokens/tok_${LONG}`, tokens.read),
        404,
        "token_not_found",
      );
      assertEnvelope(
        await inst.api("POST", `/api/v1/tokens/tok_${LONG}/rotate`, admin),
        404,
        "token_not_found",
      );
      assertEnvelope(
        await inst.api("DELETE", `/api/v1/tokens/tok_${LONG}`, admin),
        404,
        "token_not_found",
      );
    });

    await t.step("long tenant, namespace, environment and user path segments are 404", async () => {
      assertEnvelope(
        await inst.api("GET", `/api/v1/tenants/${LONG}`, admin),
        404,
        "tenant_not_found",
      );
      assertEnvelope(
        await inst.api("GET", `/api/v1/tenants/${LONG}/namespaces`, admin),
        404,
        "tenant_not_found",
      );
      assertEnvelope(
        await inst.api("GET", `/api/v1/tenants/acme/namespaces/${LONG}/manifest`, tokens.read),
        404,
        "namespace_not_found",
      );
      assertEnvelope(
        await inst.api("POST", evalPath("acme", "web", LONG), tokens.read, { flag: "theme" }),
        404,
        "environment_not_found",
      );
      assertEnvelope(
        await inst.api("DELETE", `/api/v1/tenants/acme/admins/usr_${LONG}`, admin),
        404,
        "admin_not_found",
      );
      assertEnvelope(
        await inst.api(
          "GET",
          `/api/v1/tenants/acme/namespaces/web/versions/${"9".repeat(3000)}`,
          admin,
        ),
        400,
        "invalid_request",
        "version",
      );
    });

    await t.step("long or malformed query parameters are 400 naming the parameter", async () => {
      for (
        const [query, field] of [
          [`after=tok_${LONG}`, "after"],
          [`tenant=${LONG}`, "tenant"],
          [`tenant=acme&namespace=${LONG}`, "namespace"],
          [`limit=${"9".repeat(3000)}`, "limit"],
          [`type=${LONG}`, "type"],
          [`status=${LONG}`, "status"],
        ] as const
      ) {
        assertEnvelope(
          await inst.api("GET", `/api/v1/tokens?${query}`, admin),
          400,
          "invalid_request",
          field,
        );
      }
      for (
        const [query, field] of [
          [`after=${LONG}`, "after"],
          [`tenant=${LONG}`, "tenant"],
          [`token_id=${LONG}`, "token_id"],
          [`type=${LONG}`, "type"],
        ] as const
      ) {
        assertEnvelope(
          await inst.api("GET", `/api/v1/audit?${query}`, admin),
          400,
          "invalid_request",
          field,
        );
      }
      assertEnvelope(
        await inst.api("GET", `/api/v1/tenants/acme/namespaces/web/versions?after=${LONG}`, admin),
        400,
        "invalid_request",
        "after",
      );
    });

    await t.step(
      "tenant, namespace and token descriptions over 1,024 characters are 400",
      async () => {
        assertEnvelope(
          await inst.api("POST", "/api/v1/tenants", admin, { slug: "big", description: HUGE }),
          400,
          "invalid_request",
          "description",
        );
        assertEquals((await inst.api("GET", "/api/v1/tenants/big", admin)).status, 404);
        assertEnvelope(
          await inst.api("POST", "/api/v1/tenants/acme/namespaces", admin, {
            slug: "big",
            description: HUGE,
          }),
          400,
          "invalid_request",
          "description",
        );
        assertEnvelope(
          await inst.api("POST", "/api/v1/tokens", admin, {
            type: "namespace-read",
            name: "big",
            tenant_slug: "acme",
            namespace_slug: "web",
            description: HUGE,
          }),
          400,
          "invalid_request",
          "description",
        );
        const origins = Array.from({ length: 2000 }, (_, i) => `https://host-${i}.example.com`);
        assertEnvelope(
          await inst.api("POST", "/api/v1/tokens", admin, {
            type: "namespace-client",
            name: "many-origins",
            tenant_slug: "acme",
            namespace_slug: "web",
            environment_slug: "staging",
            allowed_origins: origins,
          }),
          400,
          "invalid_request",
          "allowed_origins",
        );
      },
    );

    await t.step(
      "push and rollback messages over 4,096 characters are 400 naming message",
      async () => {
        const path = "/api/v1/tenants/acme/namespaces/web";
        const files = manifestFiles().files;
        files["namespace.toml"] += "# changed\n";
        assertEnvelope(
          await inst.api("PUT", `${path}/manifest`, admin, { files, message: HUGE }),
          400,
          "invalid_request",
          "message",
        );
        assertEnvelope(
          await inst.api("POST", `${path}/rollback`, admin, { version: 0, message: HUGE }),
          400,
          "invalid_request",
          "message",
        );
        const head = await inst.api("GET", `${path}/versions`, admin);
        assertEquals(head.body.versions[0].version, 1, "nothing was committed");
      },
    );

    await t.step("an admin user_id over 254 characters is 400 naming user_id", async () => {
      assertEnvelope(
        await inst.api("POST", "/api/v1/tenants/acme/admins", admin, { user_id: `usr_${LONG}` }),
        400,
        "invalid_request",
        "user_id",
      );
      assertEnvelope(
        await inst.api("POST", "/api/v1/tenants/acme/namespaces/web/admins", admin, {
          user_id: `${LONG}@example.com`,
        }),
        400,
        "invalid_request",
        "user_id",
      );
    });

    await t.step(
      "a manifest with more environments than the limit is 422, and lint says so",
      async () => {
        let toml = "schema_version = 1\n[namespace]\n";
        for (let i = 0; i < 2000; i++) {
          toml += `[namespace.environments.env-${String(i).padStart(4, "0")}-${"e".repeat(50)}]\n`;
        }
        const body = { files: { "namespace.toml": toml } };
        const path = "/api/v1/tenants/acme/namespaces/api";
        const push = await inst.api("PUT", `${path}/manifest`, admin, body);
        assertEnvelope(push, 422, "invalid_manifest");
        assert(
          JSON.stringify(push.body.details.problems).includes("the limit is 100"),
          JSON.stringify(push.body).slice(0, 300),
        );
        const lint = await inst.api("POST", `${path}/lint`, admin, body);
        assertEquals(lint.status, 200);
        assertEquals(lint.body.ok, false);
        assertEquals(lint.body.problems[0].key, "namespace.environments");
      },
    );
  } finally {
    await inst.close();
  }
});
