/**
 * Human users: `["user", id]` with ids `usr_<ulid>`, and the unique email
 * index `["user_by_email", email]` (emails compared in lower case). Login
 * flows (OIDC, email) create users through the same functions.
 *
 * @module
 */
import { ConflictError, NotFoundError, UsageError } from "../errors.ts";
import { userByEmailKey, userKey } from "./keys.ts";
import { ulid } from "./ulid.ts";

/** A human user. */
export interface UserRecord {
  /** `usr_<ulid>`. */
  id: string;
  /** Lower-case email, unique. */
  email: string;
  created_at: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * Creates a user; 409 `conflict` when the email is taken, 400 when it is
 * not an email.
 *
 * @param kv the store
 * @param input the email, and a clock for tests
 * @returns the new user
 *
 * @example
 * ```ts
 * import { createUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const user = await createUser(kv, { email: "Ana@example.com" });
 * if (!user.id.startsWith("usr_") || user.email !== "ana@example.com") throw new Error();
 * kv.close();
 * ```
 */
export async function createUser(
  kv: Deno.Kv,
  input: { email: string; now?: () => Date },
): Promise<UserRecord> {
  const email = input.email.trim().toLowerCase();
  if (!EMAIL.test(email)) {
    throw new UsageError(`Cannot use ${JSON.stringify(input.email)} as email`);
  }
  const now = input.now?.() ?? new Date();
  const user: UserRecord = {
    id: `usr_${ulid(now.getTime())}`,
    email,
    created_at: now.toISOString(),
  };
  const res = await kv.atomic()
    .check({ key: userByEmailKey(email), versionstamp: null })
    .set(userKey(user.id), user)
    .set(userByEmailKey(email), user.id)
    .commit();
  if (!res.ok) throw new ConflictError(`User ${email} exists`);
  return user;
}

/**
 * Reads a user by id, or by email when the argument contains `@`.
 *
 * @param kv the store
 * @param idOrEmail `usr_…` or an email
 * @returns the user, or null
 *
 * @example
 * ```ts
 * import { createUser, findUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const u = await createUser(kv, { email: "a@b.c" });
 * if ((await findUser(kv, "A@B.C"))?.id !== u.id) throw new Error();
 * kv.close();
 * ```
 */
export async function findUser(
  kv: Deno.Kv,
  idOrEmail: string,
): Promise<UserRecord | null> {
  let id = idOrEmail;
  if (idOrEmail.includes("@")) {
    const idx = await kv.get<string>(
      userByEmailKey(idOrEmail.trim().toLowerCase()),
    );
    if (idx.value === null) return null;
    id = idx.value;
  }
  return (await kv.get<UserRecord>(userKey(id))).value;
}

/**
 * Like {@linkcode findUser}, but throws 404 `user_not_found`.
 *
 * @param kv the store
 * @param idOrEmail `usr_…` or an email
 * @returns the user
 *
 * @example
 * ```ts
 * import { getUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * let code = "";
 * try { await getUser(kv, "usr_x"); } catch (e) { code = (e as { code: string }).code; }
 * if (code !== "user_not_found") throw new Error(code);
 * kv.close();
 * ```
 */
export async function getUser(
  kv: Deno.Kv,
  idOrEmail: string,
): Promise<UserRecord> {
  const user = await findUser(kv, idOrEmail);
  if (user === null) {
    throw new NotFoundError("user_not_found", `No user ${idOrEmail}`);
  }
  return user;
}
