/**
 * Who made a version, as the version pages show it: a person's email, the
 * name of a token the reader may read (marked as a token), or else the id
 * itself (the names are the people service's, read as the page's reader).
 *
 * @module
 */
import type { Principal } from "../auth/principal.ts";
import { authDeps } from "../http/authn.ts";
import type { AppDeps } from "../http/deps.ts";
import { peopleNames } from "../services/people.ts";

/** Who made a version, as a page shows it. */
export interface Author {
  /** An email, a token's name, or the id itself. */
  label: string;
  /** The id (`usr_…`, `tok_…`). */
  id: string;
  token: boolean;
}

/**
 * Who made each version: an email for a person, a name for a token the
 * viewer may read.
 *
 * @param deps the app dependencies
 * @param person the page's reader
 * @param ids the authors' ids (`created_by`)
 * @returns id → author
 *
 * @example
 * ```ts ignore
 * const who = await versionAuthors(deps, c.get("person"), page.items.map((m) => m.created_by));
 * ```
 */
export async function versionAuthors(
  deps: AppDeps,
  person: Principal,
  ids: Iterable<string>,
): Promise<Map<string, Author>> {
  const names = peopleNames(authDeps(deps), person);
  return new Map(
    await Promise.all(
      [...new Set(ids)].map(async (id): Promise<[string, Author]> => [
        id,
        { id, label: await names.label(id), token: id.startsWith("tok_") },
      ]),
    ),
  );
}

/**
 * An author's name, with its id as the title when they differ, and
 * "(token)" after a token's.
 *
 * @param props the author
 * @returns the name
 *
 * @example
 * ```tsx
 * import { AuthorName } from "./version_authors.tsx";
 * const html = String(<AuthorName author={{ id: "tok_1", label: "ci", token: true }} />);
 * if (!html.includes('title="tok_1"') || !html.includes("(token)")) throw new Error(html);
 * ```
 */
export function AuthorName(props: { author: Author }) {
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
