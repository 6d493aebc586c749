/**
 * The versions of a namespace in the console: the list (newest first, 50
 * a page, who made each one, when, why, how many files, its closure hash),
 * one version (lib/console/version_page.tsx), the difference between any
 * two versions (per file, a TOML-aware summary of the values that changed,
 * then the line diff), and the rollback (lib/console/rollback.tsx, mounted
 * here). Each page makes one service call (lib/services/versions.ts) and
 * draws what it returns.
 *
 * @module
 */
import { Hono } from "hono";
import { InvalidRequestError } from "../errors.ts";
import type { AppDeps } from "../http/deps.ts";
import { intParam } from "../http/params.ts";
import { type Head, listVersionPage, versionDiff, type VersionMeta } from "../services/versions.ts";
import { Changes } from "./changes_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { countChanges, diffFileSets } from "./file_set_diff.ts";
import { GetForm, InlineField } from "./form_fields.tsx";
import {
  consoleFragment,
  consolePage,
  isFragmentRequest,
  namespaceCrumbs,
  redrawOnVersion,
} from "./layout.tsx";
import type { ManifestViews } from "../services/versions.ts";
import { rollbackRoutes } from "./rollback.tsx";
import { namespaceRef, versionParam } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { type Author, AuthorName, versionAuthors } from "./version_authors.tsx";
import { versionPage } from "./version_page.tsx";
import { DataTable, Pager, Time } from "./widgets.tsx";

/** Versions per page of the list (as the API's default page). */
export const VERSIONS_PER_PAGE = 50;
/** Longest message shown in the list (the version's page shows all of it). */
const LIST_MESSAGE_LENGTH = 160;

/**
 * The version routes, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param _views the parsed-manifest cache (these pages read files, not parsed manifests)
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", versionRoutes(deps, views));
 * ```
 */
export function versionRoutes(deps: AppDeps, _views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/versions", async (c) => {
    const person = c.get("person");
    const { tenant, namespace } = namespaceRef(c);
    let after: number | undefined;
    const page = await listVersionPage(deps, person, namespaceRef(c), () => {
      after = intParam(c.req.query("after"), "after");
      return { limit: VERSIONS_PER_PAGE, after };
    });
    const { head } = page;
    const who = await versionAuthors(deps, person, page.items.map((m) => m.created_by));
    const table = (
      <VersionTable
        tenant={tenant}
        namespace={namespace}
        head={head}
        items={page.items}
        authors={who}
        after={after}
        next={page.next}
      />
    );
    if (isFragmentRequest(c)) return consoleFragment(c, table);
    return consolePage(
      c,
      {
        title: `Versions of ${namespace}`,
        tenant,
        section: "namespaces",
        ...(after === undefined ? { live: ui.live(tenant, namespace, head.version) } : {}),
        crumbs: namespaceCrumbs(tenant, namespace, { label: "Versions" }),
      },
      <>
        {table}
        <h2 id="compare-heading">Compare two versions</h2>
        <CompareForm
          tenant={tenant}
          namespace={namespace}
          from={Math.max(0, head.version - 1)}
          to={head.version}
          head={head.version}
        />
      </>,
    );
  });

  app.get("/versions/:v", async (c) => {
    return await versionPage(c, deps, versionParam(c.req.param("v")));
  });

  app.route("/", rollbackRoutes(deps));

  app.get("/diff", async (c) => {
    const ref = namespaceRef(c);
    const { tenant, namespace } = ref;
    const from = intParam(c.req.query("from"), "from");
    const to = intParam(c.req.query("to"), "to");
    if (from === undefined || to === undefined) {
      throw new InvalidRequestError(
        "Choose two versions to compare: from and to must both be version numbers",
        { details: { field: from === undefined ? "from" : "to" } },
      );
    }
    const diff = await versionDiff(deps, c.get("person"), ref, { from, to });
    const { head, from: a, to: b } = diff;
    const changes = diffFileSets(diff.before, diff.after);
    const counts = countChanges(changes);
    return consolePage(
      c,
      {
        title: `Changes from version ${from} to ${to}`,
        tenant,
        section: "namespaces",
        crumbs: namespaceCrumbs(
          tenant,
          namespace,
          { label: "Versions", href: ui.versions(tenant, namespace) },
          { label: `v${from} → v${to}` },
        ),
      },
      <>
        <p>
          From <a href={ui.version(tenant, namespace, from)}>version {from}</a> (
          <Time iso={a.created_at} />) to{" "}
          <a href={ui.version(tenant, namespace, to)}>version {to}</a> (
          <Time iso={b.created_at} />).
        </p>
        <CompareForm
          tenant={tenant}
          namespace={namespace}
          from={from}
          to={to}
          head={head.version}
        />
        <h2>
          {changes.length === 0
            ? "No differences"
            : changes.length === 1
            ? "1 file differs"
            : `${changes.length} files differ`}
        </h2>
        {changes.length === 0
          ? (
            <p>
              {a.closure_hash === b.closure_hash
                ? `Versions ${from} and ${to} have the same files.`
                : `Versions ${from} and ${to} hold the same bytes in every file.`}
            </p>
          )
          : (
            <>
              <p>
                {counts.changed} changed, {counts.added} added, {counts.removed} removed.
              </p>
              <Changes changes={changes} />
            </>
          )}
      </>,
    );
  });

  return app;
}

/** A console URL without its query (the action of a GET form, which sends its own). */
function pathOf(url: string): string {
  return url.split("?")[0]!;
}

/** The short form of a closure hash (its first 12 hex digits). */
function shortHash(hash: string): string {
  return hash.replace(/^sha256:/, "").slice(0, 12);
}

const VERSION_COLUMNS = [
  "Version",
  "Author",
  "Created",
  "Message",
  { label: "Files", secondary: true },
  { label: "Closure hash", secondary: true },
  { label: "Changes", secondary: true },
] as const;

function VersionTable(
  props: {
    tenant: string;
    namespace: string;
    head: Head;
    items: readonly VersionMeta[];
    authors: Map<string, Author>;
    after: number | undefined;
    next: string | null;
  },
) {
  const { tenant, namespace, head, items } = props;
  const self = ui.versions(tenant, namespace);
  return (
    <div id="version-table" {...(props.after === undefined ? redrawOnVersion(self) : {})}>
      <p class="small muted">
        The head is <a href={ui.version(tenant, namespace, head.version)}>version {head.version}</a>
        {" · "}
        <a href={ui.namespace(tenant, namespace)}>its flags</a>
        {" · "}
        <a href={ui.changes(tenant, namespace)}>change requests</a>
      </p>
      {items.length === 0 ? <p>No older version.</p> : (
        <DataTable
          columns={VERSION_COLUMNS}
          caption={`Versions of ${namespace}, newest first`}
          captionHidden
        >
          {items.map((m) => (
            <tr>
              <td>
                <a href={ui.version(tenant, namespace, m.version)}>v{m.version}</a>
                {m.version === head.version
                  ? (
                    <>
                      {" "}
                      <span class="badge on">head</span>
                    </>
                  )
                  : null}
              </td>
              <td>
                <AuthorName author={props.authors.get(m.created_by)!} />
              </td>
              <td>
                <Time iso={m.created_at} />
              </td>
              <td class="wrap">
                {m.message === null || m.message === ""
                  ? <span class="muted">no message</span>
                  : m.message.length > LIST_MESSAGE_LENGTH
                  ? `${m.message.slice(0, LIST_MESSAGE_LENGTH)}…`
                  : m.message}
              </td>
              <td class="hide-narrow">{m.file_count}</td>
              <td class="hide-narrow">
                <code title={m.closure_hash}>{shortHash(m.closure_hash)}</code>
              </td>
              <td class="hide-narrow">
                {m.version === 0 ? <span class="muted">first</span> : (
                  <a
                    href={ui.diff(tenant, namespace, m.version - 1, m.version)}
                    aria-label={`changes in version ${m.version}`}
                  >
                    changes
                  </a>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Pager
        label="Pages of versions"
        first={props.after === undefined ? undefined : self}
        next={props.next === null
          ? undefined
          : ui.versions(tenant, namespace, { after: props.next })}
      />
    </div>
  );
}

function CompareForm(
  props: { tenant: string; namespace: string; from: number; to: number; head: number },
) {
  const { tenant, namespace } = props;
  const ends = [["from", "From version"], ["to", "To version"]] as const;
  return (
    <GetForm
      action={pathOf(ui.diff(tenant, namespace, props.from, props.to))}
      label="Compare two versions"
      button="Compare"
    >
      {ends.map(([end, label]) => (
        <InlineField id={`compare-${end}`} label={label}>
          <input
            id={`compare-${end}`}
            type="number"
            name={end}
            min="0"
            max={String(props.head)}
            value={String(props[end])}
            required
          />
        </InlineField>
      ))}
    </GetForm>
  );
}
