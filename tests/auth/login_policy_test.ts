/**
 * Reading a login policy (lib/auth/login_policy.ts): every field checked,
 * unknown fields refused, secrets only by reference.
 */
import { assertEquals, assertRejects, assertThrows } from "../assert.ts";
import { parseLoginPolicy, readClientSecret } from "../../lib/auth/login_policy.ts";
import { InvalidRequestError, UnavailableError } from "../../lib/errors.ts";

const OIDC = {
  method: "oidc",
  issuer: "https://idp.acme.test/realms/acme/",
  client_id: "cfgtool",
  client_secret_ref: "env:ACME_OIDC_SECRET",
};

function fieldOf(body: unknown): string {
  const err = assertThrows(() => parseLoginPolicy(body), InvalidRequestError);
  return (err.details as { field: string }).field;
}

Deno.test("an OIDC policy is read with its optional fields, issuer without a trailing slash", () => {
  const p = parseLoginPolicy({
    ...OIDC,
    allowed_email_domains: ["Acme.test", "acme.test"],
    groups_claim: "roles",
    admin_groups: ["flag-admins"],
  });
  assertEquals(p, {
    method: "oidc",
    issuer: "https://idp.acme.test/realms/acme",
    client_id: "cfgtool",
    client_secret_ref: "env:ACME_OIDC_SECRET",
    allowed_email_domains: ["acme.test"],
    groups_claim: "roles",
    admin_groups: ["flag-admins"],
  });
});

Deno.test("an email policy needs at least one domain name", () => {
  assertEquals(parseLoginPolicy({ method: "email", domains: ["ACME.test"] }), {
    method: "email",
    domains: ["acme.test"],
  });
  assertEquals(fieldOf({ method: "email", domains: [] }), "domains");
  assertEquals(fieldOf({ method: "email", domains: ["not a domain"] }), "domains");
  assertEquals(fieldOf({ method: "email", domains: ["@acme.test"] }), "domains");
});

Deno.test("a policy with a wrong or unknown field is refused naming the field", () => {
  assertEquals(fieldOf({ ...OIDC, client_secret: "s3cr3t" }), "client_secret");
  assertEquals(fieldOf({ ...OIDC, client_secret_ref: "s3cr3t" }), "client_secret_ref");
  assertEquals(fieldOf({ ...OIDC, issuer: "http://idp.acme.test" }), "issuer");
  assertEquals(fieldOf({ ...OIDC, issuer: "https://idp.acme.test/?x=1" }), "issuer");
  assertEquals(fieldOf({ ...OIDC, client_id: "" }), "client_id");
  assertEquals(fieldOf({ ...OIDC, admin_groups: "admins" }), "admin_groups");
  assertEquals(fieldOf({ method: "ldap" }), "method");
  assertEquals(fieldOf([]), "method");
  assertEquals(fieldOf({ method: "saml", idp_metadata_url: "https://x" }), "method");
});

Deno.test("an http issuer is accepted only on a loopback host", () => {
  const p = parseLoginPolicy({ ...OIDC, issuer: "http://127.0.0.1:9000" });
  assertEquals(p.method === "oidc" && p.issuer, "http://127.0.0.1:9000");
});

Deno.test("the client secret is read from the named variable or file, never guessed", async () => {
  const env = { get: (n: string) => n === "ACME_OIDC_SECRET" ? "from-env" : undefined };
  assertEquals(await readClientSecret("env:ACME_OIDC_SECRET", env), "from-env");
  const file = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(file, "from-file\n");
    assertEquals(await readClientSecret(`file:${file}`, env), "from-file");
  } finally {
    await Deno.remove(file);
  }
  const err = await assertRejects(() => readClientSecret("env:MISSING", env), UnavailableError);
  assertEquals(err.status, 503);
  await assertRejects(() => readClientSecret("file:/nonexistent/secret", env), UnavailableError);
});
