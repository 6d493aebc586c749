/**
 * What the event feeds need to keep an open stream within its read rights.
 * A stream is authorised when it opens; while it is open, the roles of
 * its credential can change (an admin removed, a token revoked, a
 * namespace deleted). So before each delivery (a version event, inline or
 * snapshot, a resync, an OFREP `refetchEvaluation`) a feed asks
 * {@linkcode StreamAccess.check} to bring the verdicts of the receiving
 * streams up to date, and sends only to those still allowed; a stream
 * that is no longer allowed is closed without the event (docs/events.md,
 * "When a stream closes").
 *
 * The verdicts are {@linkcode ReadGrant}s, one per credential and
 * namespace, shared by every stream of that credential: a fan-out to ten
 * thousand subscribers compares one number per subscriber and computes a
 * verdict at most once per credential, and only after something changed.
 * lib/auth/stream_guard.ts implements both; this module only names what
 * the feeds use, so lib/events does not depend on lib/auth.
 *
 * @module
 */

/**
 * One credential's right to receive one namespace (or, for the OFREP
 * stream, to evaluate in one environment), shared by the streams of that
 * credential.
 */
export interface ReadGrant {
  /** Whether the last verdict allows it (bring it up to date with {@linkcode StreamAccess.check}). */
  readonly allowed: boolean;
}

/** Re-authorises open streams before a delivery. */
export interface StreamAccess {
  /**
   * Takes note of every change to what credentials may do that was
   * committed before the call (one read of the credential epoch for the
   * whole process). A feed calls it once per new version, before its
   * checks, so a role removed before the version committed is never
   * outrun by the version.
   */
  sync(): Promise<void>;
  /**
   * Brings the verdicts of `grants` up to date: a verdict whose credential
   * nothing changed since it was computed stands (a comparison); the
   * others are computed again from the current roles, once per grant
   * however many streams share it. The streams of a grant that is no
   * longer allowed are closed. Entries without a grant (a stream nobody
   * watches) are skipped.
   *
   * @param grants the grants of the streams about to receive an event
   */
  check(grants: readonly (ReadGrant | undefined)[]): Promise<void>;
}

/** A stream under watch: its grant per read, in the order asked, and how to stop watching. */
export interface WatchedStream {
  /** One grant per read the stream makes. */
  readonly grants: readonly ReadGrant[];
  /** Stops watching (call it when the stream ends; idempotent). */
  release(): void;
}

/**
 * Keeps the members that may still receive: those without a grant, and
 * those whose grant allows, that are not closed. Members whose grant no
 * longer allows are closed (the fatal-close rule of docs/events.md: the
 * client reconnects and is refused at open).
 *
 * @param members the streams about to receive an event
 * @param grantOf the grant of a member (undefined when nobody watches it)
 * @param isClosed whether a member has ended
 * @param close ends a member
 * @returns the members to deliver to, in order
 *
 * @example
 * ```ts
 * import { admitted } from "./access.ts";
 * const members = [
 *   { id: 1, grant: { allowed: true }, closed: false },
 *   { id: 2, grant: { allowed: false }, closed: false },
 *   { id: 3, grant: undefined, closed: false },
 *   { id: 4, grant: { allowed: true }, closed: true },
 * ];
 * const kept = admitted(members, (m) => m.grant, (m) => m.closed, (m) => (m.closed = true));
 * if (kept.map((m) => m.id).join() !== "1,3") throw new Error();
 * if (!members[1]!.closed) throw new Error("a member that may no longer read is closed");
 * ```
 */
export function admitted<M>(
  members: readonly M[],
  grantOf: (m: M) => ReadGrant | undefined,
  isClosed: (m: M) => boolean,
  close: (m: M) => void,
): M[] {
  const out: M[] = [];
  for (const m of members) {
    const grant = grantOf(m);
    if (grant !== undefined && !grant.allowed) close(m);
    else if (!isClosed(m)) out.push(m);
  }
  return out;
}
