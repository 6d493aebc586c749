/**
 * The console's service tokens of a tenant, mounted at `/ui/t/:tenant`:
 * the list of the tokens the person may see (filtered by status, type and
 * namespace with a plain GET form, paged), the creation form (only for a
 * person who may issue some type), one token's page with rotation and
 * revocation behind a confirmation, and the pages that show a new secret
 * once (answered directly, 201, never behind a redirect, never again).
 * Each page calls one function of lib/services/tokens.ts with the
 * signed-in person as principal (the one `/api/v1/tokens` calls where
 * both do the same), and renders what it returns.
 *
 * @module
 */
import { type Context, Hono } from "hono";
import type { Child } from "hono/jsx";
import { clockOf } from "../services/deps.ts";
import {
  type IssuedToken,
  issueTenantToken,
  type PublicToken,
  revokeToken,
  rotateToken,
  type TenantToken,
  tenantToken,
  type TenantTokenFilter,
  tenantTokens,
  TOKEN_TYPES,
  type TokenFormChoices,
  tokenFormChoices,
} from "../services/tokens.ts";
import { type CfgtoolError, ConflictError, InvalidRequestError, NotFoundError } from "../errors.ts";
import type { TokenStatus } from "../protocol/responses.ts";
import { requestContext } from "../http/authn.ts";
import type { AppDeps, AppEnv } from "../http/deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { ConfirmCheck, confirmed, GetForm, InlineField, Options } from "./form_fields.tsx";
import { consolePage, type PageOptions, tenantCrumbs } from "./layout.tsx";
import type { ManifestViews } from "../services/versions.ts";
import { createInputOf, type TokenForm, tokenFormOf } from "./token_form.ts";
import { CreateTokenForm, SecretPanel, TokenDetails, TokenTable } from "./token_views.tsx";
import { ui } from "./urls.ts";
import { CsrfField, Notice, Pager, ProblemNotice } from "./widgets.tsx";

const STATUSES: readonly TokenStatus[] = ["active", "revoked", "expired"];
/** The types a tenant's tokens can have (superadmin tokens belong to no tenant). */
const TENANT_TYPES = TOKEN_TYPES.filter((t) => t !== "superadmin");
const PAGE_SIZE = 25;

/**
 * The token routes, mounted at `/ui/t/:tenant`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache (not used: tokens need no manifest)
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant", tokenRoutes(deps, views));
 * ```
 */
export function tokenRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  void views;
  const now = clockOf(deps);
  const app = new Hono<ConsoleEnv>();

  // ---- the list, with the creation form ----

  app.get("/tokens", async (c) => {
    const tenant = c.req.param("tenant")!;
    const q = c.req.query();
    const asked: TenantTokenFilter = {
      status: choice(q.status, STATUSES) ?? "active",
      limit: pageSize(q.limit),
    };
    const type = choice(q.type, TENANT_TYPES);
    if (type !== undefined) asked.type = type;
    if (q.namespace) asked.namespace = q.namespace; // kept only when the tenant has it
    if (q.after && /^tok_[0-9A-Za-z]{1,40}$/.test(q.after)) asked.after = q.after;
    const { namespaces: all, filter: filters, page, choices: issue } = await tenantTokens(
      deps,
      c.get("person"),
      tenant,
      asked,
    );
    const self = (after?: string) =>
      ui.tokens(tenant, {
        status: filters.status === "active" ? undefined : filters.status,
        type: filters.type,
        namespace: filters.namespace,
        limit: q.limit && pageSize(q.limit) !== PAGE_SIZE ? String(pageSize(q.limit)) : undefined,
        after,
      });
    return consolePage(
      c,
      {
        title: "Service tokens",
        tenant,
        section: "tokens",
        crumbs: tenantCrumbs(tenant, { label: "Tokens" }),
      },
      <>
        {issue.types.length > 0
          ? (
            <p>
              <a href="#create">Create a token</a>
            </p>
          )
          : null}
        <GetForm action={ui.tokens(tenant)} label="Filter tokens" button="Filter">
          <InlineField id="filter-status" label="Status">
            <select id="filter-status" name="status">
              <Options choices={STATUSES} selected={filters.status} />
            </select>
          </InlineField>
          <InlineField id="filter-type" label="Type">
            <select id="filter-type" name="type">
              <Options choices={TENANT_TYPES} selected={filters.type} any="all types" />
            </select>
          </InlineField>
          <InlineField id="filter-namespace" label="Namespace">
            <select id="filter-namespace" name="namespace">
              <Options choices={all} selected={filters.namespace} any="all namespaces" />
            </select>
          </InlineField>
        </GetForm>
        {page.items.length === 0
          ? (
            <p id="no-tokens">
              {issue.types.length === 0 && filters.status === "active" && !filters.after
                ? "You may see no tokens here: tenant and namespace admins manage them."
                : `No ${filters.status} token matches.`}
            </p>
          )
          : <TokenTable tenant={tenant} tokens={page.items} />}
        <Pager
          label="Pages of tokens"
          first={filters.after === undefined ? undefined : self()}
          next={page.next === null ? undefined : self(page.next)}
          firstText="First page"
          nextText="Next page"
        />
        {issue.types.length === 0 ? null : (
          <section id="create" aria-labelledby="create-heading">
            <h2 id="create-heading">Create a token</h2>
            <CreateTokenForm
              tenant={tenant}
              csrf={c.get("csrf")}
              types={issue.types}
              namespaces={issue.namespaces}
              form={tokenFormOf(new Map())}
            />
          </section>
        )}
      </>,
    );
  });

  app.post("/tokens", async (c) => {
    const tenant = c.req.param("tenant")!;
    const person = c.get("person");
    const form = tokenFormOf(c.get("form"));
    let made: IssuedToken;
    try {
      made = await issueTenantToken(
        deps,
        person,
        tenant,
        () => createInputOf(tenant, form, now()),
        requestContext(c as unknown as Context<AppEnv>),
      );
    } catch (err) {
      if (!refusedInput(err)) throw err;
      return formAgain(c, tenant, await tokenFormChoices(deps, person, tenant), form, err);
    }
    return consolePage(
      c,
      { ...tokenPageOptions(tenant, made.token.name), title: "Token created", status: 201 },
      <>
        <SecretPanel secret={made.secret} />
        <IssuanceWarnings warnings={made.warnings} />
        <h2>Details</h2>
        <TokenDetails tenant={tenant} token={made.token} />
        <p>
          <a href={ui.token(tenant, made.token.id)}>The token's page</a> ·{" "}
          <a href={ui.tokens(tenant)}>All tokens</a>
        </p>
      </>,
    );
  });

  /** The creation form alone, with the refusal and the person's input. */
  function formAgain(
    c: Context<ConsoleEnv>,
    tenant: string,
    issue: TokenFormChoices,
    form: TokenForm,
    error: CfgtoolError,
  ): Promise<Response> {
    return consolePage(
      c,
      {
        title: "Create a token",
        tenant,
        section: "tokens",
        status: error.status as NonNullable<PageOptions["status"]>,
        crumbs: tenantCrumbs(
          tenant,
          { label: "Tokens", href: ui.tokens(tenant) },
          { label: "Create" },
        ),
      },
      <CreateTokenForm
        tenant={tenant}
        csrf={c.get("csrf")}
        types={issue.types}
        namespaces={issue.namespaces}
        form={form}
        error={error}
      />,
    );
  }

  // ---- one token ----

  /** The token of the path as its page shows it, the person allowed `needs` when given. */
  function tokenOf(
    c: Context<ConsoleEnv>,
    needs?: "token.rotate" | "token.revoke",
  ): Promise<TenantToken> {
    return tenantToken(deps, c.get("person"), c.req.param("tenant")!, c.req.param("id")!, needs);
  }

  app.get("/tokens/:id", async (c) => {
    return tokenPage(c, await tokenOf(c));
  });

  /** A token's page: its details, and rotation and revocation when allowed. */
  function tokenPage(
    c: Context<ConsoleEnv>,
    shown: TenantToken,
    refusal?: { action: "rotate" | "revoke"; message: string },
  ): Promise<Response> {
    const tenant = c.req.param("tenant")!;
    const { token, may: { rotate, revoke } } = shown;
    const csrf = c.get("csrf");
    const problem = (action: "rotate" | "revoke") =>
      refusal?.action === action ? refusal.message : undefined;
    return consolePage(
      c,
      {
        ...tokenPageOptions(tenant, token.name),
        title: `Token ${token.name}`,
        ...(refusal ? { status: 400 as const } : {}),
      },
      <>
        {token.status === "revoked"
          ? (
            <Notice>
              <p>This token is revoked: every request with its secret is refused.</p>
            </Notice>
          )
          : token.status === "expired"
          ? (
            <Notice>
              <p>This token has expired: every request with its secret is refused.</p>
            </Notice>
          )
          : token.rotated_to_token_id !== null
          ? (
            <Notice>
              <p>
                This token was rotated to{" "}
                <a href={ui.token(tenant, token.rotated_to_token_id)}>its replacement</a>. Its
                secret keeps working until you revoke it: revoke it once every consumer uses the new
                secret.
              </p>
            </Notice>
          )
          : null}
        <TokenDetails tenant={tenant} token={token} />
        {rotate
          ? (
            <TokenAction
              tenant={tenant}
              token={token}
              action="rotate"
              heading="Rotate"
              confirm={`Make a new secret for ${token.name}`}
              button="Rotate token"
              csrf={csrf}
              problem={problem("rotate")}
            >
              Rotating makes a replacement token with a new secret, shown once: the same name, type
              and binding, {token.expires_at === null
                ? "and no expiry"
                : "expiring after the same lifetime, counted from now"}. The old secret keeps
              working until you revoke this token, so a consumer can switch without downtime:
              rotate, give it the new secret, check that it works, then revoke this token.
            </TokenAction>
          )
          : null}
        {revoke
          ? (
            <TokenAction
              tenant={tenant}
              token={token}
              action="revoke"
              heading="Revoke"
              confirm={`Revoke ${token.name} now`}
              button="Revoke token"
              danger
              csrf={csrf}
              problem={problem("revoke")}
            >
              Revoking takes effect at once and cannot be undone: every request with this token's
              secret is refused (401) from then on, and event streams opened with it end.
            </TokenAction>
          )
          : null}
        <p>
          <a href={ui.tokens(tenant)}>All tokens</a>
        </p>
      </>,
    );
  }

  app.post("/tokens/:id/rotate", async (c) => {
    const tenant = c.req.param("tenant")!;
    const id = c.req.param("id")!;
    if (!confirmed(c.get("form"))) {
      return tokenPage(c, await tokenOf(c, "token.rotate"), {
        action: "rotate",
        message: "Rotating needs your confirmation: tick the box, then press Rotate token.",
      });
    }
    const made = await rotateToken(
      deps,
      c.get("person"),
      { tenant, id },
      {},
      requestContext(c as unknown as Context<AppEnv>),
    );
    return consolePage(
      c,
      { ...tokenPageOptions(tenant, made.token.name), title: "Token rotated", status: 201 },
      <>
        <SecretPanel secret={made.secret} />
        <IssuanceWarnings warnings={made.warnings} />
        <Notice>
          <p>
            The old token's secret keeps working until you revoke it. Give the consumer this new
            secret, check that it works, then{" "}
            <a href={ui.token(tenant, id)}>revoke the old token</a>.
          </p>
        </Notice>
        <h2>Details of the replacement</h2>
        <TokenDetails tenant={tenant} token={made.token} />
        <p>
          <a href={ui.token(tenant, made.token.id)}>The replacement's page</a> ·{" "}
          <a href={ui.tokens(tenant)}>All tokens</a>
        </p>
      </>,
    );
  });

  app.post("/tokens/:id/revoke", async (c) => {
    const tenant = c.req.param("tenant")!;
    const id = c.req.param("id")!;
    if (!confirmed(c.get("form"))) {
      return tokenPage(c, await tokenOf(c, "token.revoke"), {
        action: "revoke",
        message: "Revoking needs your confirmation: tick the box, then press Revoke token.",
      });
    }
    // this process's streams of the token end before the answer (the service tells the runtime)
    await revokeToken(
      deps,
      c.get("person"),
      { tenant, id },
      requestContext(c as unknown as Context<AppEnv>),
    );
    return c.redirect(ui.token(tenant, id), 303);
  });

  return app;
}

/** The frame of a page about one token. */
function tokenPageOptions(tenant: string, name: string): PageOptions {
  return {
    title: name,
    tenant,
    section: "tokens",
    crumbs: tenantCrumbs(tenant, { label: "Tokens", href: ui.tokens(tenant) }, { label: name }),
  };
}

/**
 * A destructive action on a token (rotate, revoke): what it does (the
 * children), the refusal of an unconfirmed post, and its form with the
 * required confirmation box.
 */
function TokenAction(
  props: {
    tenant: string;
    token: PublicToken;
    action: "rotate" | "revoke";
    heading: string;
    /** The confirmation box's label. */
    confirm: string;
    button: string;
    danger?: boolean;
    csrf: string;
    problem: string | undefined;
    children: Child;
  },
) {
  const { action } = props;
  return (
    <section aria-labelledby={`${action}-heading`} class="card">
      <h2 id={`${action}-heading`}>{props.heading}</h2>
      <p>{props.children}</p>
      <ProblemNotice id={`${action}-error`} message={props.problem} />
      <form method="post" action={ui.tokenAction(props.tenant, props.token.id, action)}>
        <CsrfField token={props.csrf} />
        <ConfirmCheck id={`${action}-confirm`}>{props.confirm}</ConfirmCheck>
        <button type="submit" class={props.danger ? "danger" : undefined}>{props.button}</button>
      </form>
    </section>
  );
}

/** A refusal of what the person typed: shown with the form again, their input kept. */
function refusedInput(err: unknown): err is CfgtoolError {
  return err instanceof InvalidRequestError || err instanceof ConflictError ||
    (err instanceof NotFoundError && err.code === "namespace_not_found");
}

/** A query value that must be one of `allowed`; anything else is no filter. */
function choice<T extends string>(value: string | undefined, allowed: readonly T[]): T | undefined {
  return (allowed as readonly string[]).includes(value ?? "") ? value as T : undefined;
}

/** The page size asked for (`?limit=`, 1 to 100), else the default. */
function pageSize(value: string | undefined): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= 100 ? n : PAGE_SIZE;
}

/** What the service warns about a token it issued (an environment that is not public). */
function IssuanceWarnings(props: { warnings: readonly { message: string }[] | undefined }) {
  if (props.warnings === undefined || props.warnings.length === 0) return null;
  return (
    <Notice kind="error">
      {props.warnings.map((w) => <p class="warning">{w.message}</p>)}
    </Notice>
  );
}
