/**
 * The console's addresses, built in one place: every page links with these
 * helpers, so a route and the links to it cannot drift apart. Every segment
 * is URL-encoded.
 *
 * @module
 */

const e = encodeURIComponent;

/** Query parameters: undefined and empty values are left out. */
function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s === "" ? "" : `?${s}`;
}

/**
 * Builders of console paths.
 *
 * @example
 * ```ts
 * import { ui } from "./urls.ts";
 * if (ui.flags("acme", "web", "prod") !== "/ui/t/acme/ns/web/env/prod") throw new Error();
 * if (ui.flag("acme", "web", "a b", "prod") !== "/ui/t/acme/ns/web/flags/a%20b?env=prod") throw new Error();
 * const toggle = ui.flagChange("acme", "web", "f", "prod", "toggle");
 * if (toggle !== "/ui/t/acme/ns/web/flags/f/change?env=prod&kind=toggle") throw new Error(toggle);
 * const approve = ui.changeAction("acme", "web", "cr_1", "approve");
 * if (approve !== "/ui/t/acme/ns/web/changes/cr_1/approve") throw new Error(approve);
 * ```
 */
export const ui = {
  home: (): string => "/ui",
  tenants: (): string => "/ui/tenants",
  tenant: (t: string): string => `/ui/t/${e(t)}`,
  namespace: (t: string, ns: string): string => `/ui/t/${e(t)}/ns/${e(ns)}`,
  namespaces: (t: string): string => `/ui/t/${e(t)}/namespaces`,
  namespaceDelete: (t: string, ns: string): string => `/ui/t/${e(t)}/ns/${e(ns)}/delete`,
  flags: (t: string, ns: string, env: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/env/${e(env)}${query(q)}`,
  flag: (t: string, ns: string, flag: string, env?: string): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/flags/${e(flag)}${query({ env })}`,
  flagChange: (t: string, ns: string, flag: string, env?: string, kind?: string): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/flags/${e(flag)}/change${query({ env, kind })}`,
  segment: (t: string, ns: string, segment: string): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/segments/${e(segment)}`,
  playground: (t: string, ns: string, env: string): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/env/${e(env)}/playground`,
  versions: (t: string, ns: string, q: Record<string, string | number | undefined> = {}): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/versions${query(q)}`,
  version: (t: string, ns: string, v: number, q: Record<string, string | number> = {}): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/versions/${v}${query(q)}`,
  diff: (t: string, ns: string, from: number, to: number): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/diff${query({ from, to })}`,
  rollback: (t: string, ns: string, v: number): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/versions/${v}/rollback`,
  changes: (t: string, ns: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/changes${query(q)}`,
  changeRequest: (t: string, ns: string, id: string, q: Record<string, string> = {}): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/changes/${e(id)}${query(q)}`,
  changeAction: (t: string, ns: string, id: string, action: string): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/changes/${e(id)}/${e(action)}`,
  changesForm: (t: string, ns: string, form: "rollout" | "protection"): string =>
    `/ui/t/${e(t)}/ns/${e(ns)}/changes/${form}`,
  tokens: (t: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/tokens${query(q)}`,
  token: (t: string, id: string): string => `/ui/t/${e(t)}/tokens/${e(id)}`,
  tokenAction: (t: string, id: string, action: "rotate" | "revoke"): string =>
    `/ui/t/${e(t)}/tokens/${e(id)}/${action}`,
  people: (t: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/people${query(q)}`,
  peopleChange: (t: string, change: "add" | "remove"): string => `/ui/t/${e(t)}/people/${change}`,
  loginPolicy: (t: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/login-policy${query(q)}`,
  audit: (t: string, q: Record<string, string | undefined> = {}): string =>
    `/ui/t/${e(t)}/audit${query(q)}`,
  live: (t: string, ns: string, since?: number): string =>
    `/ui/live${query({ tenant: t, namespace: ns, since })}`,
  asset: (name: string): string => `/ui/assets/${e(name)}`,
  /** A namespace's segments. */
  segments: (t: string, ns: string): string => `/ui/t/${e(t)}/ns/${e(ns)}/segments`,
  /**
   * The authoring editors (lib/console/authoring/), under `/edit/` so that
   * no flag or segment key can shadow them.
   */
  edit: {
    newFlag: (t: string, ns: string): string => `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/_new`,
    /** A flag's description, default and variations. */
    flag: (t: string, ns: string, flag: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}`,
    /** One part of a flag (`variations/add`, `variations/remove`, `delete`…). */
    flagPart: (t: string, ns: string, flag: string, part: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}/${part}`,
    /** A scope's rules: the flag's own (`env` absent) or an environment's. */
    rules: (t: string, ns: string, flag: string, env?: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}/rules${query({ env })}`,
    /** One action on a scope's rules (`add`, `replace`, `remove`, `move`). */
    ruleAction: (t: string, ns: string, flag: string, action: string, env?: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}/rules/${action}${query({ env })}`,
    /** An environment's override of a flag (enabled, default, own rules). */
    override: (t: string, ns: string, flag: string, env: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}/override${query({ env })}`,
    /** Copying a flag's configuration from one environment to another. */
    promote: (t: string, ns: string, flag: string, q: Record<string, string> = {}): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/flags/${e(flag)}/promote${query(q)}`,
    newSegment: (t: string, ns: string): string => `/ui/t/${e(t)}/ns/${e(ns)}/edit/segments/_new`,
    segment: (t: string, ns: string, segment: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/segments/${e(segment)}`,
    segmentDelete: (t: string, ns: string, segment: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/segments/${e(segment)}/delete`,
    /** The environments: add one, `public_evaluate`, remove. */
    environments: (t: string, ns: string, action?: string): string =>
      `/ui/t/${e(t)}/ns/${e(ns)}/edit/environments${action === undefined ? "" : `/${action}`}`,
  },
};
