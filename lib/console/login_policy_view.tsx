/**
 * A tenant's login policy, read-only, as the people page shows it: the
 * method and, for OpenID Connect, the issuer, client id, where the server
 * reads the client secret (the reference the API returns, never a
 * secret), the admitted email domains and the groups; for SAML, where the
 * identity provider's metadata comes from, the email and groups attributes,
 * domains and admin groups; for email sign-in, the domains. Who set it when is under it.
 *
 * @module
 */
import type { LoginPolicy, LoginPolicyRecord } from "../protocol/login_policy.ts";
import { Fact, Facts, Time } from "./widgets.tsx";

/** What each method is called on the page. */
const METHODS: Record<LoginPolicy["method"], string> = {
  oidc: "OpenID Connect",
  email: "Verified email (a link or code by mail)",
  saml: "SAML 2.0",
};

/**
 * The facts of a policy, in the order shown, as label and text.
 *
 * @param policy the policy
 * @returns the label/value pairs
 *
 * @example
 * ```ts
 * import { policyFacts } from "./login_policy_view.tsx";
 * const facts = policyFacts({ method: "email", domains: ["acme.com", "acme.de"] });
 * if (facts[1]![0] !== "Email domains" || facts[1]![1] !== "acme.com, acme.de") throw new Error();
 * ```
 */
export function policyFacts(policy: LoginPolicy): [string, string][] {
  const list = (xs: readonly string[] | undefined, none: string) =>
    xs === undefined || xs.length === 0 ? none : xs.join(", ");
  const facts: [string, string][] = [["Method", `${METHODS[policy.method]} (${policy.method})`]];
  switch (policy.method) {
    case "email":
      facts.push(["Email domains", list(policy.domains, "none")]);
      break;
    case "oidc":
      facts.push(
        ["Issuer", policy.issuer],
        ["Client id", policy.client_id],
        [
          "Client secret",
          `read by the server from ${policy.client_secret_ref} at each sign-in (never shown or stored)`,
        ],
        [
          "Allowed email domains",
          list(policy.allowed_email_domains, "any verified email the provider vouches for"),
        ],
        ["Groups claim", policy.groups_claim ?? "groups (the default)"],
        ["Admin groups", list(policy.admin_groups, "none")],
      );
      break;
    case "saml":
      facts.push(
        ["Identity provider metadata", policy.idp_metadata_url ?? "given as a document"],
        [
          "Email",
          policy.email_attribute === undefined
            ? "the assertion's NameID"
            : `attribute ${policy.email_attribute}`,
        ],
        [
          "Allowed email domains",
          list(policy.allowed_email_domains, "any email the provider asserts"),
        ],
        ["Groups attribute", policy.groups_attribute ?? "groups (the default)"],
        ["Admin groups", list(policy.admin_groups, "none")],
      );
      break;
  }
  return facts;
}

/**
 * The policy as a description list, with when it was set and by whom.
 *
 * @example
 * ```tsx
 * import { LoginPolicyView } from "./login_policy_view.tsx";
 * const html = String(await (<LoginPolicyView record={{ tenant_slug: "acme",
 *   policy: { method: "email", domains: ["acme.com"] }, updated_at: "2026-11-24T06:00:00.000Z",
 *   updated_by: "tok_1" }} updatedBy="tok_1" />));
 * if (!html.includes("<dd>acme.com</dd>") || !html.includes("2026-11-24 06:00 UTC")) throw new Error(html);
 * ```
 */
export function LoginPolicyView(props: { record: LoginPolicyRecord; updatedBy: string }) {
  return (
    <Facts>
      {policyFacts(props.record.policy).map(([label, value]) => <Fact label={label}>{value}</Fact>)}
      <Fact label="Set">
        <Time iso={props.record.updated_at} /> by <span class="wrap">{props.updatedBy}</span>
      </Fact>
    </Facts>
  );
}
