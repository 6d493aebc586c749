/**
 * The manifest version a namespace is at, read from the service's answer.
 * `namespace list` shows it and `namespace delete` names it in its prompt
 * (lib/cli/deletion_details.ts); it lives apart from both so neither command
 * module imports the other.
 *
 * @module
 */
import type { NamespaceInfo } from "../client/api.ts";

/**
 * The manifest version a namespace is at: the service lists it as
 * `head.version` (`version` is read too, for older services).
 *
 * @param n a namespace as listed
 * @returns the version, or undefined when the listing has none
 *
 * @example
 * ```ts
 * import { headVersion } from "./namespace_head.ts";
 * if (headVersion({ slug: "web", head: { version: 2 } }) !== 2) throw new Error();
 * if (headVersion({ slug: "web", version: 5 }) !== 5) throw new Error();
 * if (headVersion({ slug: "web" }) !== undefined) throw new Error();
 * ```
 */
export function headVersion(n: NamespaceInfo): number | undefined {
  const head = n.head;
  if (typeof head === "object" && head !== null && "version" in head) {
    const v = (head as { version: unknown }).version;
    if (typeof v === "number") return v;
  }
  return typeof n.version === "number" ? n.version : undefined;
}
