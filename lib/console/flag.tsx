/**
 * One flag and one segment. The flag page shows what the flag is (type,
 * variations, default), its rules in order for an environment (the
 * environment's own rules and default when it overrides them, and whether
 * it is switched off there), each rule's segment with its nested segments
 * expanded, rollouts as weight bars, every environment's overrides, and
 * the segments the flag reaches; a person who may change the manifest gets
 * links to the quick changes. The segment page shows a segment's
 * predicates, nested segments expanded, and the flags and segments that
 * use it. Both read one version of the namespace through the
 * parsed-manifest cache, with the person's `manifest.read` right.
 *
 * @module
 */
import { Hono } from "hono";
import { effectiveFlag } from "../flags/effective.ts";
import type { Flag, Manifest, Rule, Segment } from "../flags/model.ts";
import { reachableSegments } from "../flags/reach.ts";
import { segmentsIncluding, segmentUsers } from "../flags/segment_use.ts";
import type { AppDeps } from "../http/deps.ts";
import { flagView, mayChangeManifest } from "../services/versions.ts";
import type { ConsoleEnv } from "./env.ts";
import { consolePage, namespaceCrumbs } from "./layout.tsx";
import { type ManifestViews, type NamespaceView, segmentIn } from "../services/versions.ts";
import { namespaceRef } from "./route_refs.ts";
import {
  type SegmentNode,
  segmentTree,
  TREE_BUDGET,
  type TreeNode,
} from "../flags/segment_tree.ts";
import { ui } from "./urls.ts";
import { DataTable, EnvironmentNav, Fact, Facts, Notice, WeightBar } from "./widgets.tsx";

/** The quick changes the flag page links to (`?kind=` of the change page). */
export const QUICK_CHANGES = ["toggle", "default", "weights"] as const;

/**
 * The one-flag and one-segment routes, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", flagRoutes(deps, views));
 * ```
 */
export function flagRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const viewDeps = { ...deps, views };

  app.get("/flags/:flag", async (c) => {
    const env = c.req.query("env") ?? "";
    const { view, flag, mayWrite: writer } = await flagView(
      viewDeps,
      c.get("person"),
      namespaceRef(c),
      { flag: c.req.param("flag"), env },
    );
    const { tenant, namespace, manifest } = view;
    const envs = Object.keys(manifest.namespace.environments);
    return consolePage(
      c,
      {
        title: flag.key,
        tenant,
        section: "namespaces",
        live: ui.live(tenant, namespace, view.head.version),
        crumbs: namespaceCrumbs(
          tenant,
          namespace,
          ...(env === "" ? [] : [{ label: env, href: ui.flags(tenant, namespace, env) }]),
          { label: flag.key },
        ),
      },
      <FlagPage view={view} flag={flag} env={env} envs={envs} writer={writer} />,
    );
  });

  app.get("/segments/:segment", async (c) => {
    const view = await views.load(deps, c.get("person"), namespaceRef(c));
    const { tenant, namespace } = view;
    const key = c.req.param("segment");
    const segment = segmentIn(view, key);
    const writer = await mayChangeManifest(deps, c.get("person"), namespaceRef(c));
    return consolePage(
      c,
      {
        title: `Segment ${key}`,
        tenant,
        section: "namespaces",
        live: ui.live(tenant, namespace, view.head.version),
        crumbs: namespaceCrumbs(tenant, namespace, { label: key }),
      },
      <SegmentPage view={view} segmentKey={key} segment={segment} writer={writer} />,
    );
  });

  return app;
}

function FlagPage(
  props: { view: NamespaceView; flag: Flag; env: string; envs: string[]; writer: boolean },
) {
  const { view, flag, env, envs, writer } = props;
  const { tenant, namespace, manifest } = view;
  const e = effectiveFlag(flag, env);
  const budget = { left: TREE_BUDGET };
  const reached = reachableSegments(manifest, [flag.key]);
  const change = (kind: typeof QUICK_CHANGES[number]) =>
    ui.flagChange(tenant, namespace, flag.key, env, kind);
  return (
    <>
      <EnvironmentNav
        choices={[
          {
            label: "as written",
            href: ui.flag(tenant, namespace, flag.key),
            current: env === "",
          },
          ...envs.map((name) => ({
            label: name,
            href: ui.flag(tenant, namespace, flag.key, name),
            current: name === env,
          })),
        ]}
        links={env === ""
          ? []
          : [<a href={ui.playground(tenant, namespace, env)}>Evaluation playground</a>]}
      />
      <p class="small muted">
        Version <a href={ui.version(tenant, namespace, view.meta.version)}>{view.meta.version}</a>
        {" · "}
        {env === ""
          ? "the flag as written, before any environment's overrides"
          : `as ${env} serves it`}
      </p>
      {flag.description === "" ? null : <p>{flag.description}</p>}
      {env !== "" && !e.enabled
        ? (
          <Notice>
            <p id="flag-disabled">
              <span class="badge off">off</span> Disabled in {env}: every context gets the default
              {" "}
              <code>{e.default}</code> (reason DISABLED); the rules below are not evaluated there.
            </p>
          </Notice>
        )
        : null}
      {env !== "" && (e.defaultOverridden || e.rulesOverridden)
        ? (
          <Notice>
            <ul id="flag-overrides">
              {e.defaultOverridden
                ? (
                  <li>
                    {env} overrides the default: it serves <code>{e.default}</code>{" "}
                    (the flag's own default is <code>{flag.default}</code>).
                  </li>
                )
                : null}
              {e.rulesOverridden
                ? (
                  <li>
                    {env} overrides the rules: it has {e.rules.length} rule
                    {e.rules.length === 1 ? "" : "s"} of its own instead of the flag's{" "}
                    {flag.rules.length}.
                  </li>
                )
                : null}
            </ul>
          </Notice>
        )
        : null}
      <Facts>
        <Fact label="Type">{flag.type}</Fact>
        <Fact label="Default">
          <code>{e.default}</code>
          {e.defaultOverridden
            ? (
              <>
                {" "}
                <span class="small muted">(set by {env})</span>
              </>
            )
            : null}
        </Fact>
        {env === "" ? null : (
          <Fact label={`In ${env}`}>
            {e.enabled
              ? <span class="badge on">enabled</span>
              : <span class="badge off">disabled</span>}
          </Fact>
        )}
      </Facts>

      <h2>Variations</h2>
      <DataTable id="variations" class="keyed" columns={["Name", "Value"]}>
        {Object.entries(flag.variations).map(([name, value]) => (
          <tr>
            <th scope="row" class="wrap">
              {name}
              {name === e.default
                ? (
                  <>
                    {" "}
                    <span class="badge">default</span>
                  </>
                )
                : null}
            </th>
            <td class="wrap">
              <code>{JSON.stringify(value)}</code>
            </td>
          </tr>
        ))}
      </DataTable>

      <h2>Rules{env === "" ? "" : ` in ${env}`}</h2>
      <p class="small muted">
        Tried in order; the first rule whose segment matches decides. No match: the default{" "}
        <code>{e.default}</code>.
      </p>
      {e.rules.length === 0
        ? <p id="no-rules">No rules: every context gets the default.</p>
        : (
          <ol id="rules" class="rules">
            {e.rules.map((rule, i) => (
              <RuleItem view={view} manifest={manifest} rule={rule} index={i} budget={budget} />
            ))}
          </ol>
        )}

      {writer ? <EditLinks view={view} flag={flag.key} env={env} envs={envs} /> : null}

      {writer && env !== ""
        ? (
          <section aria-labelledby="quick-changes">
            <h2 id="quick-changes">Quick changes in {env}</h2>
            <ul id="change-links">
              <li>
                <a href={change("toggle")}>
                  {e.enabled ? "Turn off" : "Turn on"} in {env}
                </a>
              </li>
              <li>
                <a href={change("default")}>Change the default in {env}</a>
              </li>
              {e.hasRollout
                ? (
                  <li>
                    <a href={change("weights")}>Change the rollout weights in {env}</a>
                  </li>
                )
                : null}
            </ul>
          </section>
        )
        : null}

      <h2>Environments</h2>
      {envs.length === 0 ? <p>The namespace declares no environment.</p> : (
        <DataTable
          id="environments"
          class="keyed"
          columns={["Environment", "Enabled", "Default", "Rules"]}
        >
          {envs.map((name) => {
            const o = Object.hasOwn(flag.environments, name) ? flag.environments[name] : undefined;
            return (
              <tr>
                <th scope="row" class="wrap">
                  <a href={ui.flag(tenant, namespace, flag.key, name)}>{name}</a>
                </th>
                <td>
                  {o?.enabled === false
                    ? <span class="badge off">no</span>
                    : <span class="badge on">yes</span>}
                </td>
                <td>
                  {o?.default === undefined
                    ? <span class="muted">flag's ({flag.default})</span>
                    : (
                      <>
                        <code>{o.default}</code> <span class="small muted">own</span>
                      </>
                    )}
                </td>
                <td>
                  {o?.rules === undefined
                    ? <span class="muted">flag's ({flag.rules.length})</span>
                    : `${o.rules.length} own rule${o.rules.length === 1 ? "" : "s"}`}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}

      <h2>Segments it reaches</h2>
      {reached.length === 0 ? <p>None: no rule names a segment.</p> : (
        <ul id="reached">
          {reached.map((s) => (
            <li>
              <a href={ui.segment(tenant, namespace, s)}>{s}</a>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A writer's links to the flag's editors. */
function EditLinks(props: { view: NamespaceView; flag: string; env: string; envs: string[] }) {
  const { view, flag, env, envs } = props;
  const { tenant, namespace } = view;
  return (
    <section aria-labelledby="edit-flag">
      <h2 id="edit-flag">Edit</h2>
      <ul id="edit-links">
        <li>
          <a href={ui.edit.flag(tenant, namespace, flag)}>
            Description, default and variations
          </a>
        </li>
        <li>
          <a href={ui.edit.rules(tenant, namespace, flag)}>The flag's rules</a>
        </li>
        {env === "" ? null : (
          <li>
            <a href={ui.edit.override(tenant, namespace, flag, env)}>
              What {env} overrides (enabled, default, its own rules)
            </a>
          </li>
        )}
        {envs.length < 2 ? null : (
          <li>
            <a href={ui.edit.promote(tenant, namespace, flag, env === "" ? {} : { from: env })}>
              Copy its configuration {env === "" ? "from one environment" : `from ${env}`}{" "}
              to another
            </a>
          </li>
        )}
        <li>
          <a href={ui.edit.flagPart(tenant, namespace, flag, "delete")}>Delete the flag…</a>
        </li>
      </ul>
    </section>
  );
}

function RuleItem(
  props: {
    view: NamespaceView;
    manifest: Manifest;
    rule: Rule;
    index: number;
    budget: { left: number };
  },
) {
  const { view, manifest, rule, index, budget } = props;
  const { tenant, namespace } = view;
  return (
    <li class="rule card">
      <h3>Rule {index + 1}</h3>
      {rule.segment === undefined ? <p>Every context.</p> : (
        <>
          <p>
            If the context is in segment{" "}
            <a href={ui.segment(tenant, namespace, rule.segment)}>{rule.segment}</a>
          </p>
          <SegmentBody
            view={view}
            node={segmentTree(manifest, rule.segment, { budget })}
          />
        </>
      )}
      {rule.rollout === undefined
        ? (
          <p>
            Then serve <code>{rule.variation}</code>.
          </p>
        )
        : (
          <>
            <p>
              Then split by weight, bucketed by <code>{rule.bucket_by}</code>:
            </p>
            <WeightBar entries={rule.rollout} />
          </>
        )}
    </li>
  );
}

const STOPS: Record<NonNullable<SegmentNode["stop"]>, string> = {
  missing: "no such segment",
  cycle: "refers back to a segment above: not expanded again",
  repeat: "shown above",
  depth: "nested too deep to show here",
  budget: "more on its own page",
};

/** A segment node's predicates, with nested segments under their predicate. */
function SegmentBody(props: { view: NamespaceView; node: SegmentNode }) {
  const { node } = props;
  return (
    <div class="segment-tree">
      {node.description === undefined ? null : <p class="small muted">{node.description}</p>}
      {node.stop !== undefined && node.children.length === 0 ? null : (
        <>
          <p class="small">
            {node.match === "any" ? "Any of these holds:" : "All of these hold:"}
          </p>
          <ul class="predicates">
            {node.children.map((child) => <TreeItem view={props.view} node={child} />)}
          </ul>
        </>
      )}
      {node.stop === "budget" && node.children.length > 0
        ? <p class="small muted">{STOPS.budget}</p>
        : null}
    </div>
  );
}

function TreeItem(props: { view: NamespaceView; node: TreeNode }) {
  const { view, node } = props;
  if (node.kind === "predicate") {
    return (
      <li>
        <code class="wrap">{node.attribute}</code> <span class="op">{node.op}</span>{" "}
        <code class="wrap">{JSON.stringify(node.value)}</code>
      </li>
    );
  }
  return (
    <li>
      {node.want ? "in segment" : "not in segment"}{" "}
      <a href={ui.segment(view.tenant, view.namespace, node.key)}>{node.key}</a>
      {node.stop === undefined || node.stop === "budget" && node.children.length > 0
        ? <SegmentBody view={view} node={node} />
        : (
          <>
            {" "}
            <span class="small muted">({STOPS[node.stop]})</span>
          </>
        )}
    </li>
  );
}

function SegmentPage(
  props: { view: NamespaceView; segmentKey: string; segment: Segment; writer: boolean },
) {
  const { view, segmentKey, segment, writer } = props;
  const { tenant, namespace, manifest } = view;
  const users = segmentUsers(manifest, segmentKey);
  const including = segmentsIncluding(manifest, segmentKey);
  const { description: _shownAbove, ...bare } = segmentTree(manifest, segmentKey);
  return (
    <>
      <p class="small muted">
        Version <a href={ui.version(tenant, namespace, view.meta.version)}>{view.meta.version}</a>
      </p>
      {segment.description === "" ? null : <p>{segment.description}</p>}
      {writer
        ? (
          <p id="segment-edit-links">
            <a href={ui.edit.segment(tenant, namespace, segmentKey)}>Edit the segment</a>
            {" · "}
            <a href={ui.edit.segmentDelete(tenant, namespace, segmentKey)}>Delete it…</a>
            {" · "}
            <a href={ui.segments(tenant, namespace)}>All segments</a>
          </p>
        )
        : null}
      <Facts>
        <Fact label="Match">
          {segment.match === "any"
            ? "any: a context is in it when at least one predicate holds"
            : "all: a context is in it when every predicate holds"}
        </Fact>
      </Facts>

      <h2>Predicates</h2>
      <DataTable id="predicates" columns={["Attribute", "Operator", "Value"]}>
        {segment.predicates.map((p) => (
          <tr>
            <td class="wrap">
              <code>{p.attribute}</code>
            </td>
            <td>{p.op}</td>
            <td class="wrap">
              <code>{JSON.stringify(p.value)}</code>
            </td>
          </tr>
        ))}
      </DataTable>
      {bare.children.some((n) => n.kind === "segment")
        ? (
          <>
            <h2>With nested segments expanded</h2>
            <div class="card" id="expanded">
              <SegmentBody view={view} node={bare} />
            </div>
          </>
        )
        : null}

      <h2>Flags that use it</h2>
      {users.length === 0
        ? <p>No flag reaches this segment.</p>
        : (
          <DataTable id="users" class="keyed" columns={["Flag", "How"]}>
            {users.map((u) => (
              <tr>
                <th scope="row" class="wrap">
                  <a href={ui.flag(tenant, namespace, u.flag)}>{u.flag}</a>
                </th>
                <td>
                  {u.direct ? "a rule names it" : null}
                  {u.direct && u.through.length > 0 ? "; " : null}
                  {u.through.length === 0 ? null : (
                    <>
                      through {u.through.map((s, i) => (
                        <>
                          {i === 0 ? null : ", "}
                          <a href={ui.segment(tenant, namespace, s)}>{s}</a>
                        </>
                      ))}
                    </>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        )}

      <h2>Segments that include it</h2>
      {including.length === 0 ? <p>None.</p> : (
        <ul id="including">
          {including.map((s) => (
            <li>
              <a href={ui.segment(tenant, namespace, s)}>{s}</a>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
