/**
 * URLs of the closure endpoint (docs/events.md):
 * `<base>/api/v1/tenants/{tenant}/namespaces/{slug}/closure?version=&subscription=[&token=]`.
 * The server signs them into `snapshot_url` fields; the SDK builds them for
 * its bearer re-fetches and learns a namespace's tenant from a signed one.
 *
 * @module
 */

/** The namespace a closure URL names. */
export interface ClosureTarget {
  /** Tenant slug. */
  tenant: string;
  /** Namespace slug. */
  namespace: string;
}

const CLOSURE_PATH_RE = /^\/api\/v1\/tenants\/([^/]+)\/namespaces\/([^/]+)\/closure$/;

/**
 * The closure endpoint URL of one version of a subscription; with `token`
 * (a signed closure token) it needs no `Authorization` header.
 *
 * @param base scheme, host and any path prefix, without a trailing slash
 * @param tenant tenant slug
 * @param namespace namespace slug
 * @param version version
 * @param subscription encoded subscription (lib/protocol/subscription.ts)
 * @param token signed token, if any
 * @returns the absolute URL
 *
 * @example
 * ```ts
 * import { closureUrl } from "./closure_url.ts";
 * const u = closureUrl("http://h", "acme", "web", 2, "Kg", "t.s");
 * if (u !== "http://h/api/v1/tenants/acme/namespaces/web/closure?version=2&subscription=Kg&token=t.s") throw new Error(u);
 * if (closureUrl("http://h", "acme", "web", 2, "Kg").endsWith("token=")) throw new Error();
 * ```
 */
export function closureUrl(
  base: string,
  tenant: string,
  namespace: string,
  version: number,
  subscription: string,
  token?: string,
): string {
  return `${base}/api/v1/tenants/${encodeURIComponent(tenant)}/namespaces/${
    encodeURIComponent(namespace)
  }/closure?version=${version}&subscription=${subscription}${
    token === undefined ? "" : `&token=${token}`
  }`;
}

/**
 * The tenant and namespace a closure URL names, or null when the URL is not
 * one (or not a URL at all).
 *
 * @param url an absolute URL
 * @returns tenant and namespace slugs, or null
 *
 * @example
 * ```ts
 * import { closureTarget } from "./closure_url.ts";
 * const t = closureTarget("http://h/api/v1/tenants/acme/namespaces/web/closure?version=2");
 * if (t?.tenant !== "acme" || t.namespace !== "web") throw new Error();
 * if (closureTarget("not a url") !== null) throw new Error();
 * ```
 */
export function closureTarget(url: string): ClosureTarget | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const m = CLOSURE_PATH_RE.exec(path);
  if (m === null) return null;
  try {
    return { tenant: decodeURIComponent(m[1]!), namespace: decodeURIComponent(m[2]!) };
  } catch {
    return null;
  }
}
