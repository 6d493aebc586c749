/**
 * Test helper: tenant `acme` of a running installation signing people in
 * through a real OpenID provider started for it (the client secret in a
 * file beside the store, named by the policy's `client_secret_ref`).
 *
 * @module
 */
import { assertEquals } from "../assert.ts";
import type { Installation } from "./installation.ts";
import { type OidcProviderProcess, type OidcUser, startOidcProvider } from "./oidc_provider.ts";

/**
 * Creates tenant acme, starts a provider with one client for the
 * installation and the given people, and sets acme's OIDC policy (emails of
 * acme.com; `adminGroups` as the policy's `admin_groups`). `await using`
 * stops the provider.
 *
 * @param inst the installation
 * @param users the provider's people
 * @param adminGroups groups that make a person acme's admin
 * @returns the running provider
 */
export async function oidcTenant(
  inst: Installation,
  users: OidcUser[],
  adminGroups: string[] = [],
): Promise<OidcProviderProcess> {
  const secret = `client-secret-${crypto.randomUUID()}`;
  const secretFile = `${inst.dir}/oidc-secret`;
  await Deno.writeTextFile(secretFile, secret);
  const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
  assertEquals(created.status, 201, JSON.stringify(created.body));
  const op = await startOidcProvider({
    clients: [{
      client_id: "cfgtool",
      client_secret: secret,
      redirect_uris: [`${inst.url}/auth/oidc/callback`],
    }],
    users,
  });
  const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
    method: "oidc",
    issuer: op.issuer,
    client_id: "cfgtool",
    client_secret_ref: `file:${secretFile}`,
    allowed_email_domains: ["acme.com"],
    ...(adminGroups.length > 0 ? { admin_groups: adminGroups } : {}),
  });
  assertEquals(policy.status, 200, JSON.stringify(policy.body));
  return op;
}
