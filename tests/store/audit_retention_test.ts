/**
 * The audit-retention policy (lib/store/audit_retention.ts) with an
 * injected clock: audit entries just older than the period go with both
 * their keys, just younger ones stay; revoked and expired token records
 * past the period go from every index, live and recently revoked ones
 * stay; a pass works through more than one batch, and stops at its bound
 * to go on in the next pass; the task runs under a lease, logs its counts
 * and tells `onPruned`.
 */
import { assert, assertEquals } from "../assert.ts";
import { authWorld } from "../auth/world.ts";
import { createToken, revokeToken } from "../../lib/services/tokens.ts";
import type { LogLevel } from "../../lib/log.ts";
import {
  type AuditPruneResult,
  pruneAudit,
  startAuditRetention,
} from "../../lib/store/audit_retention.ts";
import { type AuditEntry, eventAuditEntry, listAudit, writeAudit } from "../../lib/store/audit.ts";
import { getNameHolder, insertTokenOps, type TokenRecord } from "../../lib/store/tokens.ts";
import { tokenRecord } from "./token_record.ts";

const DAY = 24 * 60 * 60 * 1000;
const RETENTION = 400 * DAY;
const NOW = new Date("2031-06-01T00:00:00Z");
const CUTOFF = NOW.getTime() - RETENTION;
const SYSTEM = { id: "system", principal_type: "system" as const, request_id: null };

/** Writes an audit entry of acme stamped `at` (epoch ms). */
async function entryAt(kv: Deno.Kv, at: number, type = "tenant.created"): Promise<AuditEntry> {
  const e = eventAuditEntry(type, SYSTEM, new Date(at), { tenant_slug: "acme" });
  await writeAudit(kv, e);
  return e;
}

/** Every key whose key or value mentions `text`, outside the audit log. */
async function keysNaming(kv: Deno.Kv, text: string): Promise<Deno.KvKey[]> {
  const out: Deno.KvKey[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    if (e.key[0] === "audit" || e.key[0] === "audit_by_time") continue;
    if (e.value instanceof Deno.KvU64) continue;
    if (JSON.stringify([e.key, e.value]).includes(text)) out.push(e.key);
  }
  return out;
}

/** Stores a token record with every index. */
async function insert(kv: Deno.Kv, over: Partial<TokenRecord>): Promise<TokenRecord> {
  const t = tokenRecord(over);
  assert((await insertTokenOps(kv.atomic(), t).commit()).ok, `insert ${t.id}`);
  return t;
}

const iso = (ms: number) => new Date(ms).toISOString();

Deno.test("audit entries just older than the period are deleted with both keys; just younger ones stay", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const old = await entryAt(kv, CUTOFF - 1);
    const edge = await entryAt(kv, CUTOFF);
    const young = await entryAt(kv, CUTOFF + 1);
    const result = await pruneAudit(kv, { retentionMs: RETENTION, now: NOW });
    assertEquals(result, { auditEntries: 1, tokens: 0, more: false });
    const left = (await listAudit(kv)).items.map((e) => e.id);
    assertEquals(left, [young.id, edge.id]);
    assertEquals((await listAudit(kv, { tenant: "acme" })).items.map((e) => e.id), left);
    assertEquals((await kv.get(["audit", "acme", old.id])).value, null);
    assertEquals((await kv.get(["audit_by_time", old.id])).value, null);
    // a second pass finds nothing more
    assertEquals(await pruneAudit(kv, { retentionMs: RETENTION, now: NOW }), {
      auditEntries: 0,
      tokens: 0,
      more: false,
    });
  } finally {
    kv.close();
  }
});

Deno.test("installation-level entries are pruned from both their keys too", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const e = eventAuditEntry("login.failed", SYSTEM, new Date(CUTOFF - DAY));
    await writeAudit(kv, e);
    assertEquals((await pruneAudit(kv, { retentionMs: RETENTION, now: NOW })).auditEntries, 1);
    assertEquals((await kv.get(["audit", "_installation", e.id])).value, null);
    assertEquals((await kv.get(["audit_by_time", e.id])).value, null);
  } finally {
    kv.close();
  }
});

Deno.test("revoked and expired token records past the period are gone from every index; live and recently revoked ones stay", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const longAgo = iso(CUTOFF - 100 * DAY);
    const dead = [
      // revoked just before the period
      await insert(kv, {
        id: "tok_revoked",
        digest: "d_revoked",
        name: "a",
        status: "revoked",
        revoked_at: iso(CUTOFF - 1),
        revoked_by: "usr_1",
      }),
      // past its expiry, never seen since (its record still says active)
      await insert(kv, {
        id: "tok_unseen",
        digest: "d_unseen",
        name: "b",
        expires_at: iso(CUTOFF - 1),
      }),
      // expired and recorded as such; tenant-wide, so no namespace index
      await insert(kv, {
        id: "tok_expired",
        digest: "d_expired",
        name: "c",
        type: "tenant-admin",
        namespace_slug: null,
        environment_slug: null,
        status: "expired",
        expires_at: iso(CUTOFF - DAY),
      }),
      // revoked after expiring: it stopped working at its expiry
      await insert(kv, {
        id: "tok_both",
        digest: "d_both",
        name: "d",
        status: "revoked",
        expires_at: iso(CUTOFF - DAY),
        revoked_at: iso(CUTOFF + DAY),
      }),
    ];
    const kept = [
      await insert(kv, {
        id: "tok_recent",
        digest: "d_recent",
        name: "e",
        status: "revoked",
        revoked_at: iso(CUTOFF + 1),
      }),
      await insert(kv, { id: "tok_live", digest: "d_live", name: "f", created_at: longAgo }),
      await insert(kv, {
        id: "tok_later",
        digest: "d_later",
        name: "g",
        created_at: longAgo,
        expires_at: iso(NOW.getTime() + DAY),
      }),
    ];
    // revoked tokens free their name; pruning must keep freeing only their own
    for (const t of dead) {
      if (t.status !== "active") {
        await kv.delete(["token_by_name", "acme", t.namespace_slug ?? "_tenant", t.name]);
      }
    }
    const before = new Map<string, Deno.KvKey[]>();
    for (const t of kept) before.set(t.id, await keysNaming(kv, t.id));

    const result = await pruneAudit(kv, { retentionMs: RETENTION, now: NOW });
    assertEquals(result, { auditEntries: 0, tokens: 4, more: false });
    for (const t of dead) {
      assertEquals(await keysNaming(kv, t.id), [], `${t.id} left keys behind`);
      assertEquals((await kv.get(["token_by_digest", t.digest])).value, null);
    }
    assertEquals(
      (await getNameHolder(kv, "acme", "web", "b")).value,
      null,
      "the unseen token's name is free",
    );
    for (const t of kept) {
      assertEquals(await keysNaming(kv, t.id), before.get(t.id), `${t.id} was touched`);
    }
    // the live ones still have all five keys (record, digest, tenant, namespace, name)
    assertEquals((await keysNaming(kv, "tok_live")).length, 5);
  } finally {
    kv.close();
  }
});

Deno.test("a name taken over by a live token stays with it when the old holder is pruned", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    // tok_old was revoked (freeing "ci"), then tok_new took the name
    await insert(kv, {
      id: "tok_old",
      digest: "d_old",
      name: "ci",
      status: "revoked",
      revoked_at: iso(CUTOFF - DAY),
    });
    await kv.delete(["token_by_name", "acme", "web", "ci"]);
    await insert(kv, { id: "tok_new", digest: "d_new", name: "ci" });
    assertEquals((await pruneAudit(kv, { retentionMs: RETENTION, now: NOW })).tokens, 1);
    assertEquals((await getNameHolder(kv, "acme", "web", "ci")).value, "tok_new");
    assertEquals(await keysNaming(kv, "tok_old"), []);
  } finally {
    kv.close();
  }
});

Deno.test("pruning a real token, revoked through the service, leaves no key that names it", async () => {
  const then = new Date(CUTOFF - 10 * DAY);
  const w = await authWorld({ now: () => then });
  try {
    const made = await createToken(w.deps, w.superadmin, {
      type: "namespace-write",
      name: "ci",
      tenant_slug: "acme",
      namespace_slug: "web",
    }, w.ctx);
    await revokeToken(w.deps, w.superadmin, made.token.id, w.ctx);
    const live = await createToken(w.deps, w.superadmin, {
      type: "namespace-read",
      name: "reader",
      tenant_slug: "acme",
      namespace_slug: "web",
    }, w.ctx);
    const liveKeys = await keysNaming(w.kv, live.token.id);
    assertEquals(liveKeys.length, 5);

    const result = await pruneAudit(w.kv, { retentionMs: RETENTION, now: NOW });
    assertEquals(result.tokens, 1);
    assert(result.auditEntries > 0, "the old entries go too");
    // nothing names the pruned token any more, in any index or in the log
    const anywhere: Deno.KvKey[] = [];
    for await (const e of w.kv.list({ prefix: [] })) {
      if (e.value instanceof Deno.KvU64) continue; // counters name nobody
      if (JSON.stringify([e.key, e.value]).includes(made.token.id)) anywhere.push(e.key);
    }
    assertEquals(anywhere, []);
    // the live token still authenticates
    assertEquals(await keysNaming(w.kv, live.token.id), liveKeys);
    const p = await w.login(live.secret);
    assertEquals(p.kind === "token" && p.token.id, live.token.id);
  } finally {
    w.kv.close();
  }
});

Deno.test("a pass works through more than one batch, and stops at its bound to go on in the next", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (let i = 0; i < 25; i++) await entryAt(kv, CUTOFF - DAY + i);
    const young = await entryAt(kv, NOW.getTime() - DAY);
    for (let i = 0; i < 12; i++) {
      await insert(kv, {
        id: `tok_${String(i).padStart(2, "0")}`,
        digest: `d${i}`,
        name: `t${i}`,
        status: "revoked",
        revoked_at: iso(CUTOFF - DAY),
      });
    }
    const small = { retentionMs: RETENTION, now: NOW, batchSize: 4, tokenBatchSize: 5 };
    assertEquals(await pruneAudit(kv, { ...small, maxPerRun: 10 }), {
      auditEntries: 10,
      tokens: 10,
      more: true,
    });
    assertEquals(await pruneAudit(kv, { ...small, maxPerRun: 10 }), {
      auditEntries: 10,
      tokens: 2,
      more: true,
    });
    assertEquals(await pruneAudit(kv, { ...small, maxPerRun: 10 }), {
      auditEntries: 5,
      tokens: 0,
      more: false,
    });
    assertEquals((await listAudit(kv)).items.map((e) => e.id), [young.id]);
    const tokens: unknown[] = [];
    for await (const e of kv.list({ prefix: ["token"] })) tokens.push(e.key);
    assertEquals(tokens, []);
  } finally {
    kv.close();
  }
});

Deno.test("the task runs one pass under a lease, logs its counts and tells onPruned", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    await entryAt(kv, CUTOFF - DAY);
    await entryAt(kv, CUTOFF - DAY + 1);
    const lines: { level: LogLevel; msg: string; fields?: Record<string, unknown> }[] = [];
    const told: AuditPruneResult[] = [];
    const options = {
      retentionMs: RETENTION,
      intervalMs: 60_000,
      now: () => NOW,
      log: (level: LogLevel, msg: string, fields?: Record<string, unknown>) =>
        void lines.push({ level, msg, ...(fields === undefined ? {} : { fields }) }),
      onPruned: (r: AuditPruneResult) => void told.push(r),
    };
    const task = startAuditRetention(kv, options);
    const other = startAuditRetention(kv, options);
    try {
      assertEquals(await task.runOnce(), { auditEntries: 2, tokens: 0, more: false });
      assertEquals(await other.runOnce(), null, "the lease is held by the first process");
      assertEquals(told, [{ auditEntries: 2, tokens: 0, more: false }]);
      assertEquals(lines.length, 1);
      assertEquals(lines[0]!.level, "info");
      assertEquals(lines[0]!.msg, "audit retention run");
      assertEquals(lines[0]!.fields?.audit_entries_deleted, 2);
      assertEquals(lines[0]!.fields?.tokens_deleted, 0);
      // nothing left: the next run says so at debug only
      assertEquals(await task.runOnce(), { auditEntries: 0, tokens: 0, more: false });
      assertEquals(lines.map((l) => l.level), ["info", "debug"]);
      assertEquals(told.length, 2);
    } finally {
      await other.stop();
      await task.stop();
    }
  } finally {
    kv.close();
  }
});
