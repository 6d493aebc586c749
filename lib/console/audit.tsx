/**
 * A tenant's audit log (`/ui/t/:tenant/audit`): its entries newest first,
 * with who acted (a person's email, a token's name when the reader may
 * read the token), what the entry is about (namespace, token, session),
 * a short summary of its details and the whole entry as JSON. A plain GET
 * form filters by event type, actor (an email or an id), namespace and a
 * time window in UTC; "Older" pages on with the same filters. Readable by
 * whoever `GET /api/v1/audit?tenant=…` lets read it (audit.read: the
 * tenant's admins and the people signed in to it); the page reads through
 * one service function (`tenantAuditLog`, lib/services/audit.ts), which
 * authorises the reader by the same rule.
 *
 * @module
 */
import { Hono } from "hono";
import { raw } from "hono/html";
import { AUDIT_SCAN_LIMIT, type AuditEntry, tenantAuditLog } from "../services/audit.ts";
import { authDeps } from "../http/authn.ts";
import type { AppDeps } from "../http/deps.ts";
import { detailsSummary } from "./audit_details.ts";
import {
  AUDIT_EVENT_TYPES,
  AUDIT_MAX_PAGE_SIZE,
  type AuditFilterInput,
  auditFilterInput,
  auditLinkQuery,
  type FilterProblem,
  parseAuditFilter,
} from "./audit_filters.ts";
import type { ConsoleEnv } from "./env.ts";
import { GetForm, InlineField, Options, problemAttributes } from "./form_fields.tsx";
import { consolePage, tenantCrumbs } from "./layout.tsx";
import type { ManifestViews } from "../services/versions.ts";
import { type PeopleNames, peopleNames } from "../services/people.ts";
import { ui } from "./urls.ts";
import { DataTable, Notice, Pager, Time } from "./widgets.tsx";

/**
 * The audit log routes, mounted at `/ui/t/:tenant`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache (not needed here)
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant", auditRoutes(deps, views));
 * ```
 */
export function auditRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  void views;
  const app = new Hono<ConsoleEnv>();

  app.get("/audit", async (c) => {
    const tenant = c.req.param("tenant")!;
    const person = c.get("person");
    const input = auditFilterInput(c.req.query());
    const { filter, problems } = parseAuditFilter(input);
    const { namespaces, page } = await tenantAuditLog(
      deps,
      person,
      tenant,
      problems.length > 0 ? null : filter, // refused filters read nothing
    );
    const names = peopleNames(authDeps(deps), person);
    const rows = await Promise.all(page.entries.map((e) => auditRow(tenant, e, names)));
    return consolePage(
      c,
      {
        title: "Audit log",
        tenant,
        section: "audit",
        crumbs: tenantCrumbs(tenant, { label: "Audit log" }),
        ...(problems.length > 0 ? { status: 400 as const } : {}),
      },
      <>
        <FilterForm tenant={tenant} input={input} namespaces={namespaces} problems={problems} />
        {problems.length > 0
          ? (
            <Notice kind="error">
              <p>Some filters could not be used: {problems.map((p) => p.message).join("; ")}.</p>
            </Notice>
          )
          : null}
        <p class="small muted">
          Newest first.{" "}
          {input.after === "" ? null : "Older entries, after the page you came from. "}
          {rows.length === 0
            ? null
            : `${rows.length} entr${rows.length === 1 ? "y" : "ies"} on this page.`}
        </p>
        {page.searchedOnly
          ? (
            <Notice>
              <p>
                Searched {page.read} entries
                {rows.length === 0 ? " and none matched yet" : ""}: use “Older” to search on.
              </p>
            </Notice>
          )
          : null}
        {rows.length === 0
          ? (problems.length > 0 ? null : <p>No entry matches.</p>)
          : (
            <DataTable class="audit" columns={AUDIT_COLUMNS} caption={`Audit entries of ${tenant}`}>
              {rows}
            </DataTable>
          )}
        <Pager
          label="Pages of the audit log"
          first={input.after === ""
            ? undefined
            : ui.audit(tenant, auditLinkQuery(input, undefined))}
          next={page.next === null ? undefined : ui.audit(tenant, auditLinkQuery(input, page.next))}
        />
      </>,
    );
  });

  return app;
}

const AUDIT_COLUMNS = [
  "Time",
  "Type",
  "Actor",
  { label: "Target", secondary: true },
  "Details",
] as const;

function FilterForm(
  props: {
    tenant: string;
    input: AuditFilterInput;
    namespaces: string[];
    problems: FilterProblem[];
  },
) {
  const { tenant, input } = props;
  const problem = (field: keyof AuditFilterInput) =>
    props.problems.find((p) => p.field === field)?.message;
  /** The id of a filter's control, and its problem's attributes. */
  const control = (field: keyof AuditFilterInput) => ({
    id: `audit-${field}`,
    ...problemAttributes(`audit-${field}`, problem(field)),
  });
  return (
    <GetForm
      action={ui.audit(tenant)}
      class="filters"
      search
      button="Filter"
      after={
        <>
          <div>
            <a href={ui.audit(tenant)}>Clear filters</a>
          </div>
          <p class="small muted fill">
            Times are UTC; “To” includes the minute it names. With an actor or a time window, a page
            reads at most {AUDIT_SCAN_LIMIT} entries, and “Older” reads on.
          </p>
        </>
      }
    >
      <InlineField id="audit-type" label="Type" problem={problem("type")}>
        <input
          {...control("type")}
          type="text"
          name="type"
          list="audit-types"
          value={input.type}
          placeholder="any"
          autocomplete="off"
        />
        <datalist id="audit-types">
          {AUDIT_EVENT_TYPES.map((t) => <option value={t}></option>)}
        </datalist>
      </InlineField>
      <InlineField id="audit-actor" label="Actor" problem={problem("actor")}>
        <input
          {...control("actor")}
          type="text"
          name="actor"
          value={input.actor}
          placeholder="email or id"
        />
      </InlineField>
      <InlineField id="audit-namespace" label="Namespace" problem={problem("namespace")}>
        <select {...control("namespace")} name="namespace">
          <Options choices={props.namespaces} selected={input.namespace} any="any" />
        </select>
      </InlineField>
      <InlineField id="audit-from" label="From (UTC)" problem={problem("from")}>
        <input {...control("from")} type="datetime-local" name="from" value={input.from} />
      </InlineField>
      <InlineField id="audit-to" label="To (UTC)" problem={problem("to")}>
        <input {...control("to")} type="datetime-local" name="to" value={input.to} />
      </InlineField>
      <InlineField id="audit-limit" label="Per page" problem={problem("limit")}>
        <input
          {...control("limit")}
          type="number"
          name="limit"
          min="1"
          max={String(AUDIT_MAX_PAGE_SIZE)}
          value={input.limit}
          placeholder="50"
          class="narrow"
        />
      </InlineField>
    </GetForm>
  );
}

async function auditRow(tenant: string, e: AuditEntry, names: PeopleNames) {
  const summary = detailsSummary(e.details);
  return (
    <tr>
      <td>
        <Time iso={e.timestamp} />
      </td>
      <td>
        <code>
          {e.type.split(".").map((part, i) =>
            i === 0 ? part : (
              <>
                .<wbr />
                {part}
              </>
            )
          )}
        </code>
        {e.result === "failure"
          ? (
            <>
              {" "}
              <span class="badge off">failed</span>
            </>
          )
          : null}
      </td>
      <td class="wrap">{await Actor({ e, names })}</td>
      <td class="wrap hide-narrow">{await Target({ tenant, e, names })}</td>
      <td class="wrap small">
        {summary === "" ? null : <div>{summary}</div>}
        <details class="audit-json">
          <summary>Entry as JSON</summary>
          <pre>{jsonText(e)}</pre>
        </details>
      </td>
    </tr>
  );
}

/**
 * An entry as JSON text for a `<pre>`, its null fields left out; only `&`
 * and `<` are escaped (all a text node needs), so the quotes of JSON do
 * not double a page's size.
 */
function jsonText(e: AuditEntry) {
  const json = JSON.stringify(e, (_k, v) => v === null ? undefined : v);
  return raw(json.replaceAll("&", "&amp;").replaceAll("<", "&lt;"));
}

async function Actor(props: { e: AuditEntry; names: PeopleNames }) {
  const { e, names } = props;
  if (e.principal_type === "user") {
    const email = await names.email(e.actor_id);
    return email === null ? <span>{e.actor_id}</span> : <span>{email}</span>;
  }
  if (e.principal_type === "service" || e.principal_type === "client") {
    const token = await names.token(e.actor_id);
    return (
      <span>
        {token === null ? <code>{e.actor_id}</code> : (
          <>
            token {token.name} <span class="small muted">{e.actor_id}</span>
          </>
        )}
      </span>
    );
  }
  return <span class="muted">{e.actor_id}</span>;
}

async function Target(props: { tenant: string; e: AuditEntry; names: PeopleNames }) {
  const { tenant, e, names } = props;
  const parts = [];
  if (e.namespace_slug !== null) {
    parts.push(
      <div>
        namespace {e.type === "namespace.deleted"
          ? e.namespace_slug // gone: no page to link to
          : <a href={ui.namespace(tenant, e.namespace_slug)}>{e.namespace_slug}</a>}
        {e.environment_slug === null ? null : <>/{e.environment_slug}</>}
      </div>,
    );
  }
  if (e.token_id !== null) {
    const token = await names.token(e.token_id);
    parts.push(
      <div>
        {token === null
          ? (
            <>
              token <code>{e.token_prefix ?? e.token_id}</code>
            </>
          )
          : (
            <>
              token <a href={ui.token(tenant, e.token_id)}>{token.name}</a>
            </>
          )}
        {e.token_type === null ? null : <span class="small muted">{` (${e.token_type})`}</span>}
      </div>,
    );
  }
  const user = typeof e.details.user_id === "string" ? e.details.user_id : null;
  if (user !== null && e.type.startsWith("session.")) {
    parts.push(<div>session of {(await names.email(user)) ?? user}</div>);
  }
  if (user !== null && e.type.startsWith("admin.")) {
    const email = typeof e.details.email === "string" ? e.details.email : null;
    const role = e.namespace_slug === null ? "tenant admin" : "namespace admin";
    parts.push(<div>{role} {email ?? (await names.email(user)) ?? user}</div>);
  }
  if (e.type.startsWith("tenant.") && e.type !== "tenant.login_policy_changed") {
    parts.push(<div>tenant {e.tenant_slug}</div>);
  }
  return parts.length === 0 ? <span class="muted">tenant</span> : <>{parts}</>;
}
