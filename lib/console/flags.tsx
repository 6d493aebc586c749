/**
 * The flags of one environment: key, type, whether the environment serves
 * it, the variation it serves when no rule matches, whether rules or
 * rollouts apply, the version that last changed it, and a link to the
 * change request pending for it (lib/services/change_lists.ts); filtered and
 * searched on the server (a plain GET form, so it works without
 * JavaScript), and redrawn when a new version lands (the page follows its
 * namespace's event stream; htmx swaps the table in).
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { AppDeps } from "../http/deps.ts";
import { effectiveFlag } from "../flags/effective.ts";
import type { Flag } from "../flags/model.ts";
import type { ConsoleEnv } from "./env.ts";
import { GetForm, InlineField, Options } from "./form_fields.tsx";
import {
  consoleFragment,
  consolePage,
  isFragmentRequest,
  namespaceCrumbs,
  redrawOnVersion,
} from "./layout.tsx";
import { type ManifestViews, mayChangeManifest, type NamespaceView } from "../services/versions.ts";
import { pendingFlagChanges } from "../services/change_lists.ts";
import { namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { DataTable, EnvironmentNav } from "./widgets.tsx";

/** The filters of the flags page (`?state=`). */
export const FLAG_STATES = {
  all: "All flags",
  on: "Enabled",
  off: "Disabled",
  rules: "With rules",
  rollout: "With a rollout",
} as const;

/** A `?state=` value. */
export type FlagState = keyof typeof FLAG_STATES;

/**
 * Whether a flag passes the page's search and filter in an environment:
 * the search text is found (case-insensitive) in the key or description.
 *
 * @param flag the flag
 * @param env the environment
 * @param q the search text
 * @param state the filter
 * @returns whether the flag is listed
 *
 * @example
 * ```ts
 * import { flagListed } from "./flags.tsx";
 * const flag = { key: "new-checkout", description: "Checkout v2", type: "boolean" as const,
 *   default: "off", variations: { on: true, off: false }, rules: [], environments: {} };
 * if (!flagListed(flag, "prod", "CHECKOUT", "on") || flagListed(flag, "prod", "", "rules")) throw new Error();
 * ```
 */
export function flagListed(flag: Flag, env: string, q: string, state: FlagState): boolean {
  const needle = q.trim().toLowerCase();
  if (
    needle !== "" && !flag.key.includes(needle) &&
    !flag.description.toLowerCase().includes(needle)
  ) {
    return false;
  }
  const e = effectiveFlag(flag, env);
  switch (state) {
    case "all":
      return true;
    case "on":
      return e.enabled;
    case "off":
      return !e.enabled;
    case "rules":
      return e.rules.length > 0;
    case "rollout":
      return e.hasRollout;
  }
}

/**
 * The flags routes, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", flagListRoutes(deps, views));
 * ```
 */
export function flagListRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/", async (c) => {
    const view = await views.load(deps, c.get("person"), namespaceRef(c));
    const first = Object.keys(view.manifest.namespace.environments)[0];
    if (first !== undefined) return c.redirect(ui.flags(view.tenant, view.namespace, first), 303);
    return await flagsPage(c, view, "");
  });

  app.get("/env/:env", async (c) => {
    const view = await views.load(deps, c.get("person"), namespaceRef(c));
    return await flagsPage(c, view, c.req.param("env"));
  });

  async function flagsPage(c: Context<ConsoleEnv>, view: NamespaceView, env: string) {
    const q = (c.req.query("q") ?? "").slice(0, 200);
    const raw = c.req.query("state") ?? "all";
    const state: FlagState = Object.hasOwn(FLAG_STATES, raw) ? raw as FlagState : "all";
    const envs = Object.keys(view.manifest.namespace.environments);
    if (env !== "" && !envs.includes(env)) {
      return consolePage(
        c,
        { title: "No such environment", tenant: view.tenant, section: "namespaces", status: 404 },
        <p>
          Version {view.meta.version} of {view.namespace} declares no environment{" "}
          <code>{env}</code>. <a href={ui.namespace(view.tenant, view.namespace)}>Its flags</a>
        </p>,
      );
    }
    const [changed, pending, writer] = await Promise.all([
      view.lastChanges(),
      pendingFlagChanges(deps, c.get("person"), namespaceRef(c)),
      mayChangeManifest(deps, c.get("person"), namespaceRef(c)),
    ]);
    const table = (
      <FlagTable view={view} env={env} q={q} state={state} changed={changed} pending={pending} />
    );
    if (isFragmentRequest(c)) return consoleFragment(c, table);
    const { tenant, namespace } = view;
    return consolePage(
      c,
      {
        title: env === "" ? `Flags of ${namespace}` : `Flags in ${env}`,
        tenant,
        section: "namespaces",
        live: ui.live(tenant, namespace, view.head.version),
        crumbs: namespaceCrumbs(tenant, namespace, ...(env === "" ? [] : [{ label: env }])),
      },
      <>
        <EnvironmentNav
          choices={envs.map((e) => ({
            label: e,
            href: ui.flags(tenant, namespace, e),
            current: e === env,
          }))}
          links={[
            ...(env === ""
              ? []
              : [<a href={ui.playground(tenant, namespace, env)}>Evaluation playground</a>]),
            <a href={ui.segments(tenant, namespace)}>Segments</a>,
            <a href={ui.edit.environments(tenant, namespace)}>Environments</a>,
            <a href={ui.versions(tenant, namespace)}>Versions</a>,
            <a href={ui.changes(tenant, namespace)}>Changes</a>,
          ]}
        />
        <EmptyNamespace view={view} writer={writer} />
        {writer && envs.length > 0 && Object.keys(view.manifest.flags).length > 0
          ? (
            <p class="actions">
              <a class="button" href={ui.edit.newFlag(tenant, namespace)}>New flag</a>
            </p>
          )
          : null}
        <GetForm
          search
          button="Filter"
          hx={{
            "hx-get": env === ""
              ? ui.namespace(tenant, namespace)
              : ui.flags(tenant, namespace, env),
            "hx-trigger": "input changed delay:250ms, change, submit",
            "hx-target": "#flag-table",
            "hx-swap": "outerHTML",
            "hx-push-url": "true",
          }}
        >
          <InlineField id="flag-search" label="Search">
            <input
              id="flag-search"
              type="search"
              name="q"
              value={q}
              placeholder="key or description"
            />
          </InlineField>
          <InlineField id="flag-state" label="Show">
            <select id="flag-state" name="state">
              <Options choices={Object.entries(FLAG_STATES)} selected={state} />
            </select>
          </InlineField>
        </GetForm>
        {table}
      </>,
    );
  }

  return app;
}

/**
 * What an empty namespace says: with no environment (a namespace at
 * version 0), that environments come first; with no flag, how to make one.
 * Writers get the button, readers who can make them.
 */
function EmptyNamespace(props: { view: NamespaceView; writer: boolean }) {
  const { view, writer } = props;
  const { tenant, namespace } = view;
  const envs = Object.keys(view.manifest.namespace.environments).length;
  const flags = Object.keys(view.manifest.flags).length;
  if (envs > 0 && flags > 0) return null;
  return (
    <div class="card" id="empty-namespace">
      {envs === 0
        ? (
          <p>
            {view.meta.version === 0 ? `${namespace} is empty (version 0). ` : ""}
            Flags are served per environment (production, staging…): declare the first environment,
            then add flags.{" "}
            {writer ? null : "A namespace admin can do it, or push a manifest with the CLI."}
          </p>
        )
        : (
          <p>
            No flag yet: a flag is what applications ask for (on or off, a text, a number, a JSON
            object).{" "}
            {writer ? null : "A namespace admin can add one, or push a manifest with the CLI."}
          </p>
        )}
      {writer
        ? (
          <p class="actions">
            {envs === 0
              ? (
                <a class="button" href={ui.edit.environments(tenant, namespace)}>
                  Add an environment
                </a>
              )
              : <a class="button" href={ui.edit.newFlag(tenant, namespace)}>New flag</a>}
          </p>
        )
        : null}
    </div>
  );
}

const FLAG_COLUMNS = [
  "Flag",
  { label: "Type", secondary: true },
  "Serves",
  "Targeting",
  { label: "Changed", secondary: true },
] as const;

function FlagTable(
  props: {
    view: NamespaceView;
    env: string;
    q: string;
    state: FlagState;
    changed: Map<string, number>;
    /** Flag key → the ids of its pending change requests, newest first. */
    pending: Map<string, string[]>;
  },
) {
  const { view, env, q, state, changed, pending } = props;
  const { tenant, namespace } = view;
  const all = Object.values(view.manifest.flags);
  const listed = all.filter((f) => flagListed(f, env, q, state));
  const self = env === ""
    ? ui.namespace(tenant, namespace)
    : ui.flags(tenant, namespace, env, { q, state: state === "all" ? undefined : state });
  return (
    <div id="flag-table" {...redrawOnVersion(self)}>
      <p class="small muted">
        Version <a href={ui.version(tenant, namespace, view.meta.version)}>{view.meta.version}</a>
        {" · "}
        {listed.length === all.length
          ? `${all.length} flag${all.length === 1 ? "" : "s"}`
          : `${listed.length} of ${all.length} flags`}
      </p>
      {listed.length === 0 ? <p>No flag matches.</p> : (
        <DataTable columns={FLAG_COLUMNS}>
          {listed.map((flag) => {
            const e = effectiveFlag(flag, env);
            const v = changed.get(`flags/${flag.key}.toml`);
            return (
              <tr>
                <td class="wrap">
                  <a href={ui.flag(tenant, namespace, flag.key, env || undefined)}>
                    {flag.key}
                  </a>
                  <PendingBadge
                    tenant={tenant}
                    namespace={namespace}
                    flag={flag.key}
                    ids={pending.get(flag.key)}
                  />
                </td>
                <td class="hide-narrow">{flag.type}</td>
                <td>
                  {e.enabled
                    ? <span class="badge on">on</span>
                    : <span class="badge off">off</span>} <code>{e.default}</code>
                </td>
                <td class="small">
                  {e.rules.length === 0
                    ? <span class="muted">none</span>
                    : `${e.rules.length} rule${e.rules.length === 1 ? "" : "s"}`}
                  {e.hasRollout
                    ? (
                      <>
                        {" "}
                        <span class="badge warn">rollout</span>
                      </>
                    )
                    : null}
                </td>
                <td class="hide-narrow small">
                  {v === undefined ? null : <a href={ui.version(tenant, namespace, v)}>v{v}</a>}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
    </div>
  );
}

/** A link to the pending change request of a flag (to the Changes page filtered, for several). */
function PendingBadge(
  props: { tenant: string; namespace: string; flag: string; ids: string[] | undefined },
) {
  const { tenant, namespace, ids } = props;
  if (ids === undefined || ids.length === 0) return null;
  return (
    <>
      {" "}
      {ids.length === 1
        ? (
          <a
            class="badge warn"
            href={ui.changeRequest(tenant, namespace, ids[0]!)}
            aria-label={`change pending for ${props.flag}`}
          >
            change pending
          </a>
        )
        : (
          <a
            class="badge warn"
            href={ui.changes(tenant, namespace, { status: "pending", flag: props.flag })}
            aria-label={`${ids.length} changes pending for ${props.flag}`}
          >
            {ids.length} changes pending
          </a>
        )}
    </>
  );
}
