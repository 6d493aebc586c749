/**
 * The console's home pages: `/ui` (the tenants the person signed in to, or
 * straight into the only one; for an operator, every tenant and a form
 * that creates one), and a tenant's namespaces with their
 * environments, head version and last change, each environment linking to
 * its flags.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  createNamespace,
  deleteNamespace,
  getNamespace,
  mayManageNamespaces,
  namespaceSummaries,
} from "../services/namespaces.ts";
import type { NamespaceRef } from "../services/versions.ts";
import {
  createTenant,
  homeTenants,
  listAllTenants,
  type TenantRecord,
} from "../services/tenants.ts";
import { CfgtoolError, ForbiddenError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { Field } from "./form_fields.tsx";
import { consolePage, namespaceCrumbs, tenantCrumbs } from "./layout.tsx";
import { consoleRequest, namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, Notice, ProblemNotice, Time } from "./widgets.tsx";

const NAMESPACE_COLUMNS = [
  "Namespace",
  "Environments",
  "Version",
  { label: "Last change", secondary: true },
] as const;

/**
 * The home routes, mounted at `/ui`.
 *
 * @param deps the app dependencies
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/", homeRoutes(deps));
 * ```
 */
export function homeRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/", async (c) => {
    const home = await homeTenants(deps, c.get("person"));
    if (home.kind === "all") return tenantsPage(c, home.tenants);
    const slugs = home.slugs;
    if (slugs.length === 1) return c.redirect(ui.tenant(slugs[0]!), 303);
    return consolePage(
      c,
      { title: "Tenants" },
      slugs.length === 0 ? <p>This sign-in admits you to no tenant.</p> : (
        <ul>
          {slugs.map((t) => (
            <li>
              <a href={ui.tenant(t)}>{t}</a>
            </li>
          ))}
        </ul>
      ),
    );
  });

  /** Every tenant, and the form that creates one (operators: superadmin rights). */
  function tenantsPage(
    c: Context<ConsoleEnv>,
    tenants: TenantRecord[],
    problem?: { message: string; slug: string; description: string },
  ) {
    return consolePage(
      c,
      { title: "Tenants", section: "tenants", ...(problem ? { status: 400 as const } : {}) },
      <>
        <ProblemNotice message={problem?.message} />
        {tenants.length === 0 ? <p>No tenant yet.</p> : (
          <DataTable
            columns={["Tenant", { label: "Description", secondary: true }, "Created"]}
          >
            {tenants.map((t) => (
              <tr>
                <td class="wrap">
                  <a href={ui.tenant(t.slug)}>{t.slug}</a>
                </td>
                <td class="hide-narrow wrap">{t.description ?? ""}</td>
                <td>
                  <Time iso={t.created_at} />
                </td>
              </tr>
            ))}
          </DataTable>
        )}
        <h2>Create a tenant</h2>
        <form method="post" action={ui.tenants()} class="card">
          <CsrfField token={c.get("csrf")} />
          <Field
            id="tenant-slug"
            label="Slug"
            hint={
              <>
                Lower-case letters, digits, dots, dashes; it appears in every URL and token binding.
              </>
            }
          >
            <input
              id="tenant-slug"
              type="text"
              name="slug"
              required
              value={problem?.slug ?? ""}
              pattern="[a-z0-9][a-z0-9._\-]{0,62}"
              aria-describedby="tenant-slug-hint"
            />
          </Field>
          <Field id="tenant-description" label="Description">
            <input
              id="tenant-description"
              type="text"
              name="description"
              value={problem?.description ?? ""}
            />
          </Field>
          <button type="submit">Create tenant</button>
        </form>
      </>,
    );
  }

  app.post("/tenants", async (c) => {
    const form = c.get("form");
    const slug = (form.get("slug") ?? "").trim();
    const description = (form.get("description") ?? "").trim();
    try {
      await createTenant(deps, c.get("person"), () => ({
        slug,
        ...(description === "" ? {} : { description }),
      }), { requestId: c.get("requestId") });
    } catch (err) {
      if (err instanceof CfgtoolError && (err.status === 400 || err.status === 409)) {
        const tenants = await listAllTenants(deps, c.get("person"));
        return tenantsPage(c, tenants, { message: err.message, slug, description });
      }
      throw err;
    }
    return c.redirect(ui.tenant(slug), 303);
  });

  app.get("/tenants", async (c) => {
    return tenantsPage(c, await listAllTenants(deps, c.get("person")));
  });

  app.get("/t/:tenant", (c) => namespacesPage(c, c.req.param("tenant")));

  /** A tenant's namespaces, and for its admins the form that creates one. */
  async function namespacesPage(
    c: Context<ConsoleEnv>,
    tenant: string,
    problem?: { message: string; slug: string; description: string },
  ) {
    const person = c.get("person");
    const [rows, manage] = await Promise.all([
      namespaceSummaries(deps, person, tenant),
      mayManageNamespaces(deps, person, tenant),
    ]);
    return consolePage(
      c,
      {
        title: "Namespaces",
        tenant,
        section: "namespaces",
        crumbs: tenantCrumbs(tenant),
        ...(problem === undefined ? {} : { status: 400 as const }),
      },
      <>
        {rows.length === 0
          ? (
            <p>
              {manage
                ? "This tenant has no namespace yet: a namespace holds the flags and segments of one " +
                  "application or team. Create the first one below."
                : "No namespace you can read in this tenant yet: a tenant admin creates namespaces."}
            </p>
          )
          : (
            <DataTable columns={NAMESPACE_COLUMNS} caption={`Namespaces of ${tenant}`}>
              {rows.map(({ namespace: ns, head, lastChange }) => (
                <tr>
                  <td class="wrap">
                    <a href={ui.namespace(tenant, ns.slug)}>{ns.slug}</a>
                    {ns.description ? <div class="small muted">{ns.description}</div> : null}
                  </td>
                  <td>
                    {Object.keys(head.environments).length === 0
                      ? <span class="muted">none declared</span>
                      : Object.keys(head.environments).map((env) => (
                        <>
                          <a href={ui.flags(tenant, ns.slug, env)}>{env}</a>
                          {" "}
                        </>
                      ))}
                  </td>
                  <td>
                    <a href={ui.versions(tenant, ns.slug)}>v{head.version}</a>
                  </td>
                  <td class="hide-narrow">
                    <Time iso={lastChange} />
                    {manage
                      ? (
                        <div class="small">
                          <a href={ui.namespaceDelete(tenant, ns.slug)}>
                            Delete<span class="sr-only">{ns.slug}</span>…
                          </a>
                        </div>
                      )
                      : null}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        {manage
          ? (
            <section aria-labelledby="new-namespace">
              <h2 id="new-namespace">New namespace</h2>
              <form method="post" action={ui.namespaces(tenant)}>
                <CsrfField token={c.get("csrf")} />
                <ProblemNotice message={problem?.message} />
                <Field
                  id="namespace-slug"
                  label="Slug"
                  hint="Lower-case letters, digits, dots, dashes and underscores: the namespace's name in URLs, tokens and the CLI. It cannot be changed later."
                >
                  <input
                    id="namespace-slug"
                    type="text"
                    name="slug"
                    required
                    maxlength={63}
                    value={problem?.slug ?? ""}
                    aria-describedby="namespace-slug-hint"
                    {...(problem === undefined ? {} : { "aria-invalid": "true" })}
                  />
                </Field>
                <Field id="namespace-description" label="Description (optional)">
                  <input
                    id="namespace-description"
                    type="text"
                    name="description"
                    maxlength={1000}
                    value={problem?.description ?? ""}
                  />
                </Field>
                <button type="submit">Create namespace</button>
              </form>
            </section>
          )
          : null}
      </>,
    );
  }

  app.post("/t/:tenant/namespaces", async (c) => {
    const tenant = c.req.param("tenant");
    const form = c.get("form");
    const slug = (form.get("slug") ?? "").trim();
    const description = (form.get("description") ?? "").trim();
    try {
      await createNamespace(deps, c.get("person"), tenant, () => ({
        slug,
        ...(description === "" ? {} : { description }),
      }), consoleRequest(c));
    } catch (err) {
      if (err instanceof CfgtoolError && (err.status === 400 || err.status === 409)) {
        return namespacesPage(c, tenant, { message: err.message, slug, description });
      }
      throw err;
    }
    return c.redirect(ui.namespace(tenant, slug), 303);
  });

  app.get("/t/:tenant/ns/:ns/delete", (c) => deletePage(c, namespaceRef(c)));

  /** The confirmation of a namespace's deletion: type its slug. */
  async function deletePage(c: Context<ConsoleEnv>, ref: NamespaceRef, refused?: string) {
    const { tenant, namespace } = ref;
    const ns = await getNamespace(deps, c.get("person"), tenant, namespace);
    return consolePage(
      c,
      {
        title: `Delete ${namespace}`,
        tenant,
        section: "namespaces",
        crumbs: namespaceCrumbs(tenant, namespace, { label: "Delete" }),
        ...(refused === undefined ? {} : { status: 400 as const }),
      },
      <>
        <Notice kind="error">
          <p>
            Deleting <strong>{namespace}</strong> deletes its {ns.head?.version ?? 0}{" "}
            version{ns.head?.version === 1 ? "" : "s"}, its change requests and admins, and revokes
            every token bound to it: applications reading it get errors from then on. It cannot be
            undone.
          </p>
        </Notice>
        <form method="post" action={ui.namespaceDelete(tenant, namespace)}>
          <CsrfField token={c.get("csrf")} />
          <ProblemNotice message={refused} />
          <Field
            id="delete-slug"
            label={`Type ${namespace} to confirm`}
            hint="As the command line tool asks before deleting."
          >
            <input
              id="delete-slug"
              type="text"
              name="slug"
              required
              autocomplete="off"
              aria-describedby="delete-slug-hint"
              {...(refused === undefined ? {} : { "aria-invalid": "true" })}
            />
          </Field>
          <div class="actions">
            <button type="submit" class="danger">Delete namespace</button>
            <a href={ui.tenant(tenant)}>Keep it</a>
          </div>
        </form>
      </>,
    );
  }

  app.post("/t/:tenant/ns/:ns/delete", async (c) => {
    const ref = namespaceRef(c);
    // the person's right first: a forged post learns nothing, then the typed slug
    if (!await mayManageNamespaces(deps, c.get("person"), ref.tenant)) {
      throw new ForbiddenError(`Only a tenant admin of ${ref.tenant} can delete its namespaces`);
    }
    if ((c.get("form").get("slug") ?? "").trim() !== ref.namespace) {
      return deletePage(c, ref, `Type ${ref.namespace} exactly to delete it`);
    }
    await deleteNamespace(deps, c.get("person"), ref.tenant, ref.namespace, consoleRequest(c));
    return c.redirect(ui.tenant(ref.tenant) + "?done=deleted", 303);
  });

  return app;
}
