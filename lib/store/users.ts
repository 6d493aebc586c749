/**
 * Human users: `["user", id]` with ids `usr_<ulid>`, and the unique email
 * index `["user_by_email", email]` (emails compared in lower case). Login
 * flows (OIDC, email) create users through the same functions. Deleting a
 * user also removes its admin memberships, ends its sessions and removes
 * it from the people of every tenant it signed in to, so no record points
 * at a user that is gone.
 *
 * @module
 */
import { isPlainEmail, normalEmail } from "../protocol/login_policy.ts";
import { bumpCredentialEpoch } from "./credential_epoch.ts";
import { ConflictError, InvalidRequestError, NotFoundError } from "../errors.ts";
import {
  sessionByDigestKey,
  sessionByUserKey,
  sessionPrefix,
  userByEmailKey,
  userKey,
  userPrefix,
} from "./keys.ts";
import {
  memberEntry,
  membershipKeys,
  membershipsOfUser,
  type UserMembership,
} from "./membership.ts";
import { addAudit, AUDIT_MUTATIONS, type AuditActor } from "./audit.ts";
import { personKeysOfUser } from "./people.ts";
import { checkLength, MAX_EMAIL_LENGTH } from "../protocol/limits.ts";
import { deleteInBatches, KV_LIMITS } from "./kv_batch.ts";
import { ulid } from "./ulid.ts";

/** A human user. */
export interface UserRecord {
  /** `usr_<ulid>`. */
  id: string;
  /** Lower-case email, unique. */
  email: string;
  created_at: string;
}

/**
 * Creates a user; 409 `conflict` when the email is taken, 400 when it is
 * not a plain ASCII address (one `@`, no spaces: as every sign-in method
 * requires, so that a Unicode look-alike can never stand beside the
 * address it imitates).
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
 * const refused = await createUser(kv, { email: "\u212Aate@example.com" }).then(() => false, () => true);
 * if (!refused) throw new Error("a look-alike address");
 * kv.close();
 * ```
 */
export async function createUser(
  kv: Deno.Kv,
  input: { email: string; now?: () => Date },
): Promise<UserRecord> {
  const email = normalEmail(input.email);
  checkLength("email", email, MAX_EMAIL_LENGTH);
  if (!isPlainEmail(email)) {
    throw new InvalidRequestError(
      `Cannot use ${JSON.stringify(input.email)} as email: cfgtool takes plain ASCII ` +
        "addresses only (one @, no spaces)",
    );
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
  if (idOrEmail.length > MAX_EMAIL_LENGTH) return null; // names no user, and is too long a key
  let id = idOrEmail;
  if (idOrEmail.includes("@")) {
    const idx = await kv.get<string>(
      userByEmailKey(normalEmail(idOrEmail)),
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

/**
 * Whether a user record with this id exists (one read; no email lookup).
 *
 * @param kv the store
 * @param id the user id (`usr_…`)
 * @returns true when the user exists
 *
 * @example
 * ```ts
 * import { createUser, userExists } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const u = await createUser(kv, { email: "a@b.c" });
 * if (!await userExists(kv, u.id) || await userExists(kv, "usr_x")) throw new Error();
 * kv.close();
 * ```
 */
export async function userExists(kv: Deno.Kv, id: string): Promise<boolean> {
  return (await kv.get(userKey(id))).value !== null;
}

/**
 * Every user, in email order.
 *
 * @param kv the store
 * @returns the users
 *
 * @example
 * ```ts
 * import { createUser, listUsers } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * await createUser(kv, { email: "bo@example.com" });
 * await createUser(kv, { email: "ana@example.com" });
 * if ((await listUsers(kv)).map((u) => u.email).join() !== "ana@example.com,bo@example.com") {
 *   throw new Error();
 * }
 * kv.close();
 * ```
 */
export async function listUsers(kv: Deno.Kv): Promise<UserRecord[]> {
  const out: UserRecord[] = [];
  for await (const e of kv.list<UserRecord>({ prefix: userPrefix() })) out.push(e.value);
  return out.sort((a, b) => a.email < b.email ? -1 : a.email > b.email ? 1 : 0);
}

/** What {@linkcode deleteUser} removed. */
export interface DeletedUser {
  user: UserRecord;
  /** The admin memberships removed. */
  memberships: UserMembership[];
  /** Ids of the sessions ended. */
  sessions: string[];
}

/**
 * Mutations of the one checked commit that deletes a user with everything
 * it holds: half of Deno KV's 1,000 ({@linkcode KV_LIMITS.mutations}),
 * leaving room for the sizes of the audit entries written with them. A
 * user who holds more goes first and the rest follows in batches
 * ({@linkcode deleteInBatches}).
 */
const ONE_COMMIT = KV_LIMITS.mutations / 2;

/**
 * Deletes a user (by id or email) with its email index, every admin
 * membership (tenant and namespace lists), every session, so its session
 * tokens are refused at once, and its records in the people of each
 * tenant it signed in to (lib/store/people.ts). Everything goes in one atomic commit,
 * checked against the user record, unless the user holds hundreds of
 * records: then the user goes first (which already locks it out: a session
 * of a missing user is refused and a missing user cannot be made an admin)
 * and the rest follows in batches. A membership or session added while the
 * delete ran is swept once the user is gone. 404 `user_not_found`.
 * Each membership removed gets its `admin.removed` audit entry (reason
 * `user_deleted`), in the same commit as the removal.
 *
 * @param kv the store
 * @param idOrEmail `usr_…` or an email
 * @param actor who deletes (default: the system, as host commands do)
 * @returns the user and what was removed with it
 *
 * @example
 * ```ts
 * import { createUser, deleteUser, findUser } from "./users.ts";
 * const kv = await Deno.openKv(":memory:");
 * const u = await createUser(kv, { email: "a@b.c" });
 * await kv.set(["tenant_admin", "acme", u.id], { user_id: u.id });
 * await kv.set(["tenant_admin_by_user", u.id, "acme"], true);
 * const gone = await deleteUser(kv, "a@b.c");
 * if (gone.memberships.length !== 1 || await findUser(kv, u.id) !== null) throw new Error();
 * if ((await kv.get(["tenant_admin", "acme", u.id])).value !== null) throw new Error();
 * kv.close();
 * ```
 */
export async function deleteUser(
  kv: Deno.Kv,
  idOrEmail: string,
  actor: AuditActor = HOST,
): Promise<DeletedUser> {
  while (true) {
    const user = await getUser(kv, idOrEmail);
    const entry = await kv.get<UserRecord>(userKey(user.id));
    if (entry.value === null) continue; // deleted in between: getUser now says 404
    const held = await recordsOf(kv, user.id, user.email);
    const own = [userKey(user.id), userByEmailKey(user.email)];
    const all =
      held.keys.length + own.length + AUDIT_MUTATIONS * held.memberships.length <= ONE_COMMIT;
    let op = bumpCredentialEpoch(kv.atomic().check(entry));
    for (const k of all ? [...own, ...held.keys] : own) op = op.delete(k);
    const now = new Date();
    if (all) {
      for (const m of held.memberships) addAudit(op, removal(actor, now, m, entry.value));
    }
    if (!(await op.commit()).ok) continue; // changed meanwhile: read again
    if (!all) await removeInBatches(kv, held, actor, entry.value);
    const late = await recordsOf(kv, user.id, user.email);
    await removeInBatches(kv, late, actor, entry.value);
    return {
      user: entry.value,
      memberships: [...held.memberships, ...late.memberships],
      sessions: [...held.sessions, ...late.sessions],
    };
  }
}

/** The memberships, sessions and people records of a user, and every key that holds them. */
async function recordsOf(
  kv: Deno.Kv,
  userId: string,
  email: string,
): Promise<{ memberships: UserMembership[]; sessions: string[]; keys: Deno.KvKey[] }> {
  const memberships = await membershipsOfUser(kv, userId);
  const keys: Deno.KvKey[] = memberships.flatMap((m) => membershipKeys(userId, m));
  keys.push(...await personKeysOfUser(kv, userId, email));
  const sessions: string[] = [];
  // Sessions are few and short-lived; a scan finds them without an index.
  for await (
    const e of kv.list<{ id: string; user_id: string; digest: string }>({
      prefix: sessionPrefix(),
    })
  ) {
    if (e.value.user_id !== userId) continue;
    sessions.push(e.value.id);
    keys.push(e.key, sessionByDigestKey(e.value.digest), sessionByUserKey(userId, e.value.id));
  }
  return { memberships, sessions, keys };
}

/** The actor of a deletion made on the server host (`cfgtool admin user delete`). */
const HOST: AuditActor = { id: "system", principal_type: "system", request_id: null };

function removal(actor: AuditActor, now: Date, m: UserMembership, user: UserRecord) {
  return memberEntry(
    "admin.removed",
    actor,
    now,
    { tenant: m.tenant, namespace: m.namespace },
    user.id,
    user,
    "user_deleted",
  );
}

/**
 * Removes what a user held after the user record is gone: each membership
 * with its `admin.removed` entry in one commit, then the other keys.
 */
async function removeInBatches(
  kv: Deno.Kv,
  held: { memberships: UserMembership[]; keys: Deno.KvKey[] },
  actor: AuditActor,
  user: UserRecord,
): Promise<void> {
  const now = new Date();
  const memberKeys = new Set<string>();
  for (const m of held.memberships) {
    const keys = membershipKeys(user.id, m);
    for (const k of keys) memberKeys.add(JSON.stringify(k));
    let op = kv.atomic();
    for (const k of keys) op = op.delete(k);
    await addAudit(op, removal(actor, now, m, user)).commit();
  }
  await deleteInBatches(kv, held.keys.filter((k) => !memberKeys.has(JSON.stringify(k))));
}
