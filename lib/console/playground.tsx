/**
 * The evaluation playground of one environment: a person types a context
 * (JSON; the page starts from a skeleton of every attribute the
 * namespace's segments and rollouts read) and sees what every flag serves
 * it, with the same engine, the same compiled model and the same checks as
 * the evaluation API (lib/http/evaluate.ts): the `evaluate` right on the
 * (tenant, namespace, environment), the context rules of
 * lib/http/context_input.ts. Each result says why: the matching rule with
 * its segment, the default, or the switch that turned the flag off. The
 * form is a plain POST; the person's text stays in the box, also when it
 * is not valid JSON (400, with the problem).
 *
 * @module
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { CfgtoolError } from "../errors.ts";
import { evaluateAll, type EvaluationResult } from "../flags/evaluate.ts";
import type { AppDeps } from "../http/deps.ts";
import { InvalidContextError, validateContext } from "../http/context_input.ts";
import { evaluationModel } from "../services/evaluation.ts";
import { contextSkeleton } from "../flags/context_shape.ts";
import type { ConsoleEnv } from "./env.ts";
import { explainResult, type Explanation } from "../flags/explain.ts";
import { Field } from "./form_fields.tsx";
import { consolePage, namespaceCrumbs } from "./layout.tsx";
import { environmentIn, type ManifestViews, type NamespaceView } from "../services/versions.ts";
import { environmentRef } from "./route_refs.ts";
import { ui } from "./urls.ts";
import { CsrfField, DataTable, ProblemNotice } from "./widgets.tsx";

/** Most result rows one playground answer shows (the flag filter narrows the rest). */
export const MAX_PLAYGROUND_ROWS = 200;

/** The form's fields. */
const FIELD = { context: "context", flag: "flag" } as const;

/** What one answer of the page shows. */
interface Outcome {
  results: EvaluationResult[];
  /** Flags that passed the filter (may exceed the rows shown). */
  matched: number;
  version: number;
}

/**
 * The playground routes, mounted at `/ui/t/:tenant/ns/:ns`.
 *
 * @param deps the app dependencies
 * @param views the parsed-manifest cache
 * @returns the routes
 *
 * @example
 * ```ts ignore
 * console.route("/t/:tenant/ns/:ns", playgroundRoutes(deps, views));
 * ```
 */
export function playgroundRoutes(deps: AppDeps, views: ManifestViews): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/env/:env/playground", async (c) => {
    const t = environmentRef(c);
    await evaluationModel(deps, c.get("person"), t);
    const view = await views.load(deps, c.get("person"), t);
    environmentIn(view, t.environment);
    const text = JSON.stringify(contextSkeleton(view.manifest), null, 2);
    return page(c, view, t.environment, { text, filter: c.req.query(FIELD.flag) ?? "" });
  });

  app.post("/env/:env/playground", async (c) => {
    const t = environmentRef(c);
    const { head, model } = await evaluationModel(deps, c.get("person"), t);
    const view = await views.load(deps, c.get("person"), t, head.version);
    const form = c.get("form");
    const text = form.get(FIELD.context) ?? "";
    const filter = (form.get(FIELD.flag) ?? "").trim().slice(0, 200);
    let context;
    try {
      context = validateContext(parseJson(text));
    } catch (err) {
      if (!(err instanceof CfgtoolError) || err.status !== 400) throw err;
      return page(c, view, t.environment, { text, filter, problem: err.message }, 400);
    }
    const all = evaluateAll(model, t.environment, context);
    const needle = filter.toLowerCase();
    const keys = model.flagKeys.filter((k) => needle === "" || k.includes(needle));
    return page(c, view, t.environment, {
      text,
      filter,
      outcome: {
        results: keys.slice(0, MAX_PLAYGROUND_ROWS).map((k) => all[k]!),
        matched: keys.length,
        version: model.version,
      },
    });
  });

  return app;
}

/** The person's text as JSON, or a 400 that says where it breaks. */
function parseJson(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidContextError(
      `The context is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function page(
  c: Context<ConsoleEnv>,
  view: NamespaceView,
  env: string,
  state: { text: string; filter: string; problem?: string; outcome?: Outcome },
  status: 200 | 400 = 200,
) {
  const { tenant, namespace, manifest } = view;
  const envs = Object.keys(manifest.namespace.environments);
  return consolePage(
    c,
    {
      title: `Evaluation playground: ${env}`,
      tenant,
      section: "namespaces",
      status,
      live: ui.live(tenant, namespace, view.head.version),
      crumbs: namespaceCrumbs(
        tenant,
        namespace,
        { label: env, href: ui.flags(tenant, namespace, env) },
        { label: "Playground" },
      ),
    },
    <>
      <p>
        What every flag of <strong>{namespace}</strong> serves a context in{" "}
        <strong>{env}</strong>, and why: the same evaluation the API and the SDKs get. The box
        starts with every attribute the segments and rollouts read; change the values.
      </p>
      <ProblemNotice id="context-problem" message={state.problem} />
      <form method="post" action={ui.playground(tenant, namespace, env)} class="card">
        <CsrfField token={c.get("csrf")} />
        <Field id="playground-context" label="Context (JSON)">
          <textarea
            id="playground-context"
            name={FIELD.context}
            rows={14}
            spellcheck={false}
            aria-invalid={state.problem === undefined ? undefined : "true"}
            aria-describedby={state.problem === undefined ? undefined : "context-problem"}
          >
            {state.text}
          </textarea>
        </Field>
        <Field id="playground-flag" label="Only flags whose key contains (optional)">
          <input id="playground-flag" type="text" name={FIELD.flag} value={state.filter} />
        </Field>
        <div class="actions">
          <button type="submit">Evaluate in {env}</button>
          {envs.filter((e) => e !== env).map((e) => (
            <button
              type="submit"
              class="secondary"
              formaction={ui.playground(tenant, namespace, e)}
            >
              Evaluate in {e}
            </button>
          ))}
        </div>
      </form>
      {state.outcome === undefined
        ? null
        : <Results view={view} env={env} outcome={state.outcome} filter={state.filter} />}
    </>,
  );
}

const RESULT_COLUMNS = [
  "Flag",
  "Value",
  { label: "Variation", secondary: true },
  "Reason",
  "Why",
] as const;

function Results(props: { view: NamespaceView; env: string; outcome: Outcome; filter: string }) {
  const { view, env, outcome, filter } = props;
  const { tenant, namespace, manifest } = view;
  const shown = outcome.results.length;
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      <p class="small muted" role="status">
        {shown === outcome.matched
          ? `${shown} flag${shown === 1 ? "" : "s"}`
          : `The first ${shown} of ${outcome.matched} flags (narrow them with the filter)`}
        {filter === "" ? "" : ` whose key contains “${filter}”`} evaluated in {env} at version{" "}
        <a href={ui.version(tenant, namespace, outcome.version)}>{outcome.version}</a>.
      </p>
      {shown === 0
        ? <p>No flag to show.</p>
        : (
          <DataTable id="results" class="keyed" columns={RESULT_COLUMNS}>
            {outcome.results.map((r) => {
              const flag = Object.hasOwn(manifest.flags, r.flag)
                ? manifest.flags[r.flag]
                : undefined;
              return (
                <tr>
                  <th scope="row" class="wrap">
                    <a href={ui.flag(tenant, namespace, r.flag, env)}>{r.flag}</a>
                  </th>
                  <td class="wrap">
                    <code>{JSON.stringify(r.value)}</code>
                  </td>
                  <td class="hide-narrow wrap">{r.variation ?? ""}</td>
                  <td>
                    <code class={`reason ${r.reason.toLowerCase()}`}>
                      {r.reason.split("_").map((part, i) => (
                        <>
                          {i === 0 ? null : (
                            <>
                              _<wbr />
                            </>
                          )}
                          {part}
                        </>
                      ))}
                    </code>
                  </td>
                  <td class="wrap small">
                    <Why view={view} why={explainResult(flag, env, r)} />
                  </td>
                </tr>
              );
            })}
          </DataTable>
        )}
    </section>
  );
}

/** The explanation, with the matching rule's segment linked to its page. */
function Why(props: { view: NamespaceView; why: Explanation }) {
  const { view, why } = props;
  const rule = why.rule;
  if (rule === undefined) return <>{why.text}</>;
  return (
    <>
      {rule.label}: {rule.segment === undefined ? "every context" : (
        <>
          segment <a href={ui.segment(view.tenant, view.namespace, rule.segment)}>{rule.segment}</a>
        </>
      )}, {rule.action}
      {why.outcome === undefined ? null : `: ${why.outcome}`}
    </>
  );
}
