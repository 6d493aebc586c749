/**
 * The people of a tenant (`/ui/t/:tenant/people`): everyone who signed in
 * to it and everyone on one of its admin lists, a page at a time
 * (`?after=`), with their last sign-in, its method and their roles, for
 * those who may list them (`user.list`), each row with the changes the
 * reader may make to that person's roles (make them a tenant admin or an
 * admin of a namespace, remove a role after a confirmation page); its
 * tenant admins and the admins of each namespace, with forms to add one by
 * email and to remove one; and the tenant's login policy, read-only. The
 * page is one call of the people service (`tenantPeople`,
 * lib/services/people.ts), which authorises each part as its API route is
 * and reads the lists through the same service functions; every change
 * goes through the same services as the API (lib/services/tenants.ts,
 * namespaces.ts), which refuse it again whatever the page showed.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { CfgtoolError, ForbiddenError, InvalidRequestError } from "../errors.ts";
import { addNamespaceAdmin, removeNamespaceAdmin } from "../services/namespaces.ts";
import {
  type Admin,
  adminToRemove,
  type NamespaceAdmins,
  type PeopleQuery,
  type PersonRole,
  tenantPeople,
  type TenantPerson,
} from "../services/people.ts";
import { addTenantAdmin, type Membership, removeTenantAdmin } from "../services/tenants.ts";
import type { AppDeps } from "../http/deps.ts";
import { SHAPES, userRefField } from "../http/params.ts";
import type { ConsoleEnv } from "./env.ts";
import { CONFIRM_FIELD, confirmed, InlineField } from "./form_fields.tsx";
import { consolePage, tenantCrumbs } from "./layout.tsx";
import { LoginPolicyView } from "./login_policy_view.tsx";
import type { ManifestViews } from "../services/versions.ts";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, Notice, Pager, Time } from "./widgets.tsx";

/** A refused add, shown on the form it came from with the input kept. */
interface Refused {
  /** The namespace of the form, or null for the tenant-admin form. */
  namespace: string | null;
  email: string;
  message: string;
}

/** A page-level message: a change done, or one that could not be. */
interface PageNotice {
  kind: "info" | "error";
  text: string;
}

/**
 * The people routes, mounted at `/ui/t/:tenant`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache (not needed here)
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant", peopleRoutes(deps, views));
 * ```
 */
export function peopleRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  void views;
  const app = new Hono<ConsoleEnv>();

  app.get("/people", async (c) => {
    const tenant = c.req.param("tenant")!;
    const remove = c.req.query("remove");
    if (remove !== undefined) {
      return await confirmRemove(c, tenant, remove, c.req.query("namespace") ?? "");
    }
    const after = c.req.query("after");
    if (after !== undefined && after !== "" && !SHAPES.email.pattern.test(after)) {
      throw new InvalidRequestError("This page of people does not exist: go to the first page");
    }
    return await peoplePage(c, tenant, { done: doneOf(c), after: after || undefined });
  });

  app.post("/people/add", async (c) => {
    const tenant = c.req.param("tenant")!;
    const form = c.get("form");
    const person = c.get("person");
    const email = (form.get("email") ?? "").trim();
    const namespace = scopeOf(form.get("namespace"));
    // A person's row names them by id; the add forms by the email typed in.
    const userId = form.get("user_id");
    if (userId !== undefined && !SHAPES.userId.pattern.test(userId)) {
      throw new InvalidRequestError("This form names no person: reload the people page");
    }
    const ref = () => {
      if (userId !== undefined) return userId;
      if (email === "") {
        throw new InvalidRequestError("Enter the email of the person to add");
      }
      return userRefField({ user_id: email });
    };
    let member: Membership;
    try {
      member = namespace === null
        ? await addTenantAdmin(deps, person, tenant, ref, { requestId: c.get("requestId") })
        : await addNamespaceAdmin(deps, person, tenant, namespace, ref, {
          requestId: c.get("requestId"),
        });
    } catch (err) {
      if (!refusedChange(err)) throw err;
      if (userId !== undefined) {
        return await peoplePage(c, tenant, {
          notice: { kind: "error", text: err.message },
          status: err.status as 400,
        });
      }
      // The same words for an address with no account and for another tenant's person.
      const message = err.code === "user_not_found"
        ? `Nobody has signed in as ${email} yet (to ${tenant}). ` +
          `Ask them to sign in to ${tenant}, then add them.`
        : err.message;
      return await peoplePage(c, tenant, {
        refused: { namespace, email, message },
        status: err.status as 400,
      });
    }
    return c.redirect(
      ui.people(tenant, { done: "added", user: member.user_id, namespace: namespace ?? undefined }),
      303,
    );
  });

  app.post("/people/remove", async (c) => {
    const tenant = c.req.param("tenant")!;
    const form = c.get("form");
    const userId = form.get("user_id") ?? "";
    const namespace = scopeOf(form.get("namespace"));
    if (!SHAPES.userId.pattern.test(userId)) {
      throw new InvalidRequestError("This form names no admin: reload the people page");
    }
    if (!confirmed(form)) {
      return await confirmRemove(c, tenant, userId, namespace ?? "");
    }
    const person = c.get("person");
    try {
      const ctx = { requestId: c.get("requestId") };
      if (namespace === null) await removeTenantAdmin(deps, person, tenant, userId, ctx);
      else await removeNamespaceAdmin(deps, person, tenant, namespace, userId, ctx);
    } catch (err) {
      if (!refusedChange(err)) throw err;
      return await peoplePage(c, tenant, {
        notice: { kind: "error", text: err.message },
        status: err.status as 400,
      });
    }
    return c.redirect(
      ui.people(tenant, { done: "removed", user: userId, namespace: namespace ?? undefined }),
      303,
    );
  });

  /** The namespace a form names (null: the tenant); 400 for one of a bad shape. */
  function scopeOf(value: string | undefined): string | null {
    if (value === undefined || value === "") return null;
    if (!SHAPES.slug.pattern.test(value)) {
      throw new InvalidRequestError("This form names no namespace: reload the people page");
    }
    return value;
  }

  /** The change `?done=added|removed&user=…&namespace=…` names, if any. */
  function doneOf(c: Context<ConsoleEnv>): Done | undefined {
    const done = c.req.query("done");
    const user = c.req.query("user") ?? "";
    if ((done !== "added" && done !== "removed") || !SHAPES.userId.pattern.test(user)) {
      return undefined;
    }
    return { done, user, namespace: c.req.query("namespace") };
  }

  async function peoplePage(
    c: Context<ConsoleEnv>,
    tenant: string,
    extra: {
      done?: Done | undefined;
      notice?: PageNotice;
      refused?: Refused;
      status?: 400 | 404 | 409;
      /** The people page's cursor (`?after=`). */
      after?: string | undefined;
    },
  ): Promise<Response> {
    const done = extra.done;
    const query: PeopleQuery = done === undefined
      ? {}
      : { changed: { user: done.user, namespace: done.namespace } };
    if (extra.after !== undefined) query.page = { after: extra.after };
    const model = await tenantPeople(deps, c.get("person"), tenant, query);
    const notice = extra.notice ?? doneNotice(tenant, done, model.changed);
    const csrf = c.get("csrf");
    const refused = extra.refused;
    return consolePage(
      c,
      {
        title: "People",
        tenant,
        section: "people",
        crumbs: tenantCrumbs(tenant, { label: "People" }),
        ...(extra.status === undefined ? {} : { status: extra.status }),
      },
      <>
        {notice === undefined ? null : <Notice kind={notice.kind}>{notice.text}</Notice>}
        {refused === undefined ? null : (
          <Notice kind="error">
            <p>
              <a href={`#${addFieldId(refused.namespace)}`}>
                {refused.namespace === null
                  ? "Could not add a tenant admin"
                  : `Could not add an admin of ${refused.namespace}`}
              </a>: {refused.message}
            </p>
          </Notice>
        )}
        <h2 id="people">People of {tenant}</h2>
        {model.people === null ? <NoPeopleList tenant={tenant} /> : (
          <PeopleTable
            tenant={tenant}
            people={model.people.items}
            mayChangeTenantAdmins={model.mayChangeTenantAdmins}
            namespaces={model.namespaces}
            csrf={csrf}
            self={c.get("person").user_id}
          />
        )}
        {model.people === null ? null : (
          <Pager
            label="Pages of people"
            first={extra.after === undefined ? undefined : ui.people(tenant)}
            next={model.people.next === null
              ? undefined
              : ui.people(tenant, { after: model.people.next })}
            firstText="First page"
            nextText="Next page"
          />
        )}

        <h2 id="tenant-admins">Tenant admins</h2>
        <p class="small muted">
          They manage {tenant}: its namespaces, tokens, people and login policy.
        </p>
        <AdminTable
          tenant={tenant}
          namespace={null}
          admins={model.tenantAdmins}
          mayChange={model.mayChangeTenantAdmins}
          self={c.get("person").user_id}
        />
        {model.mayChangeTenantAdmins
          ? (
            <AddForm
              tenant={tenant}
              namespace={null}
              csrf={csrf}
              refused={refused?.namespace === null ? refused : undefined}
            />
          )
          : null}

        <h2 id="namespace-admins">Namespace admins</h2>
        <p class="small muted">
          They push to their namespace, roll it back and manage its tokens.
        </p>
        {model.namespaces.length === 0 ? <p>No namespace you can read in {tenant}.</p> : null}
        {model.namespaces.map((ns) => (
          <section aria-labelledby={`ns-${ns.slug}`}>
            <h3 id={`ns-${ns.slug}`}>
              <a href={ui.namespace(tenant, ns.slug)}>{ns.slug}</a>
            </h3>
            <AdminTable
              tenant={tenant}
              namespace={ns.slug}
              admins={ns.admins}
              mayChange={ns.mayChange}
              self={c.get("person").user_id}
            />
            {ns.mayChange
              ? (
                <AddForm
                  tenant={tenant}
                  namespace={ns.slug}
                  csrf={csrf}
                  refused={refused?.namespace === ns.slug ? refused : undefined}
                />
              )
              : null}
          </section>
        ))}

        <h2 id="login-policy">How people sign in</h2>
        {model.policy === "hidden"
          ? <p>Only the admins of {tenant} can read its login policy.</p>
          : model.policy === null
          ? (
            <>
              <p>
                {tenant} has no login policy yet: nobody can sign in to it. Set one here, or with
                {" "}
                <code>cfgtool tenant login set {tenant}</code>.
              </p>
              <p class="actions">
                <a class="button" href={ui.loginPolicy(tenant)}>Set how people sign in</a>
              </p>
            </>
          )
          : (
            <>
              <LoginPolicyView record={model.policy} updatedBy={model.policySetBy} />
              <p class="actions">
                <a class="button secondary" href={ui.loginPolicy(tenant)}>
                  Change how people sign in
                </a>
              </p>
              <p class="small muted">
                Or with{" "}
                <code>cfgtool tenant login set {tenant}</code>. A new policy applies from the next
                sign-in.
              </p>
            </>
          )}
      </>,
    );
  }

  async function confirmRemove(
    c: Context<ConsoleEnv>,
    tenant: string,
    userId: string,
    nsText: string,
  ): Promise<Response> {
    const person = c.get("person");
    const namespace = scopeOf(nsText);
    const email = await adminToRemove(deps, person, tenant, namespace, userId);
    const role = namespace === null
      ? `tenant admin of ${tenant}`
      : `admin of namespace ${namespace}`;
    const loses = namespace === null
      ? `managing ${tenant}: its namespaces, tokens, people and login policy`
      : `pushing to ${namespace}, rolling it back and managing its tokens`;
    return consolePage(
      c,
      {
        title: "Remove an admin",
        tenant,
        section: "people",
        crumbs: tenantCrumbs(
          tenant,
          { label: "People", href: ui.people(tenant) },
          { label: "Remove an admin" },
        ),
      },
      <div class="card">
        <p>
          Remove <strong class="wrap">{email}</strong> as {role}?
        </p>
        <p>
          From their next request they can no longer do what the role gave them:{" "}
          {loses}. They stay signed in and keep any other role (a person signed in to {tenant}{" "}
          still reads it). You can add them again later.
        </p>
        {userId === person.user_id
          ? (
            <Notice kind="error">
              <p>This is you: you lose this role yourself, at once.</p>
            </Notice>
          )
          : null}
        <form method="post" action={ui.peopleChange(tenant, "remove")} class="inline">
          <CsrfField token={c.get("csrf")} />
          <input type="hidden" name="user_id" value={userId} />
          {namespace === null ? null : <input type="hidden" name="namespace" value={namespace} />}
          <input type="hidden" name={CONFIRM_FIELD} value="yes" />
          <div>
            <button type="submit" class="danger">Remove {role}</button>
          </div>
          <div>
            <a class="button secondary" href={ui.people(tenant)}>Cancel</a>
          </div>
        </form>
      </div>,
    );
  }

  return app;
}

/**
 * A change the services refused for what the form asked (no such person,
 * already an admin, the last admin, …): shown on the page. A refusal of
 * the person themselves (403) is the console's error page, as anywhere.
 */
function refusedChange(err: unknown): err is CfgtoolError {
  return err instanceof CfgtoolError && !(err instanceof ForbiddenError);
}

/** A change to an admin list that the page's address reports (`?done=…`). */
interface Done {
  done: "added" | "removed";
  user: string;
  /** The namespace whose list changed; none (or "") for the tenant's. */
  namespace: string | undefined;
}

/**
 * The notice of a change the reader just made, naming the person as the
 * people service does (`changed`: undefined when the reader may not make
 * that change, and then there is no notice).
 */
function doneNotice(
  tenant: string,
  done: Done | undefined,
  name: string | undefined,
): PageNotice | undefined {
  if (done === undefined || name === undefined) return undefined;
  const ns = done.namespace;
  const role = ns ? `an admin of namespace ${ns}` : `a tenant admin of ${tenant}`;
  return {
    kind: "info",
    text: done.done === "added" ? `${name} is ${role}.` : `${name} is no longer ${role}.`,
  };
}

/** The id of an add form's email field. */
function addFieldId(namespace: string | null): string {
  return namespace === null ? "add-tenant-admin" : `add-admin-${namespace}`;
}

function AdminTable(
  props: {
    tenant: string;
    namespace: string | null;
    admins: Admin[];
    mayChange: boolean;
    self: string;
  },
) {
  const { tenant, namespace } = props;
  if (props.admins.length === 0) {
    return <p class="muted">{namespace === null ? "No tenant admin." : "No admin."}</p>;
  }
  const what = namespace === null ? "tenant admin" : `admin of ${namespace}`;
  return (
    <DataTable
      columns={[
        "Person",
        { label: "Admin since", secondary: true },
        ...(props.mayChange ? ["Change"] : []),
      ]}
      caption={namespace === null
        ? `Tenant admins of ${tenant}`
        : `Admins of namespace ${namespace}`}
      captionHidden
    >
      {props.admins.map((a) => (
        <tr>
          <td class="wrap">
            {a.email === "" ? <code>{a.user_id}</code> : a.email}
            {a.user_id === props.self
              ? (
                <>
                  {" "}
                  <span class="small muted">(you)</span>
                </>
              )
              : null}
          </td>
          <td class="hide-narrow">
            <Time iso={a.added_at} />
          </td>
          {props.mayChange
            ? (
              <td>
                <a
                  class="button secondary"
                  href={ui.people(tenant, {
                    remove: a.user_id,
                    namespace: namespace ?? undefined,
                  })}
                >
                  Remove<span class="sr-only">{` ${a.email || a.user_id} as ${what}`}</span>…
                </a>
              </td>
            )
            : null}
        </tr>
      ))}
    </DataTable>
  );
}

function AddForm(
  props: { tenant: string; namespace: string | null; csrf: string; refused?: Refused | undefined },
) {
  const { tenant, namespace, refused } = props;
  const id = addFieldId(namespace);
  const hint = `${id}-hint`;
  const problem = `${id}-problem`;
  const label = namespace === null ? "Add a tenant admin" : `Add an admin of ${namespace}`;
  return (
    <form method="post" action={ui.peopleChange(tenant, "add")} class="inline">
      <CsrfField token={props.csrf} />
      {namespace === null ? null : <input type="hidden" name="namespace" value={namespace} />}
      <InlineField
        id={id}
        label={`${label} (email)`}
        problem={refused?.message}
      >
        <input
          id={id}
          type="email"
          name="email"
          required
          autocomplete="off"
          value={refused?.email ?? ""}
          aria-describedby={refused === undefined ? hint : `${problem} ${hint}`}
          aria-invalid={refused === undefined ? undefined : "true"}
        />
      </InlineField>
      <div>
        <button type="submit">Add</button>
      </div>
      <p id={hint} class="small muted fill">
        The person must have signed in to {tenant}{" "}
        before you add them (people exist after their first sign-in), or already be an admin of{" "}
        {tenant} or of one of its namespaces.
      </p>
    </form>
  );
}

/** What a reader who may not list the tenant's people reads instead. */
function NoPeopleList(props: { tenant: string }) {
  const { tenant } = props;
  return (
    <p>
      Only the admins of {tenant} can list its people. Everyone who signs in to {tenant}{" "}
      reads it; see{" "}
      <a href={ui.audit(tenant, { type: "login.succeeded" })}>the sign-ins in the audit log</a>.
    </p>
  );
}

/** A role as the page names it. */
function roleText(r: PersonRole): string {
  switch (r.role) {
    case "tenant_admin":
      return r.via === "list"
        ? "tenant admin"
        : `tenant admin (group${r.groups.length > 1 ? "s" : ""} ${r.groups.join(", ")})`;
    case "namespace_admin":
      return `admin of ${r.namespace}`;
    case "member":
      return "member";
  }
}

const METHODS: Record<string, string> = {
  oidc: "OpenID Connect",
  saml: "SAML",
  email: "email",
  admin: "server host",
  operator: "operator link",
};

const CLIENTS: Record<string, string> = { browser: "browser", cli: "command line" };

/**
 * The tenant's people, each with their roles and last sign-in, and, for a
 * reader who may change a list, what they may change of that person's
 * roles (in a disclosure: the row stays one line at 390 px).
 */
function PeopleTable(
  props: {
    tenant: string;
    people: TenantPerson[];
    mayChangeTenantAdmins: boolean;
    namespaces: NamespaceAdmins[];
    csrf: string;
    self: string;
  },
) {
  const { tenant, people } = props;
  const changeable = props.namespaces.filter((ns) => ns.mayChange).map((ns) => ns.slug);
  const mayChange = props.mayChangeTenantAdmins || changeable.length > 0;
  const signIns = (
    <a href={ui.audit(tenant, { type: "login.succeeded" })}>the sign-ins in the audit log</a>
  );
  return (
    <>
      <p class="small muted">
        Everyone who has signed in to{" "}
        {tenant}, and everyone on one of its admin lists, with their last sign-in ({signIns}).
      </p>
      {people.length === 0 ? <p>Nobody yet.</p> : (
        <DataTable
          columns={[
            "Person",
            "Roles",
            "Last sign-in",
            { label: "First sign-in", secondary: true },
            ...(mayChange ? ["Change"] : []),
          ]}
          caption={`People of ${tenant}`}
          captionHidden
        >
          {people.map((p, i) => (
            <tr>
              <td class="wrap">
                {p.email}
                {p.id === props.self
                  ? (
                    <>
                      {" "}
                      <span class="small muted">(you)</span>
                    </>
                  )
                  : null}
              </td>
              <td>{p.roles.map(roleText).join(", ")}</td>
              <td>
                {p.last_sign_in_at === null ? <span class="muted">never, to {tenant}</span> : (
                  <>
                    <Time iso={p.last_sign_in_at} />
                    <br />
                    <span class="small muted">
                      {METHODS[p.last_sign_in_method ?? ""] ?? p.last_sign_in_method},{" "}
                      {CLIENTS[p.last_sign_in_client ?? ""] ?? p.last_sign_in_client}
                    </span>
                  </>
                )}
              </td>
              <td class="hide-narrow">
                {p.first_sign_in_at === null ? null : <Time iso={p.first_sign_in_at} />}
              </td>
              {mayChange
                ? (
                  <td>
                    <RoleChanges
                      tenant={tenant}
                      person={p}
                      row={i}
                      mayChangeTenantAdmins={props.mayChangeTenantAdmins}
                      namespaces={changeable}
                      csrf={props.csrf}
                    />
                  </td>
                )
                : null}
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}

/**
 * The changes a reader may make to one person's roles: make them a tenant
 * admin, or remove that role (after the confirmation page); make them an
 * admin of one of the namespaces whose list the reader may change, or
 * remove them from one. Plain forms and links: no script needed.
 */
function RoleChanges(
  props: {
    tenant: string;
    person: TenantPerson;
    row: number;
    mayChangeTenantAdmins: boolean;
    namespaces: string[];
    csrf: string;
  },
) {
  const { tenant, person, row } = props;
  const who = person.email;
  const listed = person.roles.some((r) => r.role === "tenant_admin" && r.via === "list");
  const adminOf = new Set(
    person.roles.flatMap((r) => r.role === "namespace_admin" ? [r.namespace] : []),
  );
  const addable = props.namespaces.filter((ns) => !adminOf.has(ns));
  const removable = props.namespaces.filter((ns) => adminOf.has(ns));
  const selectId = `make-ns-${row}`;
  return (
    <details class="role-changes">
      <summary>
        Roles<span class="sr-only">{` of ${who}`}</span>
      </summary>
      {props.mayChangeTenantAdmins
        ? listed
          ? (
            <p>
              <a href={ui.people(tenant, { remove: person.id })}>
                Remove as tenant admin<span class="sr-only">{`: ${who}`}</span>…
              </a>
            </p>
          )
          : (
            <form method="post" action={ui.peopleChange(tenant, "add")}>
              <CsrfField token={props.csrf} />
              <input type="hidden" name="user_id" value={person.id} />
              <button type="submit" class="secondary">
                Make tenant admin<span class="sr-only">{`: ${who}`}</span>
              </button>
            </form>
          )
        : null}
      {removable.map((ns) => (
        <p>
          <a href={ui.people(tenant, { remove: person.id, namespace: ns })}>
            Remove as admin of {ns}
            <span class="sr-only">{`: ${who}`}</span>…
          </a>
        </p>
      ))}
      {addable.length === 0
        ? null
        : (
          <form method="post" action={ui.peopleChange(tenant, "add")} class="inline">
            <CsrfField token={props.csrf} />
            <input type="hidden" name="user_id" value={person.id} />
            <div>
              <label for={selectId}>
                Namespace<span class="sr-only">{` for ${who}`}</span>
              </label>
              <select id={selectId} name="namespace">
                {addable.map((ns) => <option value={ns}>{ns}</option>)}
              </select>
            </div>
            <div>
              <button type="submit" class="secondary">
                Make admin<span class="sr-only">{` of the namespace: ${who}`}</span>
              </button>
            </div>
          </form>
        )}
    </details>
  );
}
