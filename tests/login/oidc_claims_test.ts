import { assertEquals, assertThrows } from "../assert.ts";
import { LoginError } from "../../lib/errors.ts";
import { groupsOf, identityFromClaims } from "../../lib/login/oidc_claims.ts";
import type { OidcLoginPolicy } from "../../lib/protocol/login_policy.ts";

const POLICY: OidcLoginPolicy = {
  method: "oidc",
  issuer: "https://idp.example.com",
  client_id: "cfgtool",
  client_secret_ref: "env:IDP_SECRET",
  allowed_email_domains: ["acme.com"],
};

const refusal = (fn: () => unknown): LoginError => assertThrows(fn, LoginError);

Deno.test("a verified email in an allowed domain becomes an oidc identity with groups and assurance", () => {
  const id = identityFromClaims("acme", POLICY, {
    sub: "x",
    email: "Ada@Acme.com",
    email_verified: true,
    groups: ["eng", "admins"],
    amr: ["pwd", "mfa"],
    acr: "urn:acr:2",
  });
  assertEquals(id, {
    tenant: "acme",
    email: "Ada@Acme.com",
    method: "oidc",
    assurance: ["pwd", "mfa", "urn:acr:2"],
    groups: ["eng", "admins"],
  });
});

Deno.test("without allowed_email_domains every verified email is admitted", () => {
  const { allowed_email_domains: _, ...open } = POLICY;
  assertEquals(
    identityFromClaims("acme", open, { email: "x@anywhere.org", email_verified: true }).email,
    "x@anywhere.org",
  );
});

Deno.test("an email outside the allowed domains is refused as email_domain (403), subdomains included", () => {
  for (const email of ["eve@evil.com", "eve@sub.acme.com", "eve@acme.com.evil.com"]) {
    const err = refusal(() => identityFromClaims("acme", POLICY, { email, email_verified: true }));
    assertEquals(err.reason, "email_domain");
    assertEquals(err.status, 403);
  }
});

Deno.test('an unverified or unstated email_verified is refused as email_unverified; the string "true" counts', () => {
  for (const verified of [false, undefined, "false", 1]) {
    const err = refusal(() =>
      identityFromClaims("acme", POLICY, { email: "ada@acme.com", email_verified: verified })
    );
    assertEquals(err.reason, "email_unverified");
  }
  assertEquals(
    identityFromClaims("acme", POLICY, { email: "ada@acme.com", email_verified: "true" }).email,
    "ada@acme.com",
  );
});

Deno.test("Entra ID's xms_edov vouches for an email only when email_verified is absent", () => {
  const entra = { email: "ada@acme.com", xms_edov: true };
  assertEquals(identityFromClaims("acme", POLICY, entra).email, "ada@acme.com");
  const denied = refusal(() =>
    identityFromClaims("acme", POLICY, { ...entra, email_verified: false })
  );
  assertEquals(denied.reason, "email_unverified");
  const off = refusal(() => identityFromClaims("acme", POLICY, { ...entra, xms_edov: false }));
  assertEquals(off.reason, "email_unverified");
});

Deno.test("a token without an email is refused as email_missing", () => {
  for (const email of [undefined, "", 42]) {
    assertEquals(
      refusal(() => identityFromClaims("acme", POLICY, { email, email_verified: true })).reason,
      "email_missing",
    );
  }
});

Deno.test("groups come from groups_claim; non-string members are dropped", () => {
  const policy = { ...POLICY, groups_claim: "roles" };
  const id = identityFromClaims("acme", policy, {
    email: "ada@acme.com",
    email_verified: true,
    groups: ["ignored"],
    roles: ["flag-admins", { nested: true }, 3],
  });
  assertEquals(id.groups, ["flag-admins"]);
  assertEquals(groupsOf({ groups: "solo" }), ["solo"]);
  assertEquals(groupsOf({ groups: "" }), []);
  assertEquals(groupsOf({ groups: { a: 1 } }), []);
});
