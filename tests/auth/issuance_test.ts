import { assertEquals, assertThrows } from "../assert.ts";
import { InvalidRequestError } from "../../lib/errors.ts";
import { type CreateTokenInput, isOrigin, validateCreateInput } from "../../lib/auth/issuance.ts";

const now = new Date("2030-01-01T00:00:00Z");

Deno.test("isOrigin() accepts serialized RFC 6454 origins only", () => {
  for (const o of ["https://app.example.com", "http://localhost:3000", "https://[::1]:8443"]) {
    assertEquals(isOrigin(o), true, o);
  }
  for (
    const o of [
      "*",
      "null",
      "https://app.example.com/",
      "https://App.example.com",
      "https://a.com:443",
      "ftp://a.com",
      "app.example.com",
      "https://a.com/x",
    ]
  ) {
    assertEquals(isOrigin(o), false, o);
  }
});

Deno.test("validateCreateInput() enforces the binding fields of each type", () => {
  const bad = (input: Record<string, unknown>) =>
    assertThrows(
      () => validateCreateInput({ name: "n", ...input } as never, now),
      InvalidRequestError,
    );
  bad({ type: "namespace-admin", tenant_slug: "a" });
  bad({ type: "namespace-read", tenant_slug: "a" });
  bad({ type: "namespace-read", namespace_slug: "w" });
  bad({ type: "namespace-read", tenant_slug: "a", namespace_slug: "w", environment_slug: "e" });
  bad({ type: "namespace-client", tenant_slug: "a", namespace_slug: "w" });
  bad({ type: "tenant-admin", tenant_slug: "a", namespace_slug: "w" });
  bad({ type: "tenant-admin" });
  bad({ type: "superadmin", name: "" });
  bad({ type: "superadmin", scopes: ["x"] });
  bad({ type: "superadmin", expires_at: "2029-01-01T00:00:00Z" });
  bad({ type: "superadmin", expires_at: "tomorrow" });
  const s = validateCreateInput({ type: "superadmin", name: "n", tenant_slug: "ignored" }, now);
  assertEquals([s.tenant_slug, s.namespace_slug, s.environment_slug, s.allowed_origins, s.scopes], [
    null,
    null,
    null,
    [],
    [],
  ]);
  const c = validateCreateInput({
    type: "namespace-client",
    name: "n",
    tenant_slug: "a",
    namespace_slug: "w",
    environment_slug: "staging",
    allowed_origins: ["https://x.example", "https://x.example"],
    expires_at: "2030-02-01T00:00:00+01:00",
  }, now);
  assertEquals([c.allowed_origins, c.expires_at], [
    ["https://x.example"],
    "2030-01-31T23:00:00.000Z",
  ]);
});

Deno.test("a creation body as received may carry null for the optional fields and any type", () => {
  // The received body is typed as the wire carries a token; `type` is checked by validation.
  const input: CreateTokenInput = {
    type: "superadmin",
    name: "root",
    description: null,
    tenant_slug: null,
    namespace_slug: null,
    environment_slug: null,
    allowed_origins: [],
    scopes: [],
    expires_at: null,
  };
  const spec = validateCreateInput(input, now);
  assertEquals(spec.description, null);
  assertEquals(spec.expires_at, null);
  assertThrows(
    () => validateCreateInput({ ...input, type: "root" }, now),
    InvalidRequestError,
    "root",
  );
});
