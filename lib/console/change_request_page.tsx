/**
 * One change request's page in the console: its message, author and
 * status (with the reason a scheduled apply failed, its schedule, and a
 * rollout's plan with the steps done), the environments it affects (the
 * protected ones marked with the approvals they need), what it changes
 * value by value and the line diff of each file it changes against its
 * base (or that the base is no longer kept), its approvals, rejection and
 * comments, and the forms of the steps its reader may take
 * (lib/console/change_request_actions.tsx). It shows what one service call
 * returns (`changeRequestPage` of lib/services/change_lists.ts).
 *
 * @module
 */
import type { Context } from "hono";
import type { AppDeps } from "../http/deps.ts";
import { valueChangeLines } from "../flags/value_changes.ts";
import { formatDuration } from "../protocol/time_text.ts";
import { type ChangeRequestPage, changeRequestPage } from "../services/change_lists.ts";
import type { ChangeRequestRecord, RolloutPlan } from "../services/changes.ts";
import {
  type ActionRefusal,
  ACTIONS,
  CommentForm,
  RequestActions,
} from "./change_request_actions.tsx";
import { approvals, STATUS_MEANING, StatusBadge } from "./change_status.tsx";
import { Changes } from "./changes_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { diffFileSets } from "./file_set_diff.ts";
import { consolePage, namespaceCrumbs } from "./layout.tsx";
import { namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { type Author, AuthorName, versionAuthors } from "./version_authors.tsx";
import { DataTable, Fact, Facts, Notice, Time } from "./widgets.tsx";

/** Longest message shown in a page's title (the page shows all of it). */
const TITLE_MESSAGE_LENGTH = 80;

/**
 * A request's page; with `refused`, an action on it was refused (the
 * page's status is the refusal's, the problem shown as an alert, the
 * inputs kept).
 *
 * @param c the route's context
 * @param deps the app dependencies
 * @param id the request
 * @param refused a refused action, if any
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return await requestPage(c, deps, "cr_01…");
 * ```
 */
export async function requestPage(
  c: Context<ConsoleEnv>,
  deps: AppDeps,
  id: string,
  refused?: ActionRefusal,
): Promise<Response> {
  const person = c.get("person");
  const ref = namespaceRef(c);
  const { tenant, namespace } = ref;
  const page = await changeRequestPage(deps, person, ref, id);
  const r = page.request;
  const who = await versionAuthors(deps, person, [r.author_id]);
  const done = refused === undefined ? c.req.query("done") : undefined;
  const csrf = c.get("csrf");
  return consolePage(
    c,
    {
      title: `Change request: ${shortened(r.message, TITLE_MESSAGE_LENGTH)}`,
      tenant,
      section: "namespaces",
      ...(refused === undefined ? {} : { status: refused.status }),
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: "Changes", href: ui.changes(tenant, namespace) },
        { label: r.id },
      ),
    },
    <>
      <DoneNotice tenant={tenant} namespace={namespace} done={done} request={r} />
      {refused === undefined ? null : (
        <Notice kind="error">
          <p id="action-error">
            Could not {ACTIONS[refused.action].verb} this change request: {refused.message}
          </p>
        </Notice>
      )}
      <RequestFacts
        tenant={tenant}
        namespace={namespace}
        request={r}
        author={who.get(r.author_id)!}
      />
      {r.plan === null ? null : <PlanSection request={r} plan={r.plan} />}
      <ImpactSection page={page} />
      <ChangesSection tenant={tenant} namespace={namespace} page={page} />
      <ReviewSection request={r} />
      <section aria-labelledby="comments-heading">
        <h2 id="comments-heading">Comments ({page.comments.length})</h2>
        {page.comments.length === 0 ? <p class="muted">No comment yet.</p> : (
          <ul class="plain">
            {page.comments.map((m) => (
              <li class="card">
                <p class="small">
                  <span class="wrap">{m.author_email ?? m.author_id}</span>, <Time iso={m.at} />
                </p>
                <p class="wrap message">{m.text}</p>
              </li>
            ))}
          </ul>
        )}
        {page.may.comment
          ? (
            <CommentForm
              tenant={tenant}
              namespace={namespace}
              id={r.id}
              csrf={csrf}
              refused={refused}
            />
          )
          : null}
      </section>
      <RequestActions
        tenant={tenant}
        namespace={namespace}
        page={page}
        csrf={csrf}
        refused={refused}
      />
    </>,
  );
}

/** The first line of a text, at most `max` characters. */
function shortened(text: string, max: number): string {
  const line = text.split("\n")[0]!;
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** What the reader just did (`?done=`), said above the request. */
function DoneNotice(
  props: {
    tenant: string;
    namespace: string;
    done: string | undefined;
    request: ChangeRequestRecord;
  },
) {
  const r = props.request;
  const missing = Math.max(0, r.required_approvals - r.approvals.length);
  const still = missing === 0
    ? "It has the approvals it needs."
    : `It still needs ${approvals(missing)}.`;
  let text;
  switch (props.done) {
    case "opened":
      text = r.status === "open"
        ? `The change request is open. It needs ${
          approvals(r.required_approvals)
        } before it can be applied.`
        : r.status === "scheduled"
        ? "The change request is open and needs no approval: its rollout has started."
        : "The change request is open and needs no approval: apply it when you are ready.";
      break;
    case "approved":
      text = `You approved this change request. ${still}`;
      break;
    case "rejected":
      text = "You rejected this change request: it is closed.";
      break;
    case "commented":
      text = "Your comment was added.";
      break;
    case "applied":
      text = r.applied_version === null ? "The change request was applied." : (
        <>
          The change request was applied as{" "}
          <a href={ui.version(props.tenant, props.namespace, r.applied_version)}>
            version {r.applied_version}
          </a>.
        </>
      );
      break;
    case "scheduled":
      text = r.scheduled_at === null ? "The change request was scheduled." : (
        <>
          The change request is scheduled: it applies at <Time iso={r.scheduled_at} />.
        </>
      );
      break;
    case "unscheduled":
      text = "The schedule was cancelled.";
      break;
    case "withdrawn":
      text = "You withdrew this change request: it is closed.";
      break;
    default:
      return null;
  }
  return (
    <Notice>
      <p>{text}</p>
    </Notice>
  );
}

function RequestFacts(
  props: { tenant: string; namespace: string; request: ChangeRequestRecord; author: Author },
) {
  const { tenant, namespace, request: r } = props;
  return (
    <Facts class="meta card">
      <Fact label="Status">
        <StatusBadge status={r.status} /> {STATUS_MEANING[r.status]}
      </Fact>
      {r.failure === null ? null : (
        <Fact label="Why it failed" class="wrap">
          <span class="error">{r.failure}</span>
        </Fact>
      )}
      {r.scheduled_at === null ? null : (
        <Fact label="Applies at">
          <Time iso={r.scheduled_at} />
        </Fact>
      )}
      {r.applied_version === null
        ? null
        : (
          <Fact label={r.status === "applied" ? "Applied as" : "Last step applied as"}>
            <a href={ui.version(tenant, namespace, r.applied_version)}>
              version {r.applied_version}
            </a>
          </Fact>
        )}
      <Fact label="Message" class="message">{r.message}</Fact>
      <Fact label="Author">
        <AuthorName author={props.author} />
      </Fact>
      <Fact label="Opened">
        <Time iso={r.created_at} />
      </Fact>
      <Fact label="Updated">
        <Time iso={r.updated_at} />
      </Fact>
      <Fact label="Made on">
        <a href={ui.version(tenant, namespace, r.base_version)}>version {r.base_version}</a>
      </Fact>
      <Fact label="Id">
        <code class="wrap">{r.id}</code>
      </Fact>
    </Facts>
  );
}

function PlanSection(props: { request: ChangeRequestRecord; plan: RolloutPlan }) {
  const { plan, request: r } = props;
  return (
    <section aria-labelledby="plan-heading">
      <h2 id="plan-heading">Rollout plan</h2>
      <p>
        The share of <code>{plan.variation}</code> in the rollout of rule {plan.rule + 1} of{" "}
        <code>{plan.flag}</code> in{" "}
        <strong>{plan.environment}</strong>, step by step, one step every{" "}
        {formatDuration(plan.every_ms)}: {plan.done} of {plan.steps.length} steps done.
      </p>
      <ol>
        {plan.steps.map((weight, i) => (
          <li>
            {weight}% {i < plan.done
              ? <span class="badge on">done</span>
              : i === plan.done && r.status === "scheduled" && r.scheduled_at !== null
              ? (
                <>
                  <span class="badge warn">next</span> at <Time iso={r.scheduled_at} />
                </>
              )
              : <span class="badge">to come</span>}
          </li>
        ))}
      </ol>
    </section>
  );
}

function ImpactSection(props: { page: ChangeRequestPage }) {
  const { request: r, protection } = props.page;
  return (
    <section aria-labelledby="impact-heading">
      <h2 id="impact-heading">Environments it affects</h2>
      {r.impact.length === 0
        ? (
          <p>
            None: no environment evaluates differently with it (a description changed, say).
          </p>
        )
        : (
          <DataTable
            columns={["Environment", "Protection"]}
            caption="Environments whose evaluation this request changes"
            captionHidden
          >
            {r.impact.map((env) => {
              const p = protection[env];
              return (
                <tr>
                  <td>
                    <strong>{env}</strong>
                  </td>
                  <td>
                    {p === undefined ? <span class="muted">not protected</span> : (
                      <>
                        <span class="badge warn">protected</span> needs{" "}
                        {approvals(p.required_approvals)}
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </DataTable>
        )}
      <p>
        {r.required_approvals === 0
          ? "It needs no approval."
          : `It needs ${
            approvals(r.required_approvals)
          } (the most any protected environment it affects asks for); it has ${r.approvals.length}.`}
      </p>
    </section>
  );
}

function ChangesSection(props: { tenant: string; namespace: string; page: ChangeRequestPage }) {
  const { tenant, namespace, page } = props;
  const r = page.request;
  const lines = page.changes === null ? null : valueChangeLines(page.changes);
  const before = new Map<string, Uint8Array>();
  const after = new Map<string, Uint8Array>();
  for (const path of r.changed_paths) {
    const was = page.base?.get(path);
    if (was) before.set(path, was);
    const now = page.files.get(path);
    if (now !== undefined) after.set(path, now);
  }
  const count = r.changed_paths.length;
  return (
    <section aria-labelledby="changes-heading">
      <h2 id="changes-heading">What it changes</h2>
      {lines === null
        ? null
        : lines.length === 0
        ? <p class="muted">No value changes: only formatting or comments.</p>
        : (
          <ul class="toml-changes" aria-label="Values it changes">
            {lines.map((line) => <li class="mono small wrap">{line}</li>)}
          </ul>
        )}
      <h3>
        {count === 1 ? "1 file" : `${count} files`} against version {r.base_version}
      </h3>
      {page.base === null
        ? (
          <>
            <p>
              Its base, version{" "}
              {r.base_version}, is no longer kept: there is nothing to compare its files with. The
              files it changes:
            </p>
            <ul>
              {r.changed_paths.map((path) => (
                <li>
                  <code class="wrap">{path}</code>{" "}
                  {page.files.has(path) ? null : <span class="badge">removed</span>}
                </li>
              ))}
            </ul>
          </>
        )
        : (
          <>
            <p class="small">
              <a href={ui.version(tenant, namespace, r.base_version)}>
                Version {r.base_version}
              </a>, the head it was made on, to the files it proposes.
            </p>
            <Changes changes={diffFileSets(before, after)} />
          </>
        )}
    </section>
  );
}

function ReviewSection(props: { request: ChangeRequestRecord }) {
  const r = props.request;
  return (
    <section aria-labelledby="review-heading">
      <h2 id="review-heading">
        Approvals ({r.approvals.length} of {r.required_approvals} needed)
      </h2>
      {r.approvals.length === 0 ? <p class="muted">No approval yet.</p> : (
        <ul>
          {r.approvals.map((a) => (
            <li>
              <span class="wrap">{a.email ?? a.user_id}</span> approved, <Time iso={a.at} />
              {a.comment === undefined ? null : (
                <>
                  : <q class="wrap">{a.comment}</q>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      {r.rejection === null ? null : (
        <Notice>
          <p>
            Rejected by <span class="wrap">{r.rejection.email ?? r.rejection.user_id}</span>,{" "}
            <Time iso={r.rejection.at} />: <q class="wrap">{r.rejection.comment}</q>
          </p>
        </Notice>
      )}
    </section>
  );
}
