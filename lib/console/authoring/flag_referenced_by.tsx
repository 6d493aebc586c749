/**
 * What still refers to something a form tried to remove (a variation, an
 * environment, a segment): the refusal's `details.referenced_by`, one line
 * per place, each linking to the flag or segment to change first.
 *
 * @module
 */
import type { Reference } from "../../flags/authoring/mod.ts";
import type { FormState } from "../edit_flow.tsx";
import { ui } from "../urls.ts";

/**
 * The references of a refusal, if it has any.
 *
 * @param state the form's state
 * @returns the list, or nothing
 *
 * @example
 * ```tsx
 * import { ReferencedBy } from "./flag_referenced_by.tsx";
 * import { InvalidRequestError } from "../../errors.ts";
 * const refusal = new InvalidRequestError("used", {
 *   details: { referenced_by: [{ kind: "flag", key: "a", where: "rule 1", path: "rule[0]" }] },
 * });
 * const state = { refusal, view: { tenant: "acme", namespace: "web" } } as never;
 * const html = String(await (<ReferencedBy state={state} />));
 * if (!html.includes('href="/ui/t/acme/ns/web/flags/a"') || !html.includes("rule 1")) throw new Error(html);
 * if (String(await (<ReferencedBy state={{ view: {} } as never} />)) !== "") throw new Error();
 * ```
 */
export function ReferencedBy(props: { state: FormState<unknown> }) {
  const { state } = props;
  const refs = refusalReferences(state.refusal?.details) ?? [];
  if (refs.length === 0) return null;
  return (
    <section aria-labelledby="referenced-by-title" class="card">
      <h2 id="referenced-by-title">What still uses it</h2>
      <ReferenceList id="referenced-by" view={state.view} refs={refs} />
    </section>
  );
}

/**
 * A list of references, one line per place, each linking to its flag or
 * segment.
 *
 * @example
 * ```tsx
 * import { ReferenceList } from "./flag_referenced_by.tsx";
 * const refs = [{ kind: "segment", key: "eu", where: "its rule", path: "" }] as never;
 * const view = { tenant: "acme", namespace: "web" };
 * const html = String(await (<ReferenceList id="refs" view={view} refs={refs} />));
 * if (!html.includes('<ul id="refs">') || !html.includes('href="/ui/t/acme/ns/web/segments/eu"')) throw new Error(html);
 * ```
 */
export function ReferenceList(
  props: { id: string; view: { tenant: string; namespace: string }; refs: readonly Reference[] },
) {
  const { tenant, namespace } = props.view;
  return (
    <ul id={props.id}>
      {props.refs.map((r) => (
        <li>
          {r.kind === "segment" ? "segment " : "flag "}
          <a
            href={r.kind === "segment"
              ? ui.segment(tenant, namespace, r.key)
              : ui.flag(tenant, namespace, r.key)}
          >
            {r.key}
          </a>: {r.where}
        </li>
      ))}
    </ul>
  );
}

/**
 * The well-formed references of a refusal's details
 * (`details.referenced_by`), or undefined when the details have no list.
 *
 * @param details the refusal's details
 * @returns the references
 *
 * @example
 * ```ts
 * import { refusalReferences } from "./flag_referenced_by.tsx";
 * const details = { referenced_by: [{ kind: "flag", key: "a", where: "rule 1" }, { key: 1 }] };
 * if (refusalReferences(details)?.length !== 1 || refusalReferences({}) !== undefined) throw new Error();
 * ```
 */
export function refusalReferences(details: unknown): Reference[] | undefined {
  const list = (details as { referenced_by?: unknown } | undefined)?.referenced_by;
  if (!Array.isArray(list)) return undefined;
  return list.filter((r): r is Reference =>
    typeof r === "object" && r !== null && typeof r.key === "string" &&
    typeof r.where === "string" && typeof r.kind === "string"
  );
}
