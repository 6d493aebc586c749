/**
 * Names for the ids console pages show (audit entries, version authors,
 * admins, who set a login policy): a user id becomes the user's email, a
 * token id the token's name when the reader may read that token
 * (`getToken`, lib/services/tokens.ts, so a token's name shows only to
 * those the API shows it to); otherwise the id stays. Each id is looked
 * up once per page.
 *
 * @module
 */
import type { AuthDeps } from "../auth/deps.ts";
import type { Principal } from "../auth/principal.ts";
import { getToken } from "../services/tokens.ts";
import { ForbiddenError, NotFoundError } from "../errors.ts";
import type { PublicToken } from "../store/tokens.ts";
import { findUser, type UserRecord } from "../store/users.ts";

/** Cached lookups of one page. */
export interface PeopleNames {
  /** The user of a user id (`usr_…`), or null (no such user, or not a user id). */
  user(userId: string): Promise<UserRecord | null>;
  /** The email of a user id, or null (no such user, or not a user id). */
  email(userId: string): Promise<string | null>;
  /** The token, when it exists and the reader may read it; else null. */
  token(tokenId: string): Promise<PublicToken | null>;
  /** A user's email, a readable token's name, or else the id itself. */
  label(id: string): Promise<string>;
}

/**
 * Lookups of user emails and readable tokens for one page, read as
 * `principal`.
 *
 * @param deps store, key, clock
 * @param principal the reader
 * @returns the lookups
 *
 * @example
 * ```ts
 * import { peopleNames } from "./people_names.ts";
 * import { createUser } from "../store/users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const ana = await createUser(kv, { email: "ana@acme.test" });
 * const p = { kind: "session" as const, user_id: ana.id, session_id: "ssn_1", tenants: ["acme"], groups: [], since: "" };
 * const names = peopleNames({ kv } as never, p);
 * if (await names.email(ana.id) !== "ana@acme.test" || await names.email("anonymous") !== null) throw new Error();
 * if (await names.token("tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") !== null) throw new Error();
 * if (await names.label(ana.id) !== "ana@acme.test" || await names.label("tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") !== "tok_01ARZ3NDEKTSV4RRFFQ69G5FAV") throw new Error();
 * kv.close();
 * ```
 */
export function peopleNames(deps: AuthDeps, principal: Principal): PeopleNames {
  const users = new Map<string, Promise<UserRecord | null>>();
  const tokens = new Map<string, Promise<PublicToken | null>>();
  const names: PeopleNames = {
    user(userId) {
      if (!userId.startsWith("usr_")) return Promise.resolve(null);
      let found = users.get(userId);
      if (found === undefined) {
        found = findUser(deps.kv, userId);
        users.set(userId, found);
      }
      return found;
    },
    async email(userId) {
      return (await names.user(userId))?.email ?? null;
    },
    token(tokenId) {
      if (!tokenId.startsWith("tok_")) return Promise.resolve(null);
      let found = tokens.get(tokenId);
      if (found === undefined) {
        found = getToken(deps, principal, tokenId).catch((err) => {
          if (err instanceof ForbiddenError || err instanceof NotFoundError) return null;
          throw err;
        });
        tokens.set(tokenId, found);
      }
      return found;
    },
    async label(id) {
      return (await names.email(id)) ?? (await names.token(id))?.name ?? id;
    },
  };
  return names;
}
