/**
 * A namespace's change requests in the console: the Changes page (the
 * requests newest first, filtered by status, or by the flag they change;
 * the protected environments, with their form for who may change them;
 * the form that starts a progressive rollout), one request's page
 * (lib/console/change_request_page.tsx), and the actions on it, each a
 * plain form post that calls one service function and goes back to the
 * request's page with a notice of what was done (303), or draws that page
 * again with the refusal (400, 403, 409, 422) as an alert.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { CfgtoolError, InvalidRequestError, NotFoundError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import { shapedParam, SHAPES } from "../http/params.ts";
import { applyChange, cancelSchedule, openRollout } from "../services/change_apply.ts";
import { type ChangesOverview, changesOverview } from "../services/change_lists.ts";
import {
  approveChange,
  type ChangeRequestView,
  commentOnChange,
  rejectChange,
  withdrawChange,
} from "../services/changes.ts";
import { parseProtection, setProtection } from "../services/protection.ts";
import {
  type ListRefusal,
  protectionBody,
  ProtectionSection,
  rolloutAskOf,
  RolloutSection,
} from "./change_list_forms.tsx";
import {
  actionOf,
  type ActionRefusal,
  ACTIONS,
  scheduleInstant,
} from "./change_request_actions.tsx";
import { requestPage } from "./change_request_page.tsx";
import {
  approvalsText,
  STATUS_FILTERS,
  StatusBadge,
  type StatusFilter,
  statusFilterOf,
} from "./change_status.tsx";
import type { ConsoleEnv } from "./env.ts";
import { confirmed, GetForm, InlineField, Options } from "./form_fields.tsx";
import { consolePage, namespaceCrumbs, type PageOptions } from "./layout.tsx";
import { consoleRequest, namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { type Author, AuthorName, versionAuthors } from "./version_authors.tsx";
import { DataTable, Notice, Pager, Time } from "./widgets.tsx";

/** Requests per page of the list. */
export const CHANGES_PER_PAGE = 50;
/** Longest message shown in the list (the request's page shows all of it). */
const LIST_MESSAGE_LENGTH = 160;
/** The statuses of a refusal the console shows on the page it came from. */
const SHOWN_REFUSALS = new Set([400, 403, 409, 412, 422]);

/**
 * The change-request routes, mounted at `/ui/t/:tenant/ns/:ns`:
 * `GET /changes?status=&flag=&after=`, `POST /changes/rollout`,
 * `POST /changes/protection`, `GET /changes/:id` and
 * `POST /changes/:id/(approve|reject|comment|apply|schedule|cancel-schedule|withdraw)`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", changeRequestRoutes(deps));
 * ```
 */
export function changeRequestRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/changes", async (c) => await listPage(c));

  app.post("/changes/rollout", async (c) => {
    const form = c.get("form");
    const ref = namespaceRef(c);
    let opened;
    try {
      opened = await openRollout(
        deps,
        c.get("person"),
        ref,
        rolloutAskOf(form),
        consoleRequest(c),
      );
    } catch (err) {
      if (!shown(err)) throw err;
      return await listPage(c, refusalOf("rollout", err, form));
    }
    return c.redirect(
      ui.changeRequest(ref.tenant, ref.namespace, opened.id, { done: "opened" }),
      303,
    );
  });

  app.post("/changes/protection", async (c) => {
    const form = c.get("form");
    const ref = namespaceRef(c);
    try {
      await setProtection(
        deps,
        c.get("person"),
        ref,
        () => parseProtection(protectionBody(form)),
        consoleRequest(c),
      );
    } catch (err) {
      if (!shown(err)) throw err;
      return await listPage(c, refusalOf("protection", err, form));
    }
    return c.redirect(ui.changes(ref.tenant, ref.namespace, { done: "protection" }), 303);
  });

  app.get("/changes/:id", async (c) => await requestPage(c, deps, idParam(c)));

  app.post("/changes/:id/:action", async (c) => {
    const id = idParam(c);
    const action = actionOf(c.req.param("action"));
    const form = c.get("form");
    const person = c.get("person");
    const ref = namespaceRef(c);
    const ctx = consoleRequest(c);
    let done: string = ACTIONS[action].done;
    try {
      switch (action) {
        case "approve":
          await approveChange(deps, person, ref, id, form.get("comment") ?? "", ctx, seen(form));
          break;
        case "reject":
          await rejectChange(deps, person, ref, id, form.get("comment") ?? "", ctx, seen(form));
          break;
        case "comment":
          await commentOnChange(deps, person, ref, id, form.get("text") ?? "", ctx);
          break;
        case "apply": {
          const outcome = await applyChange(deps, person, ref, id, undefined, ctx);
          if (outcome.version === null) done = "scheduled"; // a rollout: its first step is due
          break;
        }
        case "schedule":
          await applyChange(deps, person, ref, id, scheduleInstant(form.get("at")), ctx);
          break;
        case "cancel-schedule":
          await cancelSchedule(deps, person, ref, id, ctx);
          break;
        case "withdraw":
          if (!confirmed(form)) {
            throw new InvalidRequestError(
              "Tick the box to confirm that withdrawing closes the request for good",
              { details: { field: "confirm" } },
            );
          }
          await withdrawChange(deps, person, ref, id, ctx);
          break;
      }
    } catch (err) {
      if (!shown(err)) throw err;
      const field = err.details?.field;
      const refused: ActionRefusal = {
        action,
        message: err.message,
        field: typeof field === "string" ? field : undefined,
        status: err.status as ActionRefusal["status"],
        values: form,
      };
      return await requestPage(c, deps, id, refused);
    }
    return c.redirect(ui.changeRequest(ref.tenant, ref.namespace, id, { done }), 303);
  });

  /** The Changes page; with `refused`, one of its forms was refused. */
  async function listPage(c: Context<ConsoleEnv>, refused?: ListRefusal): Promise<Response> {
    const ref = namespaceRef(c);
    const { tenant, namespace } = ref;
    const { filter, statuses } = statusFilterOf(c.req.query("status"));
    const flag = shapedParam(c.req.query("flag"), "flag", SHAPES.slug);
    const after = shapedParam(c.req.query("after"), "after", SHAPES.changeRequestId);
    const overview = await changesOverview(deps, c.get("person"), ref, {
      statuses,
      flag,
      after,
      limit: CHANGES_PER_PAGE,
    });
    const who = await versionAuthors(deps, c.get("person"), overview.items.map((r) => r.author_id));
    const csrf = c.get("csrf");
    return consolePage(
      c,
      {
        title: `Changes of ${namespace}`,
        tenant,
        section: "namespaces",
        ...(refused === undefined ? {} : { status: refused.status }),
        crumbs: namespaceCrumbs(tenant, namespace, { label: "Changes" }),
      },
      <>
        {refused === undefined && c.req.query("done") === "protection"
          ? (
            <Notice>
              <p>The protected environments were saved.</p>
            </Notice>
          )
          : null}
        {refused === undefined ? null : (
          <Notice kind="error">
            <p>
              <a href={`#${refused.form}-heading`}>
                {refused.form === "rollout"
                  ? "Could not start the rollout"
                  : "Could not save the protected environments"}
              </a>: {refused.message}
            </p>
          </Notice>
        )}
        <p class="small muted">
          The head is{" "}
          <a href={ui.version(tenant, namespace, overview.head.version)}>
            version {overview.head.version}
          </a>
          {" · "}
          <a href={ui.namespace(tenant, namespace)}>its flags</a>
          {" · "}
          <a href={ui.versions(tenant, namespace)}>versions</a>
        </p>
        <GetForm
          action={ui.changes(tenant, namespace)}
          label="Filter change requests"
          button="Filter"
        >
          <InlineField id="changes-status" label="Status">
            <select id="changes-status" name="status">
              <Options choices={Object.entries(STATUS_FILTERS)} selected={filter} any="All" />
            </select>
          </InlineField>
          {flag === undefined ? null : <input type="hidden" name="flag" value={flag} />}
        </GetForm>
        {flag === undefined ? null : (
          <p>
            Only the requests that change the flag <code>{flag}</code>.{" "}
            <a href={ui.changes(tenant, namespace, { status: filter })}>Show every flag's</a>
          </p>
        )}
        <RequestTable
          tenant={tenant}
          namespace={namespace}
          overview={overview}
          authors={who}
          filter={filter}
          flag={flag}
          after={after}
        />
        <ProtectionSection
          tenant={tenant}
          namespace={namespace}
          overview={overview}
          csrf={csrf}
          refused={refused}
        />
        {overview.may.propose
          ? (
            <RolloutSection
              tenant={tenant}
              namespace={namespace}
              overview={overview}
              csrf={csrf}
              refused={refused}
            />
          )
          : null}
      </>,
    );
  }

  return app;
}

/** The request id a path names: 404 for one that cannot be an id. */
function idParam(c: Context<ConsoleEnv>): string {
  const id = c.req.param("id") ?? "";
  if (!SHAPES.changeRequestId.pattern.test(id)) {
    const { tenant, namespace } = namespaceRef(c);
    throw new NotFoundError(
      "change_request_not_found",
      `No change request ${JSON.stringify(id.slice(0, 40))} in ${tenant}/${namespace}`,
    );
  }
  return id;
}

/** Whether a refusal is shown on the page the form came from (else: the console's error page). */
function shown(err: unknown): err is CfgtoolError {
  return err instanceof CfgtoolError && SHOWN_REFUSALS.has(err.status);
}

/** A refused post of one of the Changes page's forms. */
function refusalOf(
  form: ListRefusal["form"],
  err: CfgtoolError,
  values: ReadonlyMap<string, string>,
): ListRefusal {
  const field = err.details?.field;
  return {
    form,
    message: err.message,
    field: typeof field === "string" ? field : undefined,
    status: err.status as NonNullable<PageOptions["status"]>,
    values,
  };
}

const CHANGE_COLUMNS = [
  "Change",
  { label: "Author", secondary: true },
  "Status",
  { label: "Environments", secondary: true },
  "Approvals",
  { label: "Updated", secondary: true },
] as const;

function RequestTable(
  props: {
    tenant: string;
    namespace: string;
    overview: ChangesOverview;
    authors: Map<string, Author>;
    filter: StatusFilter | undefined;
    flag: string | undefined;
    after: string | undefined;
  },
) {
  const { tenant, namespace, overview } = props;
  const { items } = overview;
  const query = { status: props.filter, flag: props.flag };
  return (
    <div id="change-table">
      {items.length === 0
        ? (
          <p>
            {props.filter === undefined && props.flag === undefined && props.after === undefined
              ? `No change request in ${namespace} yet.`
              : "No change request matches."}
          </p>
        )
        : (
          <DataTable
            columns={CHANGE_COLUMNS}
            caption={`Change requests of ${namespace}, newest first`}
            captionHidden
          >
            {items.map((r) => (
              <RequestRow
                tenant={tenant}
                namespace={namespace}
                request={r}
                author={props.authors.get(r.author_id)!}
                protection={overview.protection}
              />
            ))}
          </DataTable>
        )}
      <Pager
        label="Pages of change requests"
        first={props.after === undefined ? undefined : ui.changes(tenant, namespace, query)}
        next={overview.next === null
          ? undefined
          : ui.changes(tenant, namespace, { ...query, after: overview.next })}
      />
    </div>
  );
}

function RequestRow(
  props: {
    tenant: string;
    namespace: string;
    request: ChangeRequestView;
    author: Author;
    protection: ChangesOverview["protection"];
  },
) {
  const { request: r } = props;
  return (
    <tr>
      <td class="wrap">
        <a href={ui.changeRequest(props.tenant, props.namespace, r.id)}>
          {r.message.length > LIST_MESSAGE_LENGTH
            ? `${r.message.slice(0, LIST_MESSAGE_LENGTH)}…`
            : r.message}
        </a>
        <div class="small muted mono hide-narrow">{r.id}</div>
      </td>
      <td class="hide-narrow">
        <AuthorName author={props.author} />
      </td>
      <td>
        <StatusBadge status={r.status} />
      </td>
      <td class="small hide-narrow">
        {r.impact.length === 0 ? <span class="muted">none</span> : r.impact.map((env, i) => (
          <>
            {i === 0 ? null : ", "}
            {env}
            {Object.hasOwn(props.protection, env)
              ? (
                <>
                  {" "}
                  <span class="muted">(protected)</span>
                </>
              )
              : null}
          </>
        ))}
      </td>
      <td>
        {approvalsText(r)}
      </td>
      <td class="hide-narrow">
        <Time iso={r.updated_at} />
      </td>
    </tr>
  );
}

/** The revision of the files the reviewer was shown (the review forms carry it). */
function seen(form: Map<string, string>): number | undefined {
  const raw = form.get("revision");
  return raw !== undefined && /^\d{1,9}$/.test(raw) ? Number(raw) : undefined;
}
