/**
 * The one-time backfill of the people index (lib/store/people_backfill.ts)
 * on a store made before the index existed: it reads the sessions admitted
 * to a tenant and each tenant's `login.succeeded` entries, is idempotent,
 * resumes where a cut-short run stopped, never undoes a sign-in made while
 * it runs, runs in one process of an installation and logs its completion
 * once.
 */
import { assert, assertEquals } from "../assert.ts";
import { auditLoginSucceeded } from "../../lib/login/sign_in.ts";
import {
  backfillProgress,
  backfillStep,
  runPeopleBackfill,
  startPeopleBackfill,
} from "../../lib/store/people_backfill.ts";
import { findPerson, recordSignIn } from "../../lib/store/people.ts";
import { sessionKey } from "../../lib/store/keys.ts";
import type { SessionRecord } from "../../lib/store/sessions.ts";
import { createTenant, deleteTenant } from "../../lib/store/tenants.ts";
import { createUser, type UserRecord } from "../../lib/store/users.ts";
import { ulid } from "../../lib/store/ulid.ts";

const SYSTEM = { id: "system", principal_type: "system" as const, request_id: null };
const DAY = 86_400_000;
const T0 = Date.parse("2030-01-01T00:00:00.000Z");
const at = (days: number) => new Date(T0 + days * DAY);

/** The people of an older release's store, and what the backfill should make of them. */
interface OldStore {
  kv: Deno.Kv;
  ana: UserRecord;
  bo: UserRecord;
  cy: UserRecord;
  hal: UserRecord;
}

/**
 * A store as an older release left it: sessions and `login.succeeded`
 * entries, no people index.
 *
 * - ana signed in to acme by email on day 1 (audit only: her session is
 *   gone) and by SAML from the CLI on day 5 (a session);
 * - bo signed in to acme on day 3 by OIDC (a session, and its entry) and to
 *   other on day 4 (audit only);
 * - cy signed in to a tenant acme that was deleted and made again on day 2:
 *   her day-1 entry is the old tenant's, and counts for nobody;
 * - hal has only a session made on the server host (no tenant).
 */
async function oldStore(): Promise<OldStore> {
  const kv = await Deno.openKv(":memory:");
  await createTenant(kv, { slug: "acme", created_by: "tok_1", now: () => at(0) });
  const [ana, bo, cy, hal] = await Promise.all(
    ["ana", "bo", "cy", "hal"].map((n) => createUser(kv, { email: `${n}@acme.test` })),
  ) as [UserRecord, UserRecord, UserRecord, UserRecord];
  const ctx = { requestId: "r" };
  await auditLoginSucceeded(kv, cy.id, at(1), ctx, "acme", { method: "oidc", client: "browser" });
  await deleteTenant(kv, "acme", SYSTEM, at(2));
  await createTenant(kv, { slug: "acme", created_by: "tok_1", now: () => at(2) });
  await createTenant(kv, { slug: "other", created_by: "tok_1", now: () => at(0) });
  await auditLoginSucceeded(kv, ana.id, at(2.5), ctx, "acme", {
    method: "email",
    client: "browser",
  });
  await auditLoginSucceeded(kv, bo.id, at(3), ctx, "acme", { method: "oidc", client: "browser" });
  await auditLoginSucceeded(kv, bo.id, at(4), ctx, "other", { method: "email", client: "cli" });
  await auditLoginSucceeded(kv, ana.id, at(5), ctx, "acme", { method: "saml", client: "cli" });
  // the older release's sessions, written as it wrote them (no index)
  const session = (user: UserRecord, day: number, tenants: string[], extra = {}) => {
    const id = `ssn_${ulid(at(day).getTime())}`;
    const s = {
      id,
      user_id: user.id,
      prefix: "ses_x",
      digest: `d-${id}`,
      created_at: at(day).toISOString(),
      expires_at: at(day + 1).toISOString(),
      tenants,
      login_method: "oidc",
      assurance: [],
      groups: [],
      client: "browser",
      last_seen_at: at(day).toISOString(),
      idle_timeout_ms: null,
      ip_hash: null,
      ...extra,
    } satisfies SessionRecord;
    return kv.set(sessionKey(id), s);
  };
  await session(bo, 3, ["acme"], { groups: ["ops"] });
  await session(ana, 5, ["acme"], { login_method: "saml", client: "cli" });
  await session(hal, 5, [], { login_method: "admin", client: "admin" });
  return { kv, ana, bo, cy, hal };
}

/** Every people record of the store, by key. */
async function people(kv: Deno.Kv): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const prefix of [["tenant_person"], ["tenant_person_by_user"]]) {
    for await (const e of kv.list({ prefix })) out[e.key.join("/")] = e.value;
  }
  return out;
}

Deno.test("the backfill makes the people index from sessions and login.succeeded entries", async () => {
  const { kv, ana, bo, cy, hal } = await oldStore();
  try {
    const done = await runPeopleBackfill(kv, { now: at(10) });
    assertEquals(done.state, "done");
    assertEquals(done.counts, { sessions: 2, entries: 4, written: 4 });
    assertEquals(done.finished_at, at(10).toISOString());
    assertEquals(await findPerson(kv, "acme", ana.id), {
      user_id: ana.id,
      email: "ana@acme.test",
      first_sign_in_at: at(2.5).toISOString(),
      last_sign_in_at: at(5).toISOString(),
      last_sign_in_method: "saml",
      last_sign_in_client: "cli",
      groups: [],
    });
    assertEquals(await findPerson(kv, "acme", bo.id), {
      user_id: bo.id,
      email: "bo@acme.test",
      first_sign_in_at: at(3).toISOString(),
      last_sign_in_at: at(3).toISOString(),
      last_sign_in_method: "oidc",
      last_sign_in_client: "browser",
      groups: ["ops"], // from the session: the same sign-in's entry carries no groups
    });
    assertEquals((await findPerson(kv, "other", bo.id))?.last_sign_in_client, "cli");
    assertEquals(await findPerson(kv, "acme", cy.id), null, "the deleted tenant's sign-in");
    assertEquals(await findPerson(kv, "acme", hal.id), null, "a session made on the host");
    assertEquals(Object.keys(await people(kv)).length, 6);
  } finally {
    kv.close();
  }
});

Deno.test("the backfill is idempotent: run again, it writes nothing and changes nothing", async () => {
  const { kv } = await oldStore();
  try {
    await runPeopleBackfill(kv, { now: at(10) });
    const first = await people(kv);
    // once done, a run reads its record and stops
    assertEquals((await backfillStep(kv, at(11))).finished, false);
    // made to run again from the start, it finds everything already there
    await kv.delete(["people_backfill"]);
    const again = await runPeopleBackfill(kv, { now: at(11) });
    assertEquals(again.counts, { sessions: 2, entries: 4, written: 0 });
    assertEquals(await people(kv), first);
  } finally {
    kv.close();
  }
});

Deno.test("a run cut short resumes where it stopped, one record at a time", async () => {
  const whole = await oldStore();
  const cut = await oldStore();
  try {
    await runPeopleBackfill(whole.kv, { now: at(10) });
    // one record a step; the run is stopped after each step and started again
    const phases: string[] = [];
    for (let runs = 0; runs < 50; runs++) {
      const stop = new AbortController();
      stop.abort("shutdown");
      const p = await runPeopleBackfill(cut.kv, { now: at(10), batch: 1, signal: stop.signal });
      phases.push(`${p.phase}:${p.tenant ?? ""}`);
      if (p.state === "done") break;
    }
    const progress = await backfillProgress(cut.kv);
    assertEquals(progress?.state, "done");
    assertEquals(progress?.counts, { sessions: 2, entries: 4, written: 4 });
    assert(phases.includes("sessions:") && phases.includes("audit:acme"), phases.join());
    // three sessions, one a step: the step that reads the third moves on to the audit logs
    assertEquals(phases.slice(0, 3), ["sessions:", "sessions:", "audit:"]);
    // the same records as a run that was never cut (by user, not id: the stores differ)
    const shape = async (s: OldStore) =>
      JSON.stringify(
        await Promise.all(
          [s.ana, s.bo, s.cy].flatMap((u) =>
            ["acme", "other"].map(async (t) => {
              const p = await findPerson(s.kv, t, u.id);
              return p === null ? null : { ...p, user_id: u.email };
            })
          ),
        ),
      );
    assertEquals(await shape(cut), await shape(whole));
  } finally {
    whole.kv.close();
    cut.kv.close();
  }
});

Deno.test("a sign-in made while the backfill runs is never undone by an older one", async () => {
  const { kv, ana } = await oldStore();
  try {
    await recordSignIn(kv, "acme", {
      user_id: ana.id,
      at: at(9).toISOString(),
      method: "email",
      client: "browser",
      groups: ["new"],
    });
    await runPeopleBackfill(kv, { now: at(10) });
    const p = await findPerson(kv, "acme", ana.id);
    assertEquals([p?.first_sign_in_at, p?.last_sign_in_at], [
      at(2.5).toISOString(),
      at(9).toISOString(),
    ]);
    assertEquals([p?.last_sign_in_method, p?.groups], ["email", ["new"]]);
  } finally {
    kv.close();
  }
});

Deno.test("one process of an installation runs the backfill and logs its end once", async () => {
  const { kv } = await oldStore();
  const lines: { level: string; msg: string; fields?: Record<string, unknown> }[] = [];
  const log = (level: string, msg: string, fields?: Record<string, unknown>) =>
    void lines.push({ level, msg, ...(fields ? { fields } : {}) });
  const first = startPeopleBackfill(kv, { log, now: () => at(10) });
  const second = startPeopleBackfill(kv, { log, now: () => at(10) });
  try {
    const [a, b] = await Promise.all([first.runOnce(), second.runOnce()]);
    assertEquals([a, b].filter((r) => r === null).length, 1, "the other waits for the lease");
    assertEquals((await backfillProgress(kv))?.state, "done");
    await first.stop();
    // the lease given back, the other finds it done: no second run, no second line
    assertEquals((await second.runOnce())?.state, "done");
    assertEquals(lines.map((l) => [l.level, l.msg]), [["info", "people index backfilled"]]);
    assertEquals(lines[0]!.fields, {
      sessions_read: 2,
      sign_in_entries_read: 4,
      people_records_written: 4,
    });
    assert(!JSON.stringify(lines).includes("@"), "no address in the log");
  } finally {
    await first.stop();
    await second.stop();
    kv.close();
  }
});
