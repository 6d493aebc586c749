/**
 * One version's page in the console: who made it, when and why, its
 * files, what it changed since the version before it (per file, a
 * TOML-aware summary of the values that changed, then the line diff), and,
 * for people who may change the manifest, the rollback form
 * (lib/console/rollback_form.tsx). It shows what one service call returns
 * (`versionDetails` of lib/services/versions.ts).
 *
 * @module
 */
import type { Context } from "hono";
import type { AppDeps } from "../http/deps.ts";
import { type Head, versionDetails, type VersionMeta } from "../services/versions.ts";
import { Changes, size } from "./changes_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { diffFileSets } from "./file_set_diff.ts";
import { consolePage, namespaceCrumbs } from "./layout.tsx";
import { type RollbackInput, RollbackSection } from "./rollback_form.tsx";
import { namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { type Author, AuthorName, versionAuthors } from "./version_authors.tsx";
import { DataTable, Fact, Facts, Notice, Time } from "./widgets.tsx";

/**
 * One version's page: its details, its files, what it changed since the
 * version before it, and, for who may change the manifest, the rollback
 * form; with `input`, that form's post failed (400, the input kept; 409
 * when the rollback affects a protected environment).
 *
 * @param c the route's context
 * @param deps the app dependencies
 * @param v the version
 * @param input a failed rollback's inputs and problems
 * @returns the page
 *
 * @example
 * ```ts ignore
 * return await versionPage(c, deps, 3);
 * ```
 */
export async function versionPage(
  c: Context<ConsoleEnv>,
  deps: AppDeps,
  v: number,
  input?: RollbackInput,
): Promise<Response> {
  const person = c.get("person");
  const ref = namespaceRef(c);
  const { tenant, namespace } = ref;
  const version = await versionDetails(deps, person, ref, v);
  const { head, meta, files, mayWrite } = version;
  const changes = version.changes === null
    ? null
    : diffFileSets(version.changes.before, version.changes.after);
  const who = await versionAuthors(deps, person, [meta.created_by]);
  const done = c.req.query("done");
  const from = intParamOrUndefined(c.req.query("from"));
  return consolePage(
    c,
    {
      title: `Version ${v} of ${namespace}`,
      tenant,
      section: "namespaces",
      ...(input === undefined ? {} : { status: input.approval ? 409 as const : 400 as const }),
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: "Versions", href: ui.versions(tenant, namespace) },
        { label: `v${v}` },
      ),
    },
    <>
      {done === "rollback"
        ? (
          <Notice>
            <p>
              Version {v} was made by a rollback
              {from === undefined ? "" : ` to version ${from}: its files equal version ${from}`}.
            </p>
          </Notice>
        )
        : null}
      {done === "unchanged"
        ? (
          <Notice>
            <p>
              Nothing to roll back: version {v} has the same files as the head (version{" "}
              {head.version}). No version was made.
            </p>
          </Notice>
        )
        : null}
      <VersionMetaList
        tenant={tenant}
        namespace={namespace}
        meta={meta}
        head={head}
        author={who.get(meta.created_by)!}
      />
      {mayWrite && meta.closure_hash !== head.closure_hash
        ? (
          <p>
            <a href="#rollback-heading">Roll back to version {v}</a>, below its files and changes.
          </p>
        )
        : null}
      <h2>Files ({files.size})</h2>
      {files.size === 0
        ? <p class="muted">This version has no files.</p>
        : (
          <DataTable columns={["Path", "Size"]} caption={`Files of version ${v}`} captionHidden>
            {[...files].map(([path, bytes]) => (
              <tr>
                <td class="wrap mono">{path}</td>
                <td>{size(bytes.length)}</td>
              </tr>
            ))}
          </DataTable>
        )}
      <h2>{v === 0 ? "Changes" : `Changes from version ${v - 1}`}</h2>
      {v === 0
        ? <p class="muted">Version 0 is the empty manifest a namespace starts with.</p>
        : changes === null
        ? (
          <p class="muted">
            Version {v - 1} is no longer kept: there is nothing to compare with.
          </p>
        )
        : (
          <>
            <p class="small">
              <a href={ui.diff(tenant, namespace, v - 1, v)}>
                Changes from version {v - 1} to {v}, on a page of their own
              </a>
            </p>
            <Changes changes={changes} />
          </>
        )}
      {v === head.version ? null : (
        <p class="small">
          <a href={ui.diff(tenant, namespace, v, head.version)}>
            What changed from version {v} to the head (version {head.version})
          </a>
        </p>
      )}
      {mayWrite
        ? (
          <RollbackSection
            tenant={tenant}
            namespace={namespace}
            meta={meta}
            head={head}
            csrf={c.get("csrf")}
            input={input}
          />
        )
        : null}
    </>,
  );
}

/** A number from a query parameter, or undefined when absent or not a number (display only). */
function intParamOrUndefined(raw: string | undefined): number | undefined {
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

function VersionMetaList(
  props: { tenant: string; namespace: string; meta: VersionMeta; head: Head; author: Author },
) {
  const { meta, head } = props;
  return (
    <Facts class="meta card">
      <Fact label="Version">
        {meta.version} {meta.version === head.version
          ? <span class="badge on">head: served now</span>
          : (
            <span class="muted small">
              (the head is{" "}
              <a href={ui.version(props.tenant, props.namespace, head.version)}>
                version {head.version}
              </a>)
            </span>
          )}
      </Fact>
      <Fact label="Author">
        <AuthorName author={props.author} />
      </Fact>
      <Fact label="Created">
        <Time iso={meta.created_at} />
      </Fact>
      <Fact label="Message" class="message">
        {meta.message === null || meta.message === ""
          ? <span class="muted">no message</span>
          : meta.message}
      </Fact>
      <Fact label="Files">{meta.file_count}</Fact>
      <Fact label="Closure hash">
        <code class="wrap">{meta.closure_hash}</code>
      </Fact>
    </Facts>
  );
}
