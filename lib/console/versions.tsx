/**
 * The versions of a namespace in the console: the list (newest first, 50
 * a page, who made each one, when, why, how many files, its closure hash),
 * one version (its files, what it changed since the version before it,
 * and a rollback form for people who may write the manifest), the
 * difference between any two versions (per file, a TOML-aware summary of
 * the values that changed, then the line diff), and the rollback itself: a
 * plain form post, confirmed with a required checkbox, that makes a new
 * version whose files equal the chosen one (lib/services/manifests.ts
 * `rollbackManifest`, as `POST …/rollback` of the API does), then shows it.
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { authorize, can } from "../auth/permissions.ts";
import type { Principal } from "../auth/principal.ts";
import { InvalidRequestError } from "../errors.ts";
import { manifestTarget, type NamespaceRef, rollbackManifest } from "../services/manifests.ts";
import { getBlobs } from "../store/blobs.ts";
import { MAX_MESSAGE_LENGTH } from "../store/limits.ts";
import {
  findVersion,
  getVersion,
  type Head,
  listVersions,
  readFiles,
  readTree,
  type VersionMeta,
} from "../store/versions.ts";
import { authDeps } from "../http/authn.ts";
import type { AppDeps } from "../http/deps.ts";
import { intParam } from "../http/params.ts";
import { Changes, size } from "./changes_view.tsx";
import type { ConsoleEnv } from "./env.ts";
import { countChanges, diffFileSets, type FileChange } from "./file_set_diff.ts";
import { ConfirmCheck, confirmed, Field, GetForm, InlineField } from "./form_fields.tsx";
import {
  consoleFragment,
  consolePage,
  isFragmentRequest,
  namespaceCrumbs,
  redrawOnVersion,
} from "./layout.tsx";
import type { ManifestViews } from "./manifest_view.ts";
import { peopleNames } from "./people_names.ts";
import { namespaceRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, Fact, Facts, Notice, Pager, Time } from "./widgets.tsx";

/** Versions per page of the list (as the API's default page). */
export const VERSIONS_PER_PAGE = 50;
/** Longest message shown in the list (the version's page shows all of it). */
const LIST_MESSAGE_LENGTH = 160;

/** Who made a version, as a page shows it. */
interface Author {
  /** An email, a token's name, or the id itself. */
  label: string;
  /** The id (`usr_…`, `tok_…`). */
  id: string;
  token: boolean;
}

/** What a failed rollback form sends back to its page. */
interface RollbackInput {
  message: string;
  confirmed: boolean;
  problems: string[];
}

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
  const { kv } = deps;
  const app = new Hono<ConsoleEnv>();

  /** The namespace's head, for a person who may read its versions and their files. */
  async function readable(c: Context<ConsoleEnv>): Promise<Head> {
    const person = c.get("person");
    const head = await manifestTarget(deps, person, namespaceRef(c), "versions.read");
    await authorize(kv, person, "manifest.read", namespaceRef(c));
    return head;
  }

  /** Who made each version: an email for a person, a name for a token the viewer may read. */
  async function authors(person: Principal, ids: Iterable<string>): Promise<Map<string, Author>> {
    const names = peopleNames(authDeps(deps), person);
    const out = new Map<string, Author>();
    for (const id of new Set(ids)) {
      out.set(id, { id, label: await names.label(id), token: id.startsWith("tok_") });
    }
    return out;
  }

  app.get("/versions", async (c) => {
    const person = c.get("person");
    const { tenant, namespace } = namespaceRef(c);
    const head = await manifestTarget(deps, person, namespaceRef(c), "versions.read");
    const after = intParam(c.req.query("after"), "after");
    const page = await listVersions(kv, tenant, namespace, {
      limit: VERSIONS_PER_PAGE,
      ...(after === undefined ? {} : { after }),
    });
    const who = await authors(person, page.items.map((m) => m.created_by));
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
    return await versionPage(c, versionParam(c.req.param("v")));
  });

  app.post("/versions/:v/rollback", async (c) => {
    const person = c.get("person");
    const ref = namespaceRef(c);
    const { tenant, namespace } = ref;
    const v = versionParam(c.req.param("v"));
    // refused before the form is looked at: a forged post learns nothing
    await manifestTarget(deps, person, ref, "manifest.write");
    const form = c.get("form");
    const raw = form.get("message") ?? "";
    const message = raw.trim();
    const confirm = confirmed(form);
    const problems: string[] = [];
    if (message === "") problems.push("Say why you roll back: the message is required.");
    if (message.length > MAX_MESSAGE_LENGTH) {
      problems.push(
        `The message is ${message.length} characters long; the limit is ${MAX_MESSAGE_LENGTH}.`,
      );
    }
    if (!confirm) {
      problems.push(
        `Tick the box to confirm that a new version whose files equal version ${v} is made.`,
      );
    }
    if (problems.length > 0) {
      return await versionPage(c, v, { message: raw, confirmed: confirm, problems });
    }
    const result = await rollbackManifest(deps, person, ref, { version: v, message }, {
      requestId: c.get("requestId"),
    });
    deps.runtime.metrics.rolledBack(result.changed);
    if (!result.changed) {
      return c.redirect(ui.version(tenant, namespace, v, { done: "unchanged" }), 303);
    }
    return c.redirect(
      ui.version(tenant, namespace, result.version.version, { done: "rollback", from: v }),
      303,
    );
  });

  /** One version's page; with `input`, its rollback form failed (400, the input kept). */
  async function versionPage(c: Context<ConsoleEnv>, v: number, input?: RollbackInput) {
    const person = c.get("person");
    const ref = namespaceRef(c);
    const { tenant, namespace } = ref;
    const head = await readable(c);
    const meta = await getVersion(kv, tenant, namespace, v);
    const files = await readFiles(kv, tenant, namespace, v);
    const previous = v > 0 ? await findVersion(kv, tenant, namespace, v - 1) : null;
    const changes = previous === null ? null : await changedFiles(kv, ref, v - 1, v);
    const who = await authors(person, [meta.created_by]);
    const mayWrite = await can(kv, person, "manifest.write", ref);
    const done = c.req.query("done");
    const from = intParamOrUndefined(c.req.query("from"));
    return consolePage(
      c,
      {
        title: `Version ${v} of ${namespace}`,
        tenant,
        section: "namespaces",
        ...(input === undefined ? {} : { status: 400 as const }),
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
    const head = await readable(c);
    const [a, b] = [
      await getVersion(kv, tenant, namespace, from),
      await getVersion(kv, tenant, namespace, to),
    ];
    const changes = await changedFiles(kv, ref, from, to);
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

/** A version number from the path (400 when it is not one). */
function versionParam(raw: string | undefined): number {
  const v = intParam(raw, "version");
  if (v === undefined) throw new InvalidRequestError("version must be a non-negative integer");
  return v;
}

/** A number from a query parameter, or undefined when absent or not a number (display only). */
function intParamOrUndefined(raw: string | undefined): number | undefined {
  return raw !== undefined && /^\d{1,15}$/.test(raw) ? Number(raw) : undefined;
}

/** A console URL without its query (the action of a GET form, which sends its own). */
function pathOf(url: string): string {
  return url.split("?")[0]!;
}

/** The short form of a closure hash (its first 12 hex digits). */
function shortHash(hash: string): string {
  return hash.replace(/^sha256:/, "").slice(0, 12);
}

/**
 * The files that differ between two versions: the trees are compared by
 * content id and only the differing files are read.
 */
async function changedFiles(
  kv: Deno.Kv,
  ref: NamespaceRef,
  from: number,
  to: number,
): Promise<FileChange[]> {
  const [a, b] = await Promise.all([
    readTree(kv, ref.tenant, ref.namespace, from),
    readTree(kv, ref.tenant, ref.namespace, to),
  ]);
  const differing = (mine: Map<string, string>, theirs: Map<string, string>) =>
    [...mine].filter(([path, id]) => theirs.get(path) !== id);
  const onlyA = differing(a, b);
  const onlyB = differing(b, a);
  const blobs = await getBlobs(kv, [...onlyA, ...onlyB].map(([, id]) => id));
  const bytes = (pairs: [string, string][]) =>
    new Map(pairs.map(([path, id]): [string, Uint8Array] => {
      const content = blobs.get(id);
      if (content === undefined) throw new Error(`Cannot read ${path}: blob ${id} is missing`);
      return [path, content];
    }));
  return diffFileSets(bytes(onlyA), bytes(onlyB));
}

function AuthorName(props: { author: Author }) {
  const { author } = props;
  return (
    <span class="wrap" title={author.label === author.id ? undefined : author.id}>
      {author.label}
      {author.token
        ? (
          <>
            {" "}
            <span class="muted small">(token)</span>
          </>
        )
        : null}
    </span>
  );
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

function RollbackSection(
  props: {
    tenant: string;
    namespace: string;
    meta: VersionMeta;
    head: Head;
    csrf: string;
    input: RollbackInput | undefined;
  },
) {
  const { tenant, namespace, meta, head, input } = props;
  const v = meta.version;
  return (
    <section class="card" aria-labelledby="rollback-heading">
      <h2 id="rollback-heading">Roll back to version {v}</h2>
      {meta.closure_hash === head.closure_hash
        ? (
          <p>
            Version {v} has the same files as the head (version{" "}
            {head.version}): there is nothing to roll back.
          </p>
        )
        : (
          <>
            <p>
              A rollback makes a new version (version {head.version + 1}) whose files equal version
              {" "}
              {v}; every evaluation then serves it. {v + 1 === head.version
                ? `Version ${head.version} stays in the history, and you can roll forward to it`
                : `Versions ${v + 1} to ${head.version} stay in the history, and you can roll ` +
                  "forward to any of them"} the same way.
            </p>
            {input === undefined ? null : (
              <Notice kind="error">
                <ul>
                  {input.problems.map((p) => <li>{p}</li>)}
                </ul>
              </Notice>
            )}
            <form method="post" action={ui.rollback(tenant, namespace, v)}>
              <CsrfField token={props.csrf} />
              <Field id="rollback-message" label="Message: why roll back?">
                <input
                  id="rollback-message"
                  type="text"
                  name="message"
                  required
                  maxlength={MAX_MESSAGE_LENGTH}
                  value={input?.message ?? ""}
                  aria-invalid={input !== undefined && input.message.trim() === ""
                    ? "true"
                    : undefined}
                />
              </Field>
              <ConfirmCheck
                id="rollback-confirm"
                checked={input?.confirmed ?? false}
                invalid={input !== undefined && !input.confirmed}
              >
                I understand this makes a new version whose files equal version {v}
              </ConfirmCheck>
              <button type="submit" class="danger">Roll back to version {v}</button>
            </form>
          </>
        )}
    </section>
  );
}
