/**
 * What `tenant delete` and `namespace delete` are about to remove, as lines
 * for the confirmation prompt (lib/cli/confirm.ts): the namespaces and their
 * manifest versions, and how many active tokens will be revoked. The counts
 * are asked of the service; a count the caller may not read is described
 * without a number. A missing tenant or namespace fails here, before the
 * question is asked.
 *
 * @module
 */
import type { ServiceClient, TokenQuery } from "../client/api.ts";
import { headVersion } from "./namespace_head.ts";

/**
 * The prompt lines for deleting one namespace.
 *
 * @param client the service
 * @param tenant the tenant slug
 * @param namespace the namespace slug
 * @returns the lines
 *
 * @example
 * ```ts
 * import type { ServiceClient } from "../client/api.ts";
 * import { namespaceDeletionDetails } from "./deletion_details.ts";
 * const client = {
 *   getNamespace: () => Promise.resolve({ slug: "web", head: { version: 3 } }),
 *   listTokens: () => Promise.resolve({ items: [{}, {}], next: null }),
 * } as unknown as ServiceClient;
 * const lines = await namespaceDeletionDetails(client, "acme", "web");
 * if (lines[1] !== "  - all its manifest versions (now at version 3)") throw new Error(lines[1]);
 * if (lines[2] !== "  - 2 active tokens bound to it, revoked") throw new Error(lines[2]);
 * ```
 */
export async function namespaceDeletionDetails(
  client: ServiceClient,
  tenant: string,
  namespace: string,
): Promise<string[]> {
  const version = headVersion(await client.getNamespace(tenant, namespace));
  const tokens = await activeTokens(client, { tenant, namespace });
  return [
    `This deletes namespace ${tenant}/${namespace} for good:`,
    `  - all its manifest versions${version === undefined ? "" : ` (now at version ${version})`}`,
    `  - ${tokensPhrase(tokens)} bound to it, revoked`,
    "  - its admin list",
  ];
}

/**
 * The prompt lines for deleting a tenant.
 *
 * @param client the service
 * @param tenant the tenant slug
 * @returns the lines
 *
 * @example
 * ```ts
 * import type { ServiceClient } from "../client/api.ts";
 * import { tenantDeletionDetails } from "./deletion_details.ts";
 * const client = {
 *   listNamespaces: () => Promise.resolve([{ slug: "web" }, { slug: "api" }]),
 *   listTokens: () => Promise.reject(new Error("403")), // may not list tokens: no number
 * } as unknown as ServiceClient;
 * const lines = await tenantDeletionDetails(client, "acme");
 * if (lines[1] !== "  - 2 namespaces (web, api) with all their manifest versions") throw new Error();
 * if (!lines[2]!.startsWith("  - every active token bound")) throw new Error(lines[2]);
 * ```
 */
export async function tenantDeletionDetails(
  client: ServiceClient,
  tenant: string,
): Promise<string[]> {
  const namespaces = await client.listNamespaces(tenant);
  const tokens = await activeTokens(client, { tenant });
  const names = namespaces.map((n) => n.slug);
  return [
    `This deletes tenant ${tenant} for good:`,
    `  - ${plural(names.length, "namespace")}${names.length ? ` (${names.join(", ")})` : ""}` +
    " with all their manifest versions",
    `  - ${tokensPhrase(tokens)} bound to the tenant or its namespaces, revoked`,
    "  - its admin list and those of its namespaces",
  ];
}

/** Counts the active tokens matching a query, or null when the caller may not list them. */
async function activeTokens(client: ServiceClient, query: TokenQuery): Promise<number | null> {
  let count = 0;
  let after: string | undefined;
  try {
    for (let pages = 0; pages < 100; pages++) {
      const page = await client.listTokens({
        ...query,
        status: "active",
        ...(after === undefined ? {} : { after }),
      });
      count += page.items.length;
      if (page.next === null) return count;
      after = page.next;
    }
    return count;
  } catch {
    return null;
  }
}

function tokensPhrase(n: number | null): string {
  return n === null ? "every active token" : plural(n, "active token");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * The `(N tokens revoked)` suffix of a delete's success line, from the
 * service's `revoked_tokens` (a list of token ids; a count is accepted too).
 *
 * @param res the service's answer to the delete
 * @returns the suffix, or "" when the answer has no such field
 *
 * @example
 * ```ts
 * import { revokedSuffix } from "./deletion_details.ts";
 * if (revokedSuffix({ revoked_tokens: ["tok_1"] }) !== " (1 token revoked)") throw new Error();
 * ```
 */
export function revokedSuffix(res: Record<string, unknown>): string {
  const r = res.revoked_tokens;
  const n = Array.isArray(r) ? r.length : typeof r === "number" ? r : null;
  return n === null ? "" : ` (${plural(n, "token")} revoked)`;
}
