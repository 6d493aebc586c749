/**
 * The console's webhooks of a tenant, mounted at `/ui/t/:tenant`
 * (docs/webhooks.md): the list with the creation form, the page that shows
 * a new webhook's signing secret once (answered directly, 201, never
 * behind a redirect), and one webhook's page: its settings, a test event
 * sent on request, its newest deliveries with every attempt, and deletion
 * behind a confirmation. Tenant admins and superadmins only: each page
 * calls one function of lib/services/webhooks.ts with the signed-in person
 * as principal, which refuses everyone else (403), as the API does.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { AppDeps, AppEnv } from "../http/deps.ts";
import { requestContext } from "../http/authn.ts";
import { type CfgtoolError, InvalidRequestError } from "../errors.ts";
import {
  createWebhook,
  deleteWebhook,
  tenantWebhooks,
  testWebhook,
  WEBHOOK_FORMATS,
  type WebhookDeliveryInfo,
  type WebhookInfo,
  webhookWithDeliveries,
} from "../services/webhooks.ts";
import type { ConsoleEnv } from "./env.ts";
import { ConfirmCheck, confirmed, SelectField, TextField } from "./form_fields.tsx";
import { consolePage, type PageOptions, tenantCrumbs } from "./layout.tsx";
import { CsrfField, DataTable, Fact, Facts, Notice, ProblemNotice, Time } from "./widgets.tsx";

const e = encodeURIComponent;

/** The addresses of the webhook pages. */
export const webhookUrls = {
  list: (t: string): string => `/ui/t/${e(t)}/webhooks`,
  one: (t: string, id: string): string => `/ui/t/${e(t)}/webhooks/${e(id)}`,
  action: (t: string, id: string, action: "test" | "delete"): string =>
    `/ui/t/${e(t)}/webhooks/${e(id)}/${action}`,
};

/** The creation form's fields, as typed. */
export interface WebhookForm {
  url: string;
  events: string;
  namespaces: string;
  format: string;
  description: string;
}

/**
 * The creation form's fields from a posted form (missing ones empty).
 *
 * @param form the posted fields
 * @returns the fields
 *
 * @example
 * ```ts
 * import { webhookFormOf } from "./webhooks.tsx";
 * const f = webhookFormOf(new Map([["url", "https://x.test/h"]]));
 * if (f.url !== "https://x.test/h" || f.format !== "standard" || f.events !== "") throw new Error();
 * ```
 */
export function webhookFormOf(form: ReadonlyMap<string, string> | undefined): WebhookForm {
  const get = (k: string) => form?.get(k) ?? "";
  return {
    url: get("url").trim(),
    events: get("events"),
    namespaces: get("namespaces"),
    format: get("format") || "standard",
    description: get("description"),
  };
}

/**
 * The API body of a creation form: events and namespaces split at commas
 * and white space.
 *
 * @param f the form
 * @returns the body `createWebhook` takes
 *
 * @example
 * ```ts
 * import { webhookInputOf } from "./webhooks.tsx";
 * const body = webhookInputOf({ url: "https://x.test", events: "manifest.*, token.created",
 *   namespaces: "", format: "slack", description: "" });
 * if (JSON.stringify(body) !== '{"url":"https://x.test","events":["manifest.*","token.created"],"format":"slack"}') {
 *   throw new Error(JSON.stringify(body));
 * }
 * ```
 */
export function webhookInputOf(f: WebhookForm): Record<string, unknown> {
  const words = (s: string) => s.split(/[\s,]+/).filter((w) => w !== "");
  const namespaces = words(f.namespaces);
  return {
    url: f.url,
    events: words(f.events),
    ...(namespaces.length === 0 ? {} : { namespaces }),
    format: f.format,
    ...(f.description.trim() === "" ? {} : { description: f.description.trim() }),
  };
}

/**
 * The webhook routes, mounted at `/ui/t/:tenant`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant", webhookRoutes(deps));
 * ```
 */
export function webhookRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const ctxOf = (c: Context<ConsoleEnv>) => requestContext(c as unknown as Context<AppEnv>);

  app.get("/webhooks", async (c) => {
    const tenant = c.req.param("tenant")!;
    return await listPage(c, tenant, webhookFormOf(undefined));
  });

  /** The list and the creation form (with a refusal and the input kept). */
  async function listPage(
    c: Context<ConsoleEnv>,
    tenant: string,
    form: WebhookForm,
    error?: CfgtoolError,
  ): Promise<Response> {
    const { webhooks, namespaces } = await tenantWebhooks(deps, c.get("person"), tenant);
    return consolePage(
      c,
      {
        ...frame(tenant),
        ...(error ? { status: error.status as NonNullable<PageOptions["status"]> } : {}),
      },
      <>
        <p>
          A webhook posts the tenant's events (pushes, rollbacks, change requests, tokens, admins)
          to a URL of yours as they happen, signed with its secret, and retries for six hours when
          the receiver does not answer 2xx. <a href="#create">Create a webhook</a>
        </p>
        {webhooks.length === 0
          ? <p id="no-webhooks">This tenant has no webhooks.</p>
          : <WebhookTable tenant={tenant} webhooks={webhooks} />}
        <section id="create" aria-labelledby="create-heading">
          <h2 id="create-heading">Create a webhook</h2>
          <CreateWebhookForm
            tenant={tenant}
            csrf={c.get("csrf")}
            namespaces={namespaces}
            form={form}
            {...(error ? { error } : {})}
          />
        </section>
      </>,
    );
  }

  app.post("/webhooks", async (c) => {
    const tenant = c.req.param("tenant")!;
    const form = webhookFormOf(c.get("form"));
    let made: { webhook: WebhookInfo; secret: string };
    try {
      made = await createWebhook(
        deps,
        c.get("person"),
        tenant,
        () => webhookInputOf(form),
        ctxOf(c),
      );
    } catch (err) {
      if (!(err instanceof InvalidRequestError)) throw err;
      return await listPage(c, tenant, form, err);
    }
    return consolePage(
      c,
      { ...frame(tenant, made.webhook.id), title: "Webhook created", status: 201 },
      <>
        <WebhookSecret secret={made.secret} />
        <h2>Settings</h2>
        <WebhookDetails webhook={made.webhook} />
        <p>
          <a href={webhookUrls.one(tenant, made.webhook.id)}>The webhook's page</a>{" "}
          (send a test event there) · <a href={webhookUrls.list(tenant)}>All webhooks</a>
        </p>
      </>,
    );
  });

  /** One webhook's page, with a notice (a test's result, a refused deletion). */
  async function webhookPage(
    c: Context<ConsoleEnv>,
    notice?: { kind: "info" | "error"; text: string; status?: 400 },
  ): Promise<Response> {
    const tenant = c.req.param("tenant")!;
    const id = c.req.param("id")!;
    const { webhook, deliveries } = await webhookWithDeliveries(deps, c.get("person"), tenant, id);
    const csrf = c.get("csrf");
    return consolePage(
      c,
      {
        ...frame(tenant, webhook.id),
        title: `Webhook ${hostOf(webhook.url)}`,
        ...(notice?.status ? { status: notice.status } : {}),
      },
      <>
        {notice
          ? (
            <Notice kind={notice.kind}>
              <p id="webhook-notice">{notice.text}</p>
            </Notice>
          )
          : null}
        <WebhookDetails webhook={webhook} />
        <section aria-labelledby="test-heading" class="card">
          <h2 id="test-heading">Test</h2>
          <p>
            Sends a <code>webhook.test</code>{" "}
            event now, signed like every delivery: one attempt, no retries. It shows in the
            deliveries below.
          </p>
          <form method="post" action={webhookUrls.action(tenant, webhook.id, "test")}>
            <CsrfField token={csrf} />
            <button type="submit" class="secondary">Send a test event</button>
          </form>
        </section>
        <h2 id="deliveries-heading">Recent deliveries</h2>
        {deliveries.length === 0
          ? <p id="no-deliveries">No deliveries yet.</p>
          : <DeliveryTable deliveries={deliveries} />}
        <section aria-labelledby="delete-heading" class="card">
          <h2 id="delete-heading">Delete</h2>
          <p>
            Deleting stops every delivery at once, queued retries included, and drops the delivery
            log. It cannot be undone: a new webhook gets a new secret.
          </p>
          <form method="post" action={webhookUrls.action(tenant, webhook.id, "delete")}>
            <CsrfField token={csrf} />
            <ConfirmCheck id="delete-confirm">
              Delete the webhook to {hostOf(webhook.url)} now
            </ConfirmCheck>
            <button type="submit" class="danger">Delete webhook</button>
          </form>
        </section>
        <p>
          <a href={webhookUrls.list(tenant)}>All webhooks</a>
        </p>
      </>,
    );
  }

  app.get("/webhooks/:id", (c) => webhookPage(c));

  app.post("/webhooks/:id/test", async (c) => {
    const tenant = c.req.param("tenant")!;
    const d = await testWebhook(deps, c.get("person"), tenant, c.req.param("id")!, ctxOf(c));
    return await webhookPage(
      c,
      d.status === "delivered"
        ? {
          kind: "info",
          text:
            `The test event was delivered: the receiver answered ${d.response_code} in ${d.ms} ms.`,
        }
        : { kind: "error", text: `The test event was not delivered: ${d.error}` },
    );
  });

  app.post("/webhooks/:id/delete", async (c) => {
    const tenant = c.req.param("tenant")!;
    if (!confirmed(c.get("form"))) {
      return await webhookPage(c, {
        kind: "error",
        text: "Deleting needs your confirmation: tick the box, then press Delete webhook.",
        status: 400,
      });
    }
    await deleteWebhook(deps, c.get("person"), tenant, c.req.param("id")!, ctxOf(c));
    return c.redirect(webhookUrls.list(tenant), 303);
  });

  return app;
}

/** The frame of a webhook page. */
function frame(tenant: string, id?: string): PageOptions {
  return {
    title: "Webhooks",
    tenant,
    section: "webhooks",
    crumbs: id === undefined
      ? tenantCrumbs(tenant, { label: "Webhooks" })
      : tenantCrumbs(tenant, { label: "Webhooks", href: webhookUrls.list(tenant) }, { label: id }),
  };
}

/** A URL's host, for headings (the path may be a secret, as a Slack URL's is). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * The table of a tenant's webhooks: destination (a link to its page),
 * events, namespaces, format, created.
 *
 * @example
 * ```tsx
 * import { WebhookTable } from "./webhooks.tsx";
 * const w = { id: "whk_1", tenant_slug: "acme", url: "https://x.test/h", events: ["*"],
 *   namespaces: null, format: "standard" as const, description: null,
 *   created_at: "2030-01-01T00:00:00.000Z", created_by: "usr_1" };
 * const html = String(await (<WebhookTable tenant="acme" webhooks={[w]} />));
 * if (!html.includes('href="/ui/t/acme/webhooks/whk_1"') || !html.includes("all")) throw new Error(html);
 * ```
 */
export function WebhookTable(props: { tenant: string; webhooks: readonly WebhookInfo[] }) {
  return (
    <DataTable
      id="webhook-table"
      columns={["Destination", "Events", "Namespaces", { label: "Format", secondary: true }, {
        label: "Created",
        secondary: true,
      }]}
      caption={`Webhooks of ${props.tenant}`}
    >
      {props.webhooks.map((w) => (
        <tr>
          <td class="wrap">
            <a href={webhookUrls.one(props.tenant, w.id)}>{w.url}</a>
          </td>
          <td class="small wrap">{w.events.join(", ")}</td>
          <td class="small wrap">
            {w.namespaces === null ? <span class="muted">all</span> : w.namespaces.join(", ")}
          </td>
          <td class="hide-narrow small">{w.format}</td>
          <td class="hide-narrow small">
            <Time iso={w.created_at} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * One webhook's settings as a description list (never its secret).
 *
 * @example
 * ```tsx
 * import { WebhookDetails } from "./webhooks.tsx";
 * const w = { id: "whk_1", tenant_slug: "acme", url: "https://x.test/h", events: ["manifest.*"],
 *   namespaces: ["web"], format: "slack" as const, description: "ops channel",
 *   created_at: "2030-01-01T00:00:00.000Z", created_by: "usr_1" };
 * const html = String(await (<WebhookDetails webhook={w} />));
 * if (!html.includes("manifest.*") || !html.includes("ops channel") || !html.includes("slack")) throw new Error(html);
 * ```
 */
export function WebhookDetails(props: { webhook: WebhookInfo }) {
  const w = props.webhook;
  return (
    <Facts>
      <Fact label="URL" class="wrap">
        <code>{w.url}</code>
      </Fact>
      <Fact label="Events">{w.events.join(", ")}</Fact>
      <Fact label="Namespaces">
        {w.namespaces === null ? "all of the tenant's" : w.namespaces.join(", ")}
      </Fact>
      <Fact label="Format">
        {w.format === "slack" ? "slack: a one-line {text} message" : "standard: signed JSON event"}
      </Fact>
      <Fact label="Description">
        {w.description ?? <span class="muted">none</span>}
      </Fact>
      <Fact label="Id">
        <code>{w.id}</code>
      </Fact>
      <Fact label="Created">
        <Time iso={w.created_at} /> by <code>{w.created_by}</code>
      </Fact>
    </Facts>
  );
}

function StatusBadge(props: { status: WebhookDeliveryInfo["status"] }) {
  const cls = props.status === "delivered" ? "on" : props.status === "failed" ? "off" : "warn";
  return <span class={`badge ${cls}`}>{props.status}</span>;
}

/**
 * A webhook's deliveries, newest first: the event, its status (a word, not
 * only a colour), and each attempt with the receiver's answer, time and
 * error.
 *
 * @example
 * ```tsx
 * import { DeliveryTable } from "./webhooks.tsx";
 * const d = { id: "dlv_1", webhook_id: "whk_1", event_id: "01", event_type: "manifest.pushed",
 *   attempt: 2, status: "delivered" as const, response_code: 204, ms: 12, error: null,
 *   at: "2030-01-01T00:00:05.000Z", next_attempt_at: null, attempts: [
 *     { attempt: 1, at: "2030-01-01T00:00:00.000Z", response_code: 500, ms: 10, error: "the receiver answered 500" },
 *     { attempt: 2, at: "2030-01-01T00:00:05.000Z", response_code: 204, ms: 12, error: null },
 *   ] };
 * const html = String(await (<DeliveryTable deliveries={[d]} />));
 * if (!html.includes("the receiver answered 500") || !html.includes(">delivered<")) throw new Error(html);
 * ```
 */
export function DeliveryTable(props: { deliveries: readonly WebhookDeliveryInfo[] }) {
  return (
    <DataTable
      id="delivery-table"
      columns={["Event", "Status", "Attempts", { label: "Delivery", secondary: true }]}
      caption="The newest deliveries (at most 100)"
    >
      {props.deliveries.map((d) => (
        <tr>
          <td class="small wrap">
            <code>{d.event_type}</code>
          </td>
          <td>
            <StatusBadge status={d.status} />
            {d.next_attempt_at === null ? null : (
              <>
                <br />
                <span class="small muted">
                  next <Time iso={d.next_attempt_at} />
                </span>
              </>
            )}
          </td>
          <td class="small">
            {d.attempts.length === 0 ? <span class="muted">not yet</span> : (
              <ol class="attempts">
                {d.attempts.map((a) => (
                  <li>
                    <Time iso={a.at} />: {a.response_code === null ? "no answer" : a.response_code}
                    {a.ms === null ? null : ` in ${a.ms} ms`}
                    {a.error === null ? null : <span class="error">: {a.error}</span>}
                  </li>
                ))}
              </ol>
            )}
          </td>
          <td class="hide-narrow small">
            <code>{d.id}</code>
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/**
 * A new webhook's signing secret with its copy button: shown once.
 *
 * @example
 * ```tsx
 * import { WebhookSecret } from "./webhooks.tsx";
 * const html = String(await (<WebhookSecret secret="whsec_abc" />));
 * if (!html.includes('<code id="webhook-secret" class="secret">whsec_abc</code>')) throw new Error(html);
 * ```
 */
export function WebhookSecret(props: { secret: string }) {
  return (
    <section aria-labelledby="secret-heading" class="card">
      <h2 id="secret-heading">Signing secret</h2>
      <Notice>
        <p>
          <strong>Copy this secret now. You will not see it again:</strong>{" "}
          give it to the receiver, which checks each delivery's signature with it. If it is lost,
          delete the webhook and create a new one.
        </p>
      </Notice>
      <code id="webhook-secret" class="secret">{props.secret}</code>
      <button type="button" class="secondary" data-copy="webhook-secret">Copy</button>
    </section>
  );
}

/**
 * The form that creates a webhook (a plain POST to the list): URL, events,
 * namespaces, format and description; after a refusal the error is shown
 * above the fields, the field it names is marked invalid, and every field
 * keeps what was typed.
 *
 * @example
 * ```tsx
 * import { CreateWebhookForm, webhookFormOf } from "./webhooks.tsx";
 * const html = String(await (
 *   <CreateWebhookForm tenant="acme" csrf="x" namespaces={["web"]}
 *     form={webhookFormOf(new Map([["url", "https://kept.test"]]))} />
 * ));
 * if (!html.includes('value="https://kept.test"') || !html.includes("web")) throw new Error(html);
 * ```
 */
export function CreateWebhookForm(
  props: {
    tenant: string;
    csrf: string;
    namespaces: readonly string[];
    form: WebhookForm;
    error?: CfgtoolError;
  },
) {
  const f = props.form;
  const field = props.error?.details?.field;
  const control = (name: keyof WebhookForm) => ({
    id: `webhook-${name}`,
    name,
    invalid: field === name,
    describedby: [`webhook-${name}-hint`, ...(field === name ? ["webhook-error"] : [])].join(" "),
  });
  return (
    <form method="post" action={webhookUrls.list(props.tenant)} id="create-webhook">
      <CsrfField token={props.csrf} />
      <ProblemNotice id="webhook-error" message={props.error?.message} />
      <TextField
        {...control("url")}
        label="URL"
        hint="Where deliveries are posted: a public http(s) address (a Slack incoming-webhook URL with the Slack format)."
        value={f.url}
        required
        maxlength={2048}
        inputmode="url"
        spellcheck={false}
        autocomplete="off"
      />
      <TextField
        {...control("events")}
        label="Events"
        hint={
          <>
            Event types separated by commas, <code>*</code> matching anything:{" "}
            <code>manifest.*</code>, <code>change_request.*</code>, <code>token.revoked</code>,{" "}
            <code>*</code> for every event.
          </>
        }
        value={f.events}
        required
        autocomplete="off"
      />
      <TextField
        {...control("namespaces")}
        label="Namespaces (optional)"
        hint={
          <>
            Only events of these namespaces, separated by commas; empty for every event of the
            tenant. {props.namespaces.length === 0
              ? "The tenant has no namespaces yet."
              : `The tenant's namespaces: ${props.namespaces.join(", ")}.`}
          </>
        }
        value={f.namespaces}
        autocomplete="off"
      />
      <SelectField
        {...control("format")}
        label="Format"
        hint="standard: a signed JSON event (Standard Webhooks); slack: a one-line message for a Slack incoming webhook."
        choices={WEBHOOK_FORMATS}
        selected={f.format}
      />
      <TextField
        {...control("description")}
        label="Description (optional)"
        hint="A note for admins."
        value={f.description}
        maxlength={1024}
        autocomplete="off"
      />
      <button type="submit">Create webhook</button>
    </form>
  );
}
