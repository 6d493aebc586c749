/**
 * The credential epoch: one `Deno.KvU64` counter that every write changing
 * what a credential may do (a token revoked, expired, rotated or re-keyed,
 * a session ended, an admin list or login policy changed, a tenant made or
 * deleted, a namespace deleted) bumps in its own atomic commit.
 * Server processes cache credential records and poll this one key; when it
 * moves, they drop what they cached (lib/auth/credential_cache.ts).
 *
 * @module
 */
import { credentialEpochKey, sessionKey, tokenKey, userKey } from "./keys.ts";
import type { SessionRecord } from "./sessions.ts";
import type { TokenRecord } from "./tokens.ts";

/**
 * Adds the bump of the credential epoch to an atomic operation. A `sum`
 * never conflicts, so it adds no contention to the commit it joins.
 *
 * @param op the atomic operation that changes a credential
 * @returns the same operation
 *
 * @example
 * ```ts
 * import { bumpCredentialEpoch, readCredentialEpoch } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * await bumpCredentialEpoch(kv.atomic()).commit();
 * if (await readCredentialEpoch(kv) !== 1n) throw new Error();
 * kv.close();
 * ```
 */
export function bumpCredentialEpoch(op: Deno.AtomicOperation): Deno.AtomicOperation {
  return op.sum(credentialEpochKey(), 1n);
}

/** Who in this process is told of credential changes committed through each store handle. */
const LOCAL_LISTENERS = new WeakMap<Deno.Kv, Set<() => void>>();

/**
 * Runs `listener` whenever a change of what a credential may do (a commit
 * with {@linkcode bumpCredentialEpoch}) is committed through `kv` in this
 * process and its writer calls {@linkcode credentialsChanged}: so the
 * process that made the change drops what it cached before it answers,
 * without waiting for its epoch poll. Other processes (and other handles
 * on the same store) learn of it through the epoch.
 *
 * @param kv the store handle
 * @param listener the function to run
 * @returns the function that removes it
 *
 * @example
 * ```ts
 * import { credentialsChanged, onCredentialsChanged } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * let told = 0;
 * const stop = onCredentialsChanged(kv, () => told++);
 * credentialsChanged(kv);
 * stop();
 * credentialsChanged(kv);
 * if (told !== 1) throw new Error();
 * kv.close();
 * ```
 */
export function onCredentialsChanged(kv: Deno.Kv, listener: () => void): () => void {
  let set = LOCAL_LISTENERS.get(kv);
  if (set === undefined) LOCAL_LISTENERS.set(kv, set = new Set());
  const own = () => listener(); // one registration per call, even for the same function
  set.add(own);
  return () => void set.delete(own);
}

/**
 * Tells this process's listeners ({@linkcode onCredentialsChanged}) that a
 * commit through `kv` that bumped the credential epoch succeeded. Call it
 * right after the commit, before answering.
 *
 * @param kv the store handle the commit went through
 *
 * @example
 * ```ts
 * import { bumpCredentialEpoch, credentialsChanged } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * if ((await bumpCredentialEpoch(kv.atomic()).commit()).ok) credentialsChanged(kv);
 * kv.close();
 * ```
 */
export function credentialsChanged(kv: Deno.Kv): void {
  for (const listener of LOCAL_LISTENERS.get(kv) ?? []) {
    try {
      listener();
    } catch {
      // a listener's failure is its own
    }
  }
}

/**
 * Reads the credential epoch (0 before the first bump).
 *
 * @param kv the store
 * @returns the epoch
 *
 * @example
 * ```ts
 * import { readCredentialEpoch } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * if (await readCredentialEpoch(kv) !== 0n) throw new Error();
 * kv.close();
 * ```
 */
export async function readCredentialEpoch(kv: Deno.Kv): Promise<bigint> {
  const e = await kv.get<Deno.KvU64>(credentialEpochKey());
  return e.value?.value ?? 0n;
}

/** A token record read together with the credential epoch of the same snapshot. */
export interface TokenAtEpoch {
  /** The record's entry (value null when there is no such token). */
  entry: Deno.KvEntryMaybe<TokenRecord>;
  /** The credential epoch when the record was read. */
  epoch: bigint;
}

/**
 * Reads a token record and the credential epoch in one consistent read: a
 * cache that keeps the record under that epoch can never hold a record
 * older than a change whose bump it has seen.
 *
 * @param kv the store
 * @param id the token id
 * @returns the entry and the epoch
 *
 * @example
 * ```ts
 * import { readTokenAtEpoch } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * const { entry, epoch } = await readTokenAtEpoch(kv, "tok_x");
 * if (entry.value !== null || epoch !== 0n) throw new Error();
 * kv.close();
 * ```
 */
export async function readTokenAtEpoch(kv: Deno.Kv, id: string): Promise<TokenAtEpoch> {
  const [entry, epoch] = await kv.getMany<[TokenRecord, Deno.KvU64]>([
    tokenKey(id),
    credentialEpochKey(),
  ]);
  return { entry, epoch: epoch.value?.value ?? 0n };
}

/** A session record and whether its user exists, read with the credential epoch of the same snapshot. */
export interface SessionAtEpoch {
  /** The session as stored (pass it through `normalizeSession`), null when there is no such session. */
  session: Partial<SessionRecord> & Pick<SessionRecord, "id" | "user_id" | "created_at"> | null;
  /** Whether the session's user still exists. */
  userExists: boolean;
  /** The credential epoch when both were read. */
  epoch: bigint;
}

/**
 * Reads a session record, its user's record and the credential epoch in
 * one consistent read (see {@linkcode readTokenAtEpoch}): ending a session
 * and deleting a user both bump the epoch, so a cache that keeps the
 * answer under that epoch never outlives either.
 *
 * @param kv the store
 * @param id the session id
 * @param userId the id of the session's user (a session never changes user)
 * @returns the session, whether its user exists, and the epoch
 *
 * @example
 * ```ts
 * import { readSessionAtEpoch } from "./credential_epoch.ts";
 * const kv = await Deno.openKv(":memory:");
 * const { session, userExists, epoch } = await readSessionAtEpoch(kv, "ssn_x", "usr_x");
 * if (session !== null || userExists || epoch !== 0n) throw new Error();
 * kv.close();
 * ```
 */
export async function readSessionAtEpoch(
  kv: Deno.Kv,
  id: string,
  userId: string,
): Promise<SessionAtEpoch> {
  const [session, user, epoch] = await kv.getMany<[SessionRecord, unknown, Deno.KvU64]>([
    sessionKey(id),
    userKey(userId),
    credentialEpochKey(),
  ]);
  return {
    session: session.value,
    userExists: user.value !== null,
    epoch: epoch.value?.value ?? 0n,
  };
}
