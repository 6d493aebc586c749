/**
 * Change requests and protected environments at the service level: who
 * may open, review and apply; the life of a request; rebase and conflict;
 * scheduled applies run as the queue runs them (idempotent per schedule);
 * rollout plans step by step. Every refusal is checked to have written
 * nothing.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import type { Principal, SessionPrincipal } from "../../lib/auth/principal.ts";
import { CfgtoolError, ForbiddenError, NotFoundError, ProblemsError } from "../../lib/errors.ts";
import {
  applyChange,
  cancelSchedule,
  openRollout,
  runScheduledApply,
} from "../../lib/services/change_apply.ts";
import {
  approveChange,
  changeDetails,
  commentOnChange,
  listChanges,
  MAX_LIVE_REQUESTS,
  openChangeRequest,
  rejectChange,
  updateChange,
  withdrawChange,
} from "../../lib/services/changes.ts";
import { pushManifest, rollbackManifest } from "../../lib/services/manifests.ts";
import { getProtection, parseProtection, setProtection } from "../../lib/services/protection.ts";
import { listAudit } from "../../lib/store/audit.ts";
import {
  APPLY_MESSAGE,
  type ChangeRequestRecord,
  getChangeRequest,
  MAX_COMMENTS,
} from "../../lib/store/change_requests.ts";
import { createToken } from "../../lib/services/tokens.ts";
import { addNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { addTenantAdmin } from "../../lib/store/tenants.ts";
import { createUser } from "../../lib/store/users.ts";
import { getHead, readFiles } from "../../lib/store/versions.ts";
import { serviceTest, type ServiceWorld } from "./world.ts";

const web = { tenant: "acme", namespace: "web" };
const ctx = { requestId: "req-changes" };
const encoder = new TextEncoder();
const decoder = new TextDecoder();

const NS = "schema_version = 1\n[namespace.environments.production]\n" +
  "[namespace.environments.staging]\n";
const flag = (rollout: [number, number], stagingOff = false) =>
  `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n` +
  `[[rule]]\nrollout = [ { variation = "on", weight = ${
    rollout[0]
  } }, { variation = "off", weight = ${rollout[1]} } ]\n` +
  (stagingOff ? "[environments.staging]\nenabled = false\n" : "");
const other = (d: string) =>
  `schema_version = 1\ndescription = "${d}"\ntype = "boolean"\ndefault = "off"\n` +
  `[variations]\non = true\noff = false\n`;

function files(record: Record<string, string>): Map<string, Uint8Array> {
  return new Map(Object.entries(record).map(([p, t]) => [p, encoder.encode(t)]));
}

const BASE = { "namespace.toml": NS, "flags/a.toml": flag([0, 100]), "flags/b.toml": other("b") };

/** Pushes `record` as the superadmin; the new version. */
async function push(w: ServiceWorld, record: Record<string, string>): Promise<number> {
  const bytes = encoder.encode(JSON.stringify({ files: record, message: "push" }));
  const out = await pushManifest(w.services, w.superadmin, web, {
    upload: { format: "json", bytes },
    bypass: undefined,
  }, ctx);
  if ("proposed" in out) throw new Error("a push without propose commits");
  return out.version.version;
}

/** A person of acme; tenant admin or namespace admin of acme/web when asked. */
async function person(
  w: ServiceWorld,
  email: string,
  role: "member" | "ns-admin" | "tenant-admin",
  addedBy = "test",
): Promise<SessionPrincipal> {
  const user = await createUser(w.kv, { email });
  if (role === "ns-admin") {
    await addNamespaceAdmin(w.kv, { ...web, user_id: user.id, added_by: addedBy });
  }
  if (role === "tenant-admin") {
    await addTenantAdmin(w.kv, { tenant: "acme", user_id: user.id, added_by: addedBy });
  }
  return {
    kind: "session",
    user_id: user.id,
    session_id: `ssn_${email}`,
    tenants: ["acme"],
    groups: [],
    since: new Date().toISOString(),
  };
}

/** acme/web with the base files and production protected (1 approval), and its people. */
async function protectedWorld(w: ServiceWorld) {
  await push(w, BASE);
  const admin = await person(w, "ada@example.com", "ns-admin");
  const reviewer = await person(w, "rev@example.com", "ns-admin");
  const member = await person(w, "mem@example.com", "member");
  await setProtection(w.services, admin, web, { production: { required_approvals: 1 } }, ctx);
  return { admin, reviewer, member };
}

/** What a test checks nothing changed against: the head, the audit count, the request. */
async function snapshot(w: ServiceWorld, id?: string) {
  const head = await getHead(w.kv, "acme", "web");
  const audit = (await listAudit(w.kv, { tenant: "acme", limit: 500 })).items.length;
  const request = id === undefined ? null : (await getChangeRequest(w.kv, "acme", "web", id)).value;
  return { head, audit, request };
}

async function assertUnchanged(
  w: ServiceWorld,
  before: Awaited<ReturnType<typeof snapshot>>,
  id?: string,
) {
  assertEquals(await snapshot(w, id), before);
}

async function rejectsWithCode(fn: () => Promise<unknown>, code: string, status: number) {
  const err = await assertRejects(fn, CfgtoolError);
  assertEquals([err.code, err.status], [code, status], err.message);
  return err;
}

async function open(
  w: ServiceWorld,
  who: Principal,
  record: Record<string, string>,
  message = "raise a",
): Promise<ChangeRequestRecord> {
  return await openChangeRequest(w.services, who, web, { files: files(record), message }, ctx);
}

/** The queue message the scheduler got for a scheduled request (as the queue would deliver it). */
function messageOf(r: ChangeRequestRecord) {
  return {
    kind: APPLY_MESSAGE,
    tenant: r.tenant_slug,
    namespace: r.namespace_slug,
    id: r.id,
    schedule_id: r.schedule_id,
  };
}

serviceTest("protection is set by admins (0–5 approvals), read by readers, audited", async (w) => {
  const { admin } = await protectedWorld(w);
  const got = await getProtection(w.services, await w.asWeb("namespace-read"), web);
  assertEquals(got.environments, { production: { required_approvals: 1 } });
  const entries = (await listAudit(w.kv, { tenant: "acme", type: "namespace.protection_changed" }))
    .items;
  assertEquals(entries.length, 1);
  assertEquals(entries[0]!.actor_id, admin.user_id);
  const writer = await w.asWeb("namespace-write");
  const before = await snapshot(w);
  await assertRejects(
    () => setProtection(w.services, writer, web, {}, ctx),
    ForbiddenError,
  );
  await rejectsWithCode(
    () =>
      setProtection(
        w.services,
        admin,
        web,
        () => parseProtection({ environments: { production: { required_approvals: 6 } } }),
        ctx,
      ),
    "invalid_request",
    400,
  );
  await assertUnchanged(w, before);
});

serviceTest(
  "a direct push into a protected environment is refused, naming it; staging and descriptions pass",
  async (w) => {
    await protectedWorld(w);
    const writer = await w.asWeb("namespace-write");
    const before = await snapshot(w);
    const bytes = encoder.encode(
      JSON.stringify({ files: { ...BASE, "flags/a.toml": flag([50, 50]) }, message: "m" }),
    );
    const err = await rejectsWithCode(
      () => pushManifest(w.services, writer, web, { upload: { format: "json", bytes } }, ctx),
      "approval_required",
      409,
    );
    assertEquals((err.details as { environments: string[] }).environments, ["production"]);
    await assertUnchanged(w, before);
    // a change that only staging sees, and a description, commit at once
    assertEquals(await push(w, { ...BASE, "flags/a.toml": flag([0, 100], true) }), 2);
    assertEquals(await push(w, { ...BASE, "flags/b.toml": other("words only") }), 3);
  },
);

serviceTest("a superadmin's break-glass reason commits past protection, audited", async (w) => {
  await protectedWorld(w);
  const bytes = encoder.encode(
    JSON.stringify({ files: { ...BASE, "flags/a.toml": flag([9, 91]) } }),
  );
  const out = await pushManifest(w.services, w.superadmin, web, {
    upload: { format: "json", bytes },
    bypass: "incident 42",
  }, ctx);
  assert(!("proposed" in out) && out.changed);
  const [entry] = (await listAudit(w.kv, { tenant: "acme", type: "manifest.protection_bypassed" }))
    .items;
  assertEquals(entry?.details?.reason, "incident 42");
  // only a superadmin may
  const admin = await person(w, "x@example.com", "tenant-admin");
  const before = await snapshot(w);
  await assertRejects(
    () => rollbackManifest(w.services, admin, web, { version: 1, bypass: "because" }, ctx),
    ForbiddenError,
  );
  await assertUnchanged(w, before);
});

serviceTest(
  "push with propose opens a request with its impact; a reviewer approves, the author applies",
  async (w) => {
    const { admin, reviewer } = await protectedWorld(w);
    const writer = await w.asWeb("namespace-write");
    const bytes = encoder.encode(JSON.stringify({
      files: { ...BASE, "flags/a.toml": flag([25, 75]) },
      message: "a to 25%",
      propose: true,
    }));
    const out = await pushManifest(w.services, writer, web, {
      upload: { format: "json", bytes },
    }, ctx);
    assert("proposed" in out);
    const cr = out.proposed;
    // the flag's own rule: both environments see it, production needs an approval
    assertEquals([cr.status, cr.impact, cr.required_approvals], [
      "open",
      ["production", "staging"],
      1,
    ]);
    assertEquals(cr.changed_paths, ["flags/a.toml"]);
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
    // the value-level diff names what changes
    const details = await changeDetails(w.services, reviewer, web, cr.id);
    assertEquals(details.may.approve, true);
    assertEquals(details.may.apply, false);
    assert(
      JSON.stringify(details.changes).includes("25%"),
      JSON.stringify(details.changes),
    );
    // applying before approval is refused, and writes nothing
    const before = await snapshot(w, cr.id);
    await rejectsWithCode(
      () => applyChange(w.services, writer, web, cr.id, undefined, ctx),
      "change_request_state",
      409,
    );
    await assertUnchanged(w, before, cr.id);
    const approved = await approveChange(w.services, reviewer, web, cr.id, "fine", ctx);
    assertEquals(approved.status, "approved");
    const applied = await applyChange(w.services, writer, web, cr.id, undefined, ctx);
    assertEquals(applied.version?.version, 2);
    assertEquals(applied.change_request.status, "applied");
    assertEquals(applied.change_request.applied_version, 2);
    const [pushed] = (await listAudit(w.kv, { tenant: "acme", type: "manifest.pushed" })).items;
    assertEquals(pushed?.details?.change_request_id, cr.id);
    assertEquals(pushed?.details?.version, 2);
    const files2 = await readFiles(w.kv, "acme", "web", 2);
    assertEquals(decoder.decode(files2.get("flags/a.toml")), flag([25, 75]));
    const types = (await listAudit(w.kv, { tenant: "acme", limit: 100 })).items
      .map((e) => e.type).filter((t) => t.startsWith("change_request."));
    assertEquals(types.reverse(), [
      "change_request.opened",
      "change_request.approved",
      "change_request.applied",
    ]);
    void admin;
  },
);

serviceTest("who may review: never a token, never the author, never a reader", async (w) => {
  const { admin, reviewer, member } = await protectedWorld(w);
  const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
  const writer = await w.asWeb("namespace-write");
  const before = await snapshot(w, cr.id);
  await assertRejects(
    () => approveChange(w.services, admin, web, cr.id, undefined, ctx),
    ForbiddenError,
    "author",
  );
  await assertRejects(
    () => approveChange(w.services, w.superadmin, web, cr.id, undefined, ctx),
    ForbiddenError,
  );
  await assertRejects(
    () => approveChange(w.services, member, web, cr.id, undefined, ctx),
    ForbiddenError,
  );
  await assertRejects(
    () => rejectChange(w.services, writer, web, cr.id, "no", ctx),
    ForbiddenError,
  );
  await assertUnchanged(w, before, cr.id);
  // a reviewer approves once
  await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  await rejectsWithCode(
    () => approveChange(w.services, reviewer, web, cr.id, undefined, ctx),
    "invalid_request",
    400,
  );
});

serviceTest("an admin the author appointed cannot approve the author's request", async (w) => {
  const { admin } = await protectedWorld(w);
  const friend = await person(w, "friend@example.com", "ns-admin", admin.user_id);
  const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
  const before = await snapshot(w, cr.id);
  await assertRejects(
    () => approveChange(w.services, friend, web, cr.id, undefined, ctx),
    ForbiddenError,
    "made an admin by the author",
  );
  await assertUnchanged(w, before, cr.id);
});

serviceTest("who may open: members and writers; never read or client tokens", async (w) => {
  const { member } = await protectedWorld(w);
  const ok = await open(w, member, { ...BASE, "flags/b.toml": other("member") });
  assertEquals([ok.author_kind, ok.author_email], ["user", "mem@example.com"]);
  const reader = await w.asWeb("namespace-read");
  const before = await snapshot(w);
  await assertRejects(() => open(w, reader, BASE), ForbiddenError);
  await assertUnchanged(w, before);
});

serviceTest(
  "bad proposals: invalid manifest 422, no change 400, no message 400, unknown id 404",
  async (w) => {
    const { admin } = await protectedWorld(w);
    const before = await snapshot(w);
    const bad = await assertRejects(
      () => open(w, admin, { ...BASE, "flags/a.toml": "type = 3\n" }),
      ProblemsError,
    );
    assert(bad.problems.length > 0);
    await rejectsWithCode(() => open(w, admin, BASE), "invalid_request", 400);
    await rejectsWithCode(
      () => open(w, admin, { ...BASE, "flags/b.toml": other("x") }, "  "),
      "invalid_request",
      400,
    );
    await assertUnchanged(w, before);
    await assertRejects(
      () => changeDetails(w.services, admin, web, "cr_01J00000000000000000000000"),
      NotFoundError,
    );
  },
);

serviceTest("an update by the author voids approvals; others cannot update", async (w) => {
  const { admin, reviewer, member } = await protectedWorld(w);
  const cr = await open(w, member, { ...BASE, "flags/a.toml": flag([30, 70]) });
  await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  const before = await snapshot(w, cr.id);
  await assertRejects(
    () =>
      updateChange(w.services, admin, web, cr.id, {
        files: files({ ...BASE, "flags/a.toml": flag([40, 60]) }),
      }, ctx),
    ForbiddenError,
  );
  await assertUnchanged(w, before, cr.id);
  const updated = await updateChange(w.services, member, web, cr.id, {
    files: files({ ...BASE, "flags/a.toml": flag([40, 60]) }),
  }, ctx);
  assertEquals([updated.status, updated.approvals.length], ["open", 0]);
});

serviceTest(
  "withdrawn and rejected requests cannot be applied; a rejection needs a reason",
  async (w) => {
    const { admin, reviewer, member } = await protectedWorld(w);
    const one = await open(w, member, { ...BASE, "flags/a.toml": flag([30, 70]) });
    await rejectsWithCode(
      () => rejectChange(w.services, reviewer, web, one.id, " ", ctx),
      "invalid_request",
      400,
    );
    await rejectChange(w.services, reviewer, web, one.id, "not now", ctx);
    const two = await open(w, member, { ...BASE, "flags/a.toml": flag([31, 69]) });
    await assertRejects(() => withdrawChange(w.services, admin, web, two.id, ctx), ForbiddenError);
    await withdrawChange(w.services, member, web, two.id, ctx);
    for (const id of [one.id, two.id]) {
      const before = await snapshot(w, id);
      await rejectsWithCode(
        () => applyChange(w.services, admin, web, id, undefined, ctx),
        "change_request_state",
        409,
      );
      await assertUnchanged(w, before, id);
    }
    const comment = await commentOnChange(w.services, reviewer, web, one.id, "sorry", ctx);
    assertEquals(comment.author_email, "rev@example.com");
    const open_ = await listChanges(w.services, member, web, { statuses: ["rejected"] });
    assertEquals(open_.items.map((r) => r.id), [one.id]);
  },
);

serviceTest(
  "an apply rebases over versions that changed other files, and refuses one that changed its own",
  async (w) => {
    const { admin, reviewer } = await protectedWorld(w);
    const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
    await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
    // someone changes b meanwhile: the apply keeps it
    await push(w, { ...BASE, "flags/b.toml": other("theirs") });
    const applied = await applyChange(w.services, admin, web, cr.id, undefined, ctx);
    const v = applied.version!.version;
    const now = await readFiles(w.kv, "acme", "web", v);
    assertEquals(decoder.decode(now.get("flags/b.toml")), other("theirs"));
    assertEquals(decoder.decode(now.get("flags/a.toml")), flag([30, 70]));
    // a second request on the old base, whose file moved since
    const late = await openChangeRequest(w.services, admin, web, {
      files: files({ ...BASE, "flags/a.toml": flag([60, 40]) }),
      message: "late",
      base_version: 1,
    }, ctx);
    await approveChange(w.services, reviewer, web, late.id, undefined, ctx);
    const before = await snapshot(w, late.id);
    const err = await rejectsWithCode(
      () => applyChange(w.services, admin, web, late.id, undefined, ctx),
      "change_conflict",
      409,
    );
    assertEquals((err.details as { files: string[] }).files, ["flags/a.toml"]);
    await assertUnchanged(w, before, late.id);
  },
);

serviceTest(
  "a scheduled apply runs once however often the queue delivers it; a past time is refused",
  async (w) => {
    const { admin, reviewer } = await protectedWorld(w);
    const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
    await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
    const before = await snapshot(w, cr.id);
    await rejectsWithCode(
      () => applyChange(w.services, admin, web, cr.id, "2020-01-01T00:00:00Z", ctx),
      "invalid_request",
      400,
    );
    await rejectsWithCode(
      () => applyChange(w.services, admin, web, cr.id, "tomorrow", ctx),
      "invalid_request",
      400,
    );
    await assertUnchanged(w, before, cr.id);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await applyChange(w.services, admin, web, cr.id, at, ctx);
    assertEquals(scheduled.version, null);
    assertEquals([scheduled.change_request.status, scheduled.change_request.scheduled_at], [
      "scheduled",
      at,
    ]);
    const message = messageOf(scheduled.change_request);
    // the queue delivers it twice, at once: one version
    await Promise.all([
      runScheduledApply(w.services, message),
      runScheduledApply(w.services, message),
    ]);
    await runScheduledApply(w.services, message);
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 2);
    const done = (await getChangeRequest(w.kv, "acme", "web", cr.id)).value;
    assertEquals([done.status, done.applied_version], ["applied", 2]);
    const applied = await listAudit(w.kv, { tenant: "acme", type: "change_request.applied" });
    assertEquals(applied.items.length, 1);
    assertEquals(applied.items[0]!.actor_id, "scheduler");
  },
);

serviceTest("a cancelled schedule's message does nothing", async (w) => {
  const { admin, reviewer } = await protectedWorld(w);
  const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
  await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const { change_request: s } = await applyChange(w.services, admin, web, cr.id, at, ctx);
  const back = await cancelSchedule(w.services, admin, web, cr.id, ctx);
  assertEquals(back.status, "approved");
  await runScheduledApply(w.services, messageOf(s));
  assertEquals((await getHead(w.kv, "acme", "web"))?.version, 1);
  assertEquals((await getChangeRequest(w.kv, "acme", "web", cr.id)).value.status, "approved");
});

serviceTest(
  "a scheduled apply that can no longer commit ends failed, with why, audited",
  async (w) => {
    const { admin, reviewer } = await protectedWorld(w);
    const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
    await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const { change_request: s } = await applyChange(w.services, admin, web, cr.id, at, ctx);
    // someone changes a in staging meanwhile (not protected): the request's file moved
    await push(w, { ...BASE, "flags/a.toml": flag([0, 100], true) });
    await runScheduledApply(w.services, messageOf(s));
    const failed = (await getChangeRequest(w.kv, "acme", "web", cr.id)).value;
    assertEquals(failed.status, "failed");
    assert(failed.failure?.includes("flags/a.toml"), failed.failure ?? "");
    const [entry] =
      (await listAudit(w.kv, { tenant: "acme", type: "change_request.failed" })).items;
    assertEquals(entry?.details?.code, "change_conflict");
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 2);
  },
);

serviceTest(
  "a rollout's approval schedules its steps; each step is a version; a cancel stops the rest",
  async (w) => {
    const { reviewer, member } = await protectedWorld(w);
    const cr = await openRollout(w.services, member, web, {
      flag: "a",
      environment: "production",
      steps: [10, 50, 100],
      every_ms: 60_000,
      message: "roll a out",
    }, ctx);
    assertEquals([cr.status, cr.impact, cr.plan?.steps], [
      "open",
      ["production", "staging"],
      [10, 50, 100],
    ]);
    const approved = await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
    assertEquals(approved.status, "scheduled");
    const weight = async (v: number) =>
      /weight = (\d+) \}, \{ variation = "off"/.exec(
        decoder.decode((await readFiles(w.kv, "acme", "web", v)).get("flags/a.toml")),
      )?.[1];
    await runScheduledApply(w.services, messageOf(approved));
    let now = (await getChangeRequest(w.kv, "acme", "web", cr.id)).value;
    assertEquals([now.status, now.plan?.done, now.applied_version], ["scheduled", 1, 2]);
    assertEquals(await weight(2), "10");
    // a late duplicate of the first step's message does nothing
    await runScheduledApply(w.services, messageOf(approved));
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 2);
    await runScheduledApply(w.services, messageOf(now));
    now = (await getChangeRequest(w.kv, "acme", "web", cr.id)).value;
    assertEquals([now.plan?.done, await weight(3)], [2, "50"]);
    // cancel before the last step: it never comes
    const stopped = await cancelSchedule(w.services, member, web, cr.id, ctx);
    assertEquals(stopped.status, "approved");
    await runScheduledApply(w.services, messageOf(now));
    assertEquals((await getHead(w.kv, "acme", "web"))?.version, 3);
    // applying again resumes with the last step (an admin: the member may not make changes)
    await assertRejects(
      () => applyChange(w.services, member, web, cr.id, undefined, ctx),
      ForbiddenError,
    );
    const resumed = await applyChange(w.services, reviewer, web, cr.id, undefined, ctx);
    assertEquals(resumed.change_request.status, "scheduled");
    await runScheduledApply(w.services, messageOf(resumed.change_request));
    now = (await getChangeRequest(w.kv, "acme", "web", cr.id)).value;
    assertEquals([now.status, now.plan?.done, await weight(4)], ["applied", 3, "100"]);
  },
);

serviceTest("a rollout plan is checked before anything is written", async (w) => {
  const { member } = await protectedWorld(w);
  const before = await snapshot(w);
  const ask = { flag: "a", environment: "production", every_ms: 60_000, message: "m" };
  for (const steps of [[], [50, 20], [10, 200], [1.5]]) {
    await rejectsWithCode(
      () => openRollout(w.services, member, web, { ...ask, steps }, ctx),
      "invalid_request",
      400,
    );
  }
  await rejectsWithCode(
    () => openRollout(w.services, member, web, { ...ask, steps: [5], every_ms: 1000 }, ctx),
    "invalid_request",
    400,
  );
  await rejectsWithCode(
    () => openRollout(w.services, member, web, { ...ask, flag: "b", steps: [5] }, ctx),
    "invalid_request",
    400,
  );
  await assertUnchanged(w, before);
});

serviceTest("a member's own request, even unprotected, lands only through an admin", async (w) => {
  await push(w, BASE);
  const member = await person(w, "mem@example.com", "member");
  const admin = await person(w, "ada@example.com", "ns-admin");
  const cr = await open(w, member, { ...BASE, "flags/b.toml": other("member's words") });
  assertEquals([cr.status, cr.required_approvals], ["approved", 0]);
  assertEquals((await changeDetails(w.services, member, web, cr.id)).may.apply, false);
  const before = await snapshot(w, cr.id);
  await assertRejects(
    () => applyChange(w.services, member, web, cr.id, undefined, ctx),
    ForbiddenError,
    "an admin of the namespace applies",
  );
  await assertRejects(
    () =>
      applyChange(w.services, member, web, cr.id, new Date(Date.now() + 60_000).toISOString(), ctx),
    ForbiddenError,
  );
  await assertUnchanged(w, before, cr.id);
  const done = await applyChange(w.services, admin, web, cr.id, undefined, ctx);
  assertEquals(done.version?.version, 2);
});

serviceTest(
  "the person who made the token that opened a request cannot review it, nor see the buttons",
  async (w) => {
    const { admin, reviewer } = await protectedWorld(w);
    // ada (a namespace admin) makes a namespace-write token and opens a request with it
    const made = await createToken(w.deps, admin, {
      type: "namespace-write",
      name: "ada-ci",
      tenant_slug: "acme",
      namespace_slug: "web",
    }, ctx);
    const token = await w.login(made.secret);
    const cr = await open(w, token, { ...BASE, "flags/a.toml": flag([30, 70]) });
    assertEquals((await changeDetails(w.services, admin, web, cr.id)).may.approve, false);
    const before = await snapshot(w, cr.id);
    await assertRejects(
      () => approveChange(w.services, admin, web, cr.id, undefined, ctx),
      ForbiddenError,
      "made the token",
    );
    await assertRejects(
      () => rejectChange(w.services, admin, web, cr.id, "no", ctx),
      ForbiddenError,
    );
    await assertUnchanged(w, before, cr.id);
    // someone else may
    assertEquals(
      (await approveChange(w.services, reviewer, web, cr.id, undefined, ctx)).status,
      "approved",
    );
  },
);

serviceTest(
  "an admin appointed through a token the author made cannot approve the author's request",
  async (w) => {
    await protectedWorld(w);
    const ana = await person(w, "ana@example.com", "tenant-admin");
    const made = await createToken(w.deps, ana, {
      type: "tenant-admin",
      name: "ana-admin",
      tenant_slug: "acme",
    }, ctx);
    const anasToken = await w.login(made.secret);
    // ana's second identity, made a namespace admin by ana's token
    const alt = await createUser(w.kv, { email: "ana.alt@example.com" });
    await addNamespaceAdmin(w.kv, {
      ...web,
      user_id: alt.id,
      added_by: anasToken.kind === "token" ? anasToken.token.id : "",
    });
    const altPerson: SessionPrincipal = {
      kind: "session",
      user_id: alt.id,
      session_id: "ssn_alt",
      tenants: ["acme"],
      groups: [],
      since: new Date().toISOString(),
    };
    const cr = await open(w, ana, { ...BASE, "flags/a.toml": flag([30, 70]) });
    const before = await snapshot(w, cr.id);
    await assertRejects(
      () => approveChange(w.services, altPerson, web, cr.id, undefined, ctx),
      ForbiddenError,
      "made an admin by the author",
    );
    await assertUnchanged(w, before, cr.id);
  },
);

serviceTest(
  "a review names the revision it read: an update since is refused, not approved",
  async (w) => {
    const { reviewer, member } = await protectedWorld(w);
    const cr = await open(w, member, { ...BASE, "flags/a.toml": flag([1, 99]) });
    assertEquals(cr.revision, 1);
    const updated = await updateChange(w.services, member, web, cr.id, {
      files: files({ ...BASE, "flags/a.toml": flag([100, 0]) }),
    }, ctx);
    assertEquals(updated.revision, 2);
    const before = await snapshot(w, cr.id);
    await rejectsWithCode(
      () => approveChange(w.services, reviewer, web, cr.id, "1% is fine", ctx, 1),
      "change_request_state",
      409,
    );
    await assertUnchanged(w, before, cr.id);
    const ok = await approveChange(w.services, reviewer, web, cr.id, "100% then", ctx, 2);
    assertEquals(ok.status, "approved");
  },
);

serviceTest("an update rebases on the head, so a conflict can be resolved", async (w) => {
  const { admin, reviewer } = await protectedWorld(w);
  const cr = await open(w, admin, { ...BASE, "flags/a.toml": flag([30, 70]) });
  await push(w, { ...BASE, "flags/a.toml": flag([0, 100], true) }); // a moved in staging
  await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  await rejectsWithCode(
    () => applyChange(w.services, admin, web, cr.id, undefined, ctx),
    "change_conflict",
    409,
  );
  const again = await updateChange(w.services, admin, web, cr.id, {
    files: files({ ...BASE, "flags/a.toml": flag([30, 70], true) }),
  }, ctx);
  assertEquals([again.base_version, again.status], [2, "open"]);
  await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  const applied = await applyChange(w.services, admin, web, cr.id, undefined, ctx);
  assertEquals(applied.version?.version, 3);
});

serviceTest("a stopped rollout stays stopped when one more person approves it", async (w) => {
  const { admin, reviewer, member } = await protectedWorld(w);
  const second = await person(w, "second@example.com", "tenant-admin");
  const cr = await openRollout(w.services, member, web, {
    flag: "a",
    environment: "production",
    steps: [10, 100],
    every_ms: 60_000,
    message: "roll a out",
  }, ctx);
  const started = await approveChange(w.services, reviewer, web, cr.id, undefined, ctx);
  await runScheduledApply(w.services, messageOf(started));
  const stopped = await cancelSchedule(w.services, admin, web, cr.id, ctx);
  assertEquals(stopped.status, "approved");
  const later = await approveChange(w.services, second, web, cr.id, undefined, ctx);
  assertEquals([later.status, later.plan?.done], ["approved", 1]);
});

serviceTest("bounds: 300 changed files, 20 live requests per author, 200 comments", async (w) => {
  const { admin, member } = await protectedWorld(w);
  const many: Record<string, string> = { ...BASE };
  for (let i = 0; i < 301; i++) many[`flags/f${i}.toml`] = other(`f${i}`);
  const before = await snapshot(w);
  await rejectsWithCode(() => open(w, member, many), "invalid_request", 400);
  await assertUnchanged(w, before);
  for (let i = 0; i < MAX_LIVE_REQUESTS; i++) {
    await open(w, member, { ...BASE, "flags/b.toml": other(`b ${i}`) }, `change ${i}`);
  }
  await rejectsWithCode(
    () => open(w, member, { ...BASE, "flags/b.toml": other("one more") }),
    "conflict",
    409,
  );
  const { items } = await listChanges(w.services, admin, web, { limit: 1 });
  const id = items[0]!.id;
  await withdrawChange(w.services, member, web, id, ctx);
  await open(w, member, { ...BASE, "flags/b.toml": other("after a withdrawal") });
  for (let i = 0; i < MAX_COMMENTS; i++) {
    await commentOnChange(w.services, admin, web, id, `c${i}`, ctx);
  }
  await rejectsWithCode(
    () => commentOnChange(w.services, admin, web, id, "one too many", ctx),
    "conflict",
    409,
  );
});
