/**
 * The pieces of the console's token pages (Hono JSX): the list of tokens,
 * one token's details, the creation form (only the types and namespaces
 * the person may issue, the person's input kept after a refusal), and the
 * one-time secret with its copy button. Nothing here ever receives a
 * digest; a secret only reaches {@linkcode SecretPanel}.
 *
 * @module
 */
import type { CfgtoolError } from "../errors.ts";
import type { TokenStatus, TokenType } from "../protocol/responses.ts";
import type { IssuableNamespace, PublicToken } from "../services/tokens.ts";
import { Field, Options } from "./form_fields.tsx";
import { EXPIRY_CHOICES, FORM_FIELD, type TokenForm } from "./token_form.ts";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, Fact, Facts, Notice, ProblemNotice, Time } from "./widgets.tsx";

/** What each type is for, as the form and the details say it. */
export const TYPE_PURPOSE: Readonly<Record<TokenType, string>> = {
  "namespace-read": "services that download or evaluate flags",
  "namespace-write": "CI that pushes the manifest",
  "namespace-client": "browser bundles: evaluates one environment, while it is public",
  "tenant-admin": "automation across the tenant's namespaces",
  "superadmin": "the whole installation",
};

function StatusBadge(props: { status: TokenStatus }) {
  const cls = props.status === "active" ? "on" : props.status === "revoked" ? "off" : "warn";
  return <span class={`badge ${cls}`}>{props.status}</span>;
}

function Binding(props: { token: PublicToken }) {
  const t = props.token;
  if (t.namespace_slug === null) {
    return <span class="muted">{t.tenant_slug === null ? "installation" : "whole tenant"}</span>;
  }
  return (
    <span class="wrap">
      {t.namespace_slug}
      {t.environment_slug === null ? null : <>/{t.environment_slug}</>}
    </span>
  );
}

function When(props: { iso: string | null; none: string }) {
  return props.iso === null ? <span class="muted">{props.none}</span> : <Time iso={props.iso} />;
}

const TOKEN_COLUMNS = [
  "Name",
  "Type",
  "Binding",
  { label: "Created", secondary: true },
  { label: "Expires", secondary: true },
  { label: "Last used", secondary: true },
  "Status",
] as const;

/**
 * The table of tokens: name (a link to the token's page), type, binding,
 * created, expires, last used and status (a word, not only a colour).
 *
 * @example
 * ```tsx
 * import { TokenTable } from "./token_views.tsx";
 * import type { PublicToken } from "../services/tokens.ts";
 * const t = { id: "tok_1", name: "ci", type: "namespace-write", tenant_slug: "acme",
 *   namespace_slug: "web", environment_slug: null, created_at: "2030-01-01T00:00:00.000Z",
 *   expires_at: null, last_used_at: null, status: "active" } as PublicToken;
 * const html = String(await (<TokenTable tenant="acme" tokens={[t]} />));
 * if (!html.includes('href="/ui/t/acme/tokens/tok_1"') || !html.includes(">active<")) throw new Error(html);
 * ```
 */
export function TokenTable(props: { tenant: string; tokens: readonly PublicToken[] }) {
  return (
    <DataTable id="token-table" columns={TOKEN_COLUMNS} caption={`Tokens of ${props.tenant}`}>
      {props.tokens.map((t) => (
        <tr>
          <td class="wrap">
            <a href={ui.token(props.tenant, t.id)}>{t.name}</a>
          </td>
          <td class="small">{t.type}</td>
          <td class="small">
            <Binding token={t} />
          </td>
          <td class="hide-narrow small">
            <Time iso={t.created_at} />
          </td>
          <td class="hide-narrow small">
            <When iso={t.expires_at} none="never" />
          </td>
          <td class="hide-narrow small">
            <When iso={t.last_used_at} none="not yet" />
          </td>
          <td>
            <StatusBadge status={t.status} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * One token's metadata as a description list: never its secret or digest
 * (only the public prefix the server keeps to recognise it).
 *
 * @example
 * ```tsx
 * import { TokenDetails } from "./token_views.tsx";
 * import type { PublicToken } from "../services/tokens.ts";
 * const t = { id: "tok_1", name: "shop", type: "namespace-client", tenant_slug: "acme",
 *   namespace_slug: "web", environment_slug: "staging", allowed_origins: ["https://shop.test"],
 *   prefix: "svc_client_AbC", description: null, created_by: "usr_1",
 *   created_at: "2030-01-01T00:00:00.000Z", expires_at: null, last_used_at: null,
 *   status: "active", revoked_at: null, revoked_by: null, rotated_from_token_id: null,
 *   rotated_to_token_id: null } as PublicToken;
 * const html = String(await (<TokenDetails tenant="acme" token={t} />));
 * if (!html.includes("https://shop.test") || !html.includes("web/staging")) throw new Error(html);
 * ```
 */
export function TokenDetails(props: { tenant: string; token: PublicToken }) {
  const t = props.token;
  const link = (id: string) => (
    <a class="wrap" href={ui.token(props.tenant, id)}>
      <code>{id}</code>
    </a>
  );
  return (
    <Facts>
      <Fact label="Name">{t.name}</Fact>
      <Fact label="Status">
        <StatusBadge status={t.status} />
      </Fact>
      <Fact label="Type">
        {t.type} <span class="muted small">({TYPE_PURPOSE[t.type]})</span>
      </Fact>
      <Fact label="Binding">
        <Binding token={t} />
      </Fact>
      {t.type === "namespace-client"
        ? (
          <Fact label="Allowed origins">
            {t.allowed_origins.length === 0
              ? <span class="muted">none (only requests without an Origin)</span>
              : (
                <ul class="plain">
                  {t.allowed_origins.map((o) => (
                    <li>
                      <code>{o}</code>
                    </li>
                  ))}
                </ul>
              )}
          </Fact>
        )
        : null}
      {t.description === null ? null : <Fact label="Description">{t.description}</Fact>}
      <Fact label="Id">
        <code class="wrap">{t.id}</code>
      </Fact>
      <Fact label="Prefix">
        <code>{t.prefix}</code> <span class="muted small">(the start of its secret)</span>
      </Fact>
      <Fact label="Created">
        <Time iso={t.created_at} /> <span class="muted small">by</span>{" "}
        <code class="wrap">{t.created_by}</code>
      </Fact>
      <Fact label="Expires">
        <When iso={t.expires_at} none="never" />
      </Fact>
      <Fact label="Last used">
        <When iso={t.last_used_at} none="not yet" />
      </Fact>
      {t.revoked_at === null ? null : (
        <Fact label="Revoked">
          <Time iso={t.revoked_at} />
          {t.revoked_by === null ? null : (
            <>
              {" "}
              <span class="muted small">by</span> <code class="wrap">{t.revoked_by}</code>
            </>
          )}
        </Fact>
      )}
      {t.rotated_from_token_id === null
        ? null
        : <Fact label="Replaces">{link(t.rotated_from_token_id)}</Fact>}
      {t.rotated_to_token_id === null
        ? null
        : <Fact label="Replaced by">{link(t.rotated_to_token_id)}</Fact>}
    </Facts>
  );
}

/**
 * A secret shown once: the warning that it will not be shown again, the
 * secret in `#token-secret`, and a copy button (console.js copies it).
 *
 * @example
 * ```tsx
 * import { SecretPanel } from "./token_views.tsx";
 * const html = String(await (<SecretPanel secret="svc_read_abc" />));
 * if (!html.includes('<code id="token-secret" class="secret">svc_read_abc</code>')) throw new Error(html);
 * if (!html.includes('data-copy="token-secret"')) throw new Error(html);
 * ```
 */
export function SecretPanel(props: { secret: string }) {
  return (
    <section aria-labelledby="secret-heading" class="card">
      <h2 id="secret-heading">Secret</h2>
      <Notice>
        <p>
          <strong>Copy this secret now. You will not see this secret again:</strong>{" "}
          the server keeps only a digest of it. If it is lost, rotate the token.
        </p>
      </Notice>
      <code id="token-secret" class="secret">{props.secret}</code>
      <button type="button" class="secondary" data-copy="token-secret">Copy</button>
    </section>
  );
}

/** What the creation form offers and holds. */
export interface CreateFormProps {
  tenant: string;
  csrf: string;
  /** The types the person may issue in this tenant. */
  types: readonly TokenType[];
  /** The namespaces the person may issue namespace tokens for. */
  namespaces: readonly IssuableNamespace[];
  /** The fields as typed (empty for a new form). */
  form: TokenForm;
  /** Why the last submission was refused. */
  error?: CfgtoolError;
}

/**
 * The form that creates a token (a plain POST to the tokens page): name,
 * type, namespace, environment and allowed origins (for
 * `namespace-client`), expiry and description; after a refusal the error
 * is shown above the fields, the field it is about is marked invalid, and
 * every field keeps what was typed.
 *
 * @example
 * ```tsx
 * import { CreateTokenForm } from "./token_views.tsx";
 * import { tokenFormOf } from "./token_form.ts";
 * const html = String(await (
 *   <CreateTokenForm tenant="acme" csrf="x" types={["namespace-read"]}
 *     namespaces={[{ slug: "web", environments: ["production"] }]}
 *     form={tokenFormOf(new Map([["name", "kept"]]))} />
 * ));
 * if (!html.includes('value="kept"') || html.includes('value="tenant-admin"')) throw new Error(html);
 * ```
 */
export function CreateTokenForm(props: CreateFormProps) {
  const f = props.form;
  const bad = props.error?.details?.field;
  const badField = typeof bad === "string" ? FORM_FIELD[bad] : undefined;
  const described = (field: keyof TokenForm, hint: boolean) => {
    const ids = [
      ...(hint ? [`token-${field}-hint`] : []),
      ...(props.error !== undefined && badField === field ? ["token-error"] : []),
    ];
    return ids.length === 0 ? undefined : ids.join(" ");
  };
  const invalid = (field: keyof TokenForm) => badField === field ? "true" : undefined;
  const envs = [...new Set(props.namespaces.flatMap((n) => n.environments))];
  const nsTypes = props.types.some((t) => t.startsWith("namespace-"));
  return (
    <form method="post" action={ui.tokens(props.tenant)} id="create-token">
      <CsrfField token={props.csrf} />
      <ProblemNotice id="token-error" message={props.error?.message} />
      <Field
        id="token-name"
        label="Name"
        hint="Unique among the active tokens of its namespace (or of the tenant)."
      >
        <input
          type="text"
          id="token-name"
          name="name"
          value={f.name}
          required
          maxlength={100}
          autocomplete="off"
          aria-invalid={invalid("name")}
          aria-describedby={described("name", true)}
        />
      </Field>
      <Field id="token-type" label="Type">
        <select
          id="token-type"
          name="type"
          aria-invalid={invalid("type")}
          aria-describedby={described("type", false)}
        >
          <Options
            choices={props.types.map((t) => [t, `${t}: ${TYPE_PURPOSE[t]}`] as const)}
            selected={f.type}
          />
        </select>
      </Field>
      {nsTypes
        ? (
          <>
            <Field
              id="token-namespace"
              label="Namespace"
              hint="For namespace tokens; a tenant-admin token covers the whole tenant."
            >
              <select
                id="token-namespace"
                name="namespace"
                aria-invalid={invalid("namespace")}
                aria-describedby={described("namespace", true)}
              >
                <Options choices={props.namespaces.map((n) => n.slug)} selected={f.namespace} />
              </select>
            </Field>
            <Field
              id="token-environment"
              label="Environment"
              hint={
                <>
                  namespace-client only: the environment it evaluates. Declared:{" "}
                  {props.namespaces.map((n, i) => (
                    <>
                      {i > 0 ? "; " : null}
                      {n.slug}: {n.environments.length === 0 ? "none" : n.environments.join(", ")}
                    </>
                  ))}.
                </>
              }
            >
              <input
                type="text"
                id="token-environment"
                name="environment"
                value={f.environment}
                list="token-environments"
                autocomplete="off"
                aria-invalid={invalid("environment")}
                aria-describedby={described("environment", true)}
              />
              <datalist id="token-environments">
                {envs.map((e) => <option value={e} />)}
              </datalist>
            </Field>
            <Field
              id="token-origins"
              label="Allowed origins"
              hint={
                <>
                  namespace-client only: the sites whose pages may use it, one per line, such as
                  {" "}
                  <code>https://shop.example.com</code>.
                </>
              }
            >
              <textarea
                id="token-origins"
                name="origins"
                class="short"
                aria-invalid={invalid("origins")}
                aria-describedby={described("origins", true)}
              >
                {f.origins}
              </textarea>
            </Field>
          </>
        )
        : null}
      <Field
        id="token-expiry"
        label="Expires"
        hint={
          <>
            Recommended at most: 180 days for namespace-read, 90 for namespace-write and
            namespace-client, 30 for tenant-admin.
          </>
        }
      >
        <select
          id="token-expiry"
          name="expiry"
          aria-invalid={invalid("expiry")}
          aria-describedby={described("expiry", true)}
        >
          <Options choices={Object.entries(EXPIRY_CHOICES)} selected={f.expiry} />
        </select>
      </Field>
      <Field
        id="token-expires_on"
        label="Expiry date (with “On a date…”)"
        hint="The token expires at 00:00 UTC that day."
      >
        <input
          type="date"
          id="token-expires_on"
          name="expires_on"
          value={f.expires_on}
          aria-describedby="token-expires_on-hint"
        />
      </Field>
      <Field id="token-description" label="Description (optional)">
        <input
          type="text"
          id="token-description"
          name="description"
          value={f.description}
          autocomplete="off"
          aria-invalid={invalid("description")}
          aria-describedby={described("description", false)}
        />
      </Field>
      <button type="submit">Create token</button>
    </form>
  );
}
