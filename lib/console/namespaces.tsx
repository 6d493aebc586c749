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
import { namespaceSummaries } from "../services/namespaces.ts";
import {
  createTenant,
  homeTenants,
  listAllTenants,
  type TenantRecord,
} from "../services/tenants.ts";
import { CfgtoolError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import type { ConsoleEnv } from "./env.ts";
import { Field } from "./form_fields.tsx";
import { consolePage, tenantCrumbs } from "./layout.tsx";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, ProblemNotice, Time } from "./widgets.tsx";

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

  app.get("/t/:tenant", async (c) => {
    const tenant = c.req.param("tenant");
    const rows = await namespaceSummaries(deps, c.get("person"), tenant);
    return consolePage(
      c,
      { title: "Namespaces", tenant, section: "namespaces", crumbs: tenantCrumbs(tenant) },
      rows.length === 0 ? <p>No namespace you can read in this tenant yet.</p> : (
        <DataTable
          columns={NAMESPACE_COLUMNS}
          caption={`Namespaces of ${tenant}`}
        >
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
              </td>
            </tr>
          ))}
        </DataTable>
      ),
    );
  });

  return app;
}
