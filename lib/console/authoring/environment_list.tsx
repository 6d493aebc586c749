/**
 * The environments page: each environment `namespace.toml` declares, its
 * description (the comment above its section) and whether browser tokens
 * may evaluate there. A person who may change the namespace also gets the
 * form that adds one and, per environment, the links that open or close
 * public evaluation and remove it; a reader sees the list.
 *
 * @module
 */
import type { Context } from "hono";
import { environmentsAsWritten } from "../../flags/authoring/mod.ts";
import { mayChangeManifest, type NamespaceView } from "../../services/versions.ts";
import type { AppDeps } from "../../http/deps.ts";
import type { ManifestViews } from "../../services/versions.ts";
import type { ConsoleEnv } from "../env.ts";
import { consolePage, namespaceCrumbs } from "../layout.tsx";
import { namespaceRef } from "../route_refs.ts";
import { ui } from "../urls.ts";
import { DataTable } from "../widgets.tsx";
import { textsAt } from "./fields.ts";
import { EnvironmentAddForm } from "./environment_add.tsx";

/**
 * Answers `GET /edit/environments`.
 *
 * @param c the route's context
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the page
 *
 * @example
 * ```ts ignore
 * app.get("/edit/environments", (c) => environmentsPage(c, deps, views));
 * ```
 */
export async function environmentsPage(
  c: Context<ConsoleEnv>,
  deps: AppDeps,
  views: ManifestViews,
): Promise<Response> {
  const ref = namespaceRef(c);
  const view = await views.load(deps, c.get("person"), ref);
  const writer = await mayChangeManifest(deps, c.get("person"), ref);
  const { tenant, namespace } = view;
  return consolePage(
    c,
    {
      title: `Environments of ${namespace}`,
      tenant,
      section: "namespaces",
      crumbs: namespaceCrumbs(tenant, namespace, { label: "Environments" }),
    },
    <>
      <p>
        An environment (production, staging…) is where applications evaluate the flags: each flag
        serves its own defaults and rules there unless the flag overrides them for it.
      </p>
      <EnvironmentTable view={view} writer={writer} />
      {writer
        ? (
          <section aria-labelledby="add-environment">
            <h2 id="add-environment">Add an environment</h2>
            <EnvironmentAddForm
              state={{
                view,
                csrf: c.get("csrf"),
                message: "",
                input: null,
                posted: new Map(),
                status: 200,
              }}
            />
          </section>
        )
        : null}
    </>,
  );
}

/** The list, or what to do when there is none. */
function EnvironmentTable(props: { view: NamespaceView; writer: boolean }) {
  const { view, writer } = props;
  const { tenant, namespace } = view;
  const envs = environmentsAsWritten(textsAt(view)).environments;
  if (envs.length === 0) {
    return (
      <p id="no-environment">
        No environment yet: applications evaluate flags in an environment, so nothing can be
        evaluated until {namespace} declares one. {writer
          ? <a href="#add-environment">Add the first environment</a>
          : "A namespace admin can add the first environment."}
      </p>
    );
  }
  return (
    <DataTable
      id="environments"
      columns={[
        "Environment",
        { label: "Description", secondary: true },
        "Public evaluation",
        ...(writer ? ["Change"] : []),
      ]}
      caption={`Environments of ${namespace}, version ${view.meta.version}`}
    >
      {envs.map((e) => (
        <tr>
          <td class="wrap">
            <a href={ui.flags(tenant, namespace, e.key)}>{e.key}</a>
          </td>
          <td class="hide-narrow wrap">{e.description}</td>
          <td>
            {e.public_evaluate ? "yes: browser tokens may evaluate" : "no"}
          </td>
          {writer
            ? (
              <td class="small">
                <a
                  href={`${ui.edit.environments(tenant, namespace, "public")}?env=${
                    encodeURIComponent(e.key)
                  }&to=${!e.public_evaluate}`}
                >
                  {e.public_evaluate ? "Close" : "Open"} public evaluation
                  <span class="sr-only">of {e.key}</span>…
                </a>{" "}
                <a
                  href={`${ui.edit.environments(tenant, namespace, "remove")}?env=${
                    encodeURIComponent(e.key)
                  }`}
                >
                  Remove<span class="sr-only">{e.key}</span>…
                </a>
              </td>
            )
            : null}
        </tr>
      ))}
    </DataTable>
  );
}
