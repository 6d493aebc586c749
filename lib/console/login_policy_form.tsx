/**
 * The login policy form: how a tenant's people sign in, changed in the
 * console with the same validation, rules and audit as
 * `PUT /api/v1/tenants/{t}/login` (lib/services/login_policies.ts). A
 * human tenant admin changes admission (the method, the admitted domains)
 * and the admin mapping (admin groups, the groups claim or attribute); the
 * identity provider's fields (OIDC issuer, client id and secret reference;
 * SAML metadata and email attribute) are a superadmin's, shown to others
 * as they are and carried over from the current policy. A refusal draws
 * the form again with the reason and the inputs kept.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { CfgtoolError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import type { LoginMethod, LoginPolicy, LoginPolicyRecord } from "../protocol/login_policy.ts";
import { loginPolicyForm, setLoginPolicy } from "../services/login_policies.ts";
import type { ConsoleEnv } from "./env.ts";
import { Field } from "./form_fields.tsx";
import { consolePage, tenantCrumbs } from "./layout.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Fact, Facts, Notice, ProblemNotice } from "./widgets.tsx";
import { consoleRequest } from "./route_refs.ts";

const METHODS: readonly { method: LoginMethod; label: string }[] = [
  { method: "email", label: "Verified email: a sign-in link or code sent by mail" },
  { method: "oidc", label: "OpenID Connect (Google, Entra ID, Okta, Keycloak…)" },
  { method: "saml", label: "SAML 2.0" },
];

/** The identity provider's fields: a superadmin's to set. */
const PROVIDER_FIELDS = [
  "issuer",
  "client_id",
  "client_secret_ref",
  "idp_metadata_url",
  "idp_metadata_xml",
  "email_attribute",
] as const;

/**
 * The login-policy routes, mounted at `/ui/t/:tenant`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant", loginPolicyRoutes(deps));
 * ```
 */
export function loginPolicyRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/login-policy", async (c) => {
    const tenant = c.req.param("tenant")!;
    const form = await loginPolicyForm(deps, c.get("person"), tenant);
    return policyPage(c, tenant, form.record, form.superadmin, fieldsOf(form.record?.policy));
  });

  app.post("/login-policy", async (c) => {
    const tenant = c.req.param("tenant")!;
    const person = c.get("person");
    const current = await loginPolicyForm(deps, person, tenant);
    const posted = c.get("form");
    const method = (posted.get("method") ?? "").trim();
    if (
      !current.superadmin && (method === "oidc" || method === "saml") &&
      current.record?.policy.method !== method
    ) {
      return policyPage(c, tenant, current.record, false, posted, {
        message: `Only a superadmin can switch ${tenant} to ${
          method === "oidc" ? "OpenID Connect" : "SAML"
        }: it names the identity provider the server trusts to say who is who`,
        status: 403,
      });
    }
    const policy = policyFrom(posted, current.superadmin ? undefined : current.record?.policy);
    try {
      await setLoginPolicy(deps, person, tenant, () => policy, consoleRequest(c));
    } catch (err) {
      if (!(err instanceof CfgtoolError) || (err.status !== 400 && err.status !== 403)) throw err;
      return policyPage(c, tenant, current.record, current.superadmin, posted, {
        message: err.message,
        status: err.status,
      });
    }
    return c.redirect(ui.people(tenant) + "#login-policy", 303);
  });

  return app;
}

/** A policy's fields as the form posts them (lists one per line). */
function fieldsOf(policy: LoginPolicy | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (policy === undefined) return out;
  for (const [k, v] of Object.entries(policy)) {
    out.set(k, Array.isArray(v) ? v.join("\n") : String(v));
  }
  if (policy.method === "email") out.set("allowed_email_domains", policy.domains.join("\n"));
  return out;
}

/** One value per line, blanks skipped. */
function lines(text: string | undefined): string[] {
  return (text ?? "").split("\n").map((l) => l.trim()).filter((l) => l !== "");
}

/**
 * The policy a posted form asks for. For a caller who may not set the
 * identity provider, its fields come from the current policy (when the
 * method stays the same); the service checks the rule either way.
 */
function policyFrom(
  form: ReadonlyMap<string, string>,
  keepProvider: LoginPolicy | undefined,
): Record<string, unknown> {
  const method = (form.get("method") ?? "").trim();
  const text = (name: string) => (form.get(name) ?? "").trim();
  const provider = (name: typeof PROVIDER_FIELDS[number]): string | undefined => {
    if (keepProvider !== undefined) {
      if (keepProvider.method !== method) return undefined;
      const v = (keepProvider as unknown as Record<string, unknown>)[name];
      return typeof v === "string" ? v : undefined;
    }
    return text(name) === "" ? undefined : text(name);
  };
  const optional = (o: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(o).filter(([, v]) =>
        v !== undefined && v !== "" && !(Array.isArray(v) && v.length === 0)
      ),
    );
  const domains = lines(form.get("allowed_email_domains"));
  const groups = lines(form.get("admin_groups"));
  switch (method) {
    case "email":
      return { method, domains };
    case "oidc":
      return {
        method,
        issuer: provider("issuer") ?? "",
        client_id: provider("client_id") ?? "",
        client_secret_ref: provider("client_secret_ref") ?? "",
        ...optional({
          allowed_email_domains: domains,
          groups_claim: text("groups_claim"),
          admin_groups: groups,
        }),
      };
    case "saml":
      return {
        method,
        ...optional({
          idp_metadata_url: provider("idp_metadata_url"),
          idp_metadata_xml: provider("idp_metadata_xml"),
          email_attribute: provider("email_attribute"),
          allowed_email_domains: domains,
          groups_attribute: text("groups_attribute"),
          admin_groups: groups,
        }),
      };
    default:
      return { method };
  }
}

function policyPage(
  c: Context<ConsoleEnv>,
  tenant: string,
  record: LoginPolicyRecord | null,
  superadmin: boolean,
  shown: ReadonlyMap<string, string>,
  refused?: { message: string; status: 400 | 403 },
): Promise<Response> {
  const method = shown.get("method") ?? record?.policy.method ?? "email";
  const value = (name: string) => shown.get(name) ?? "";
  const invalid = refused === undefined ? {} : { "aria-describedby": "policy-refusal" };
  const listField = (name: string, label: string, hint: string) => (
    <Field id={`policy-${name}`} label={label} hint={hint}>
      <textarea
        id={`policy-${name}`}
        name={name}
        class="short"
        aria-describedby={`policy-${name}-hint`}
      >
        {value(name)}
      </textarea>
    </Field>
  );
  const textField = (name: string, label: string, hint: string) => (
    <Field id={`policy-${name}`} label={label} hint={hint}>
      <input
        id={`policy-${name}`}
        type="text"
        name={name}
        value={value(name)}
        aria-describedby={`policy-${name}-hint`}
      />
    </Field>
  );
  const providerField = (
    name: typeof PROVIDER_FIELDS[number],
    label: string,
    hint: string,
    multiline = false,
  ) =>
    superadmin
      ? (
        multiline ? listField(name, label, hint) : textField(name, label, hint)
      )
      : (
        <Fact label={label}>
          {record?.policy.method === undefined
            ? <span class="muted">not set</span>
            : (record.policy as unknown as Record<string, unknown>)[name] === undefined
            ? <span class="muted">not set</span>
            : (
              <code class="wrap">
                {String((record.policy as unknown as Record<string, unknown>)[name]).slice(0, 200)}
              </code>
            )}
        </Fact>
      );
  return consolePage(
    c,
    {
      title: "How people sign in",
      tenant,
      section: "people",
      crumbs: tenantCrumbs(tenant, { label: "People", href: ui.people(tenant) }, {
        label: "Sign-in",
      }),
      ...(refused === undefined ? {} : { status: refused.status }),
    },
    <>
      <p>
        The method and the rules below decide who can sign in to {tenant}{" "}
        and who is its admin. A change applies from the next sign-in and is written to the audit
        log.
        {superadmin ? null : (
          <>
            {" "}
            As a tenant admin you change who is admitted and which groups are admins; the identity
            provider's own settings are a superadmin's (the server trusts them to say who is who).
          </>
        )}
      </p>
      <form method="post" action={ui.loginPolicy(tenant)} class="editor">
        <CsrfField token={c.get("csrf")} />
        <ProblemNotice id="policy-refusal" message={refused?.message} />
        <fieldset {...invalid}>
          <legend>Method</legend>
          {METHODS.map((m) => (
            <div class="field check">
              <input
                id={`policy-method-${m.method}`}
                type="radio"
                name="method"
                value={m.method}
                required
                {...(m.method === method ? { checked: true } : {})}
              />
              <label for={`policy-method-${m.method}`}>{m.label}</label>
            </div>
          ))}
        </fieldset>
        {listField(
          "allowed_email_domains",
          "Admitted email domains",
          "One per line, such as acme.com. Verified email needs at least one; for OpenID Connect and SAML, none admits every address the provider vouches for.",
        )}
        <fieldset>
          <legend>OpenID Connect</legend>
          <Facts>
            {superadmin ? null : (
              <>
                {providerField("issuer", "Issuer", "")}
                {providerField("client_id", "Client id", "")}
                {providerField("client_secret_ref", "Client secret from", "")}
              </>
            )}
          </Facts>
          {superadmin
            ? (
              <>
                {providerField(
                  "issuer",
                  "Issuer",
                  "Its URL; the server reads <issuer>/.well-known/openid-configuration.",
                )}
                {providerField("client_id", "Client id", "As registered at the issuer.")}
                {providerField(
                  "client_secret_ref",
                  "Client secret from",
                  "Where the server reads the secret: env:NAME or file:/absolute/path. The secret itself is never stored.",
                )}
              </>
            )
            : null}
          {textField(
            "groups_claim",
            "Groups claim",
            "The ID token claim that lists a person's groups (default groups).",
          )}
        </fieldset>
        <fieldset>
          <legend>SAML 2.0</legend>
          {superadmin
            ? (
              <>
                {providerField(
                  "idp_metadata_url",
                  "Identity provider metadata URL",
                  "https://, or http:// on a loopback host. Or paste the metadata below.",
                )}
                {providerField(
                  "idp_metadata_xml",
                  "Identity provider metadata (XML)",
                  "The document itself, when the provider publishes no URL.",
                  true,
                )}
                {providerField(
                  "email_attribute",
                  "Email attribute",
                  "The attribute holding the email; empty: the assertion's NameID.",
                )}
              </>
            )
            : (
              <Facts>
                {providerField("idp_metadata_url", "Identity provider metadata URL", "")}
                {providerField("email_attribute", "Email attribute", "")}
              </Facts>
            )}
          {textField(
            "groups_attribute",
            "Groups attribute",
            "The attribute that lists a person's groups (default groups).",
          )}
        </fieldset>
        {listField(
          "admin_groups",
          "Admin groups (OpenID Connect and SAML)",
          "One per line: members of any of them are tenant admins while signed in.",
        )}
        <div class="actions">
          <button type="submit">Save sign-in</button>
          <a href={ui.people(tenant)}>Cancel</a>
        </div>
      </form>
      {record === null ? null : (
        <Notice>
          <p class="small">
            Set by {record.updated_by} at {record.updated_at}.
          </p>
        </Notice>
      )}
    </>,
  );
}
