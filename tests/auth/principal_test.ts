import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ForbiddenError, UnauthorizedError } from "../../lib/errors.ts";
import {
  authenticate,
  authenticateCredential,
  LAST_USED_INTERVAL_MS,
  type Principal,
} from "../../lib/auth/principal.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { createToken, revokeToken } from "../../lib/services/tokens.ts";
import { listAudit } from "../../lib/store/audit.ts";
import { getTokenRecord } from "../../lib/store/tokens.ts";
import { createUser } from "../../lib/store/users.ts";
import { base58 } from "base";
import { authWorld } from "./world.ts";
import { commitEnvironments, worldTest } from "../store/world.ts";

const ctx = { requestId: "req-test" };
const T0 = Date.parse("2030-01-01T00:00:00Z");

/** A store whose clock the test moves; acme/web has staging public. */
async function world() {
  let t = T0;
  const w = await authWorld({ now: () => new Date(t) });
  const setPublic = (staging: boolean) =>
    commitEnvironments(w.kv, { staging: { public_evaluate: staging } });
  await setPublic(true);
  const issue = (input: Parameters<typeof createToken>[2], p: Principal = w.superadmin) =>
    createToken(w.deps, p, input, ctx);
  return { ...w, issue, setPublic, advance: (ms: number) => (t += ms) };
}

const wtest = worldTest(world);

const readInput = { type: "namespace-read", name: "r", tenant_slug: "acme", namespace_slug: "web" };

/** Key and value of a KV entry as text (bytes decoded, KvU64 as digits). */
function dump(e: Deno.KvEntry<unknown>): string {
  return JSON.stringify(e.key) +
    JSON.stringify(
      e.value,
      (_k, v) =>
        v instanceof Uint8Array
          ? new TextDecoder().decode(v)
          : v instanceof Deno.KvU64
          ? String(v.value)
          : v,
    );
}

async function unauthorized(p: Promise<unknown>) {
  const err = await assertRejects(() => p, UnauthorizedError);
  assertEquals([err.status, err.code], [401, "unauthorized"]);
}

wtest("a missing, malformed or unknown credential gets 401", async (w) => {
  await unauthorized(authenticate(w.deps, null, ctx));
  await unauthorized(authenticate(w.deps, "", ctx));
  await unauthorized(authenticate(w.deps, "Basic abc", ctx));
  await unauthorized(authenticate(w.deps, "Bearer svc_read_0OIl", ctx));
  await unauthorized(authenticate(w.deps, "Bearer svc_read_abc def", ctx));
  const fake = `svc_read_${base58.encode(new Uint8Array(32).fill(7))}`;
  await unauthorized(w.login(fake));
  await unauthorized(w.login("ses_abc"));
});

wtest(
  "the bearer scheme is case-insensitive and the principal carries the token record",
  async (w) => {
    const made = await w.issue(readInput);
    const p = await authenticate(w.deps, `bearer ${made.secret}`, ctx);
    assert(p.kind === "token");
    assertEquals(p.token.id, made.token.id);
  },
);

wtest("a revoked token gets 401 on every request", async (w) => {
  const made = await w.issue(readInput);
  await w.login(made.secret);
  await revokeToken(w.deps, w.superadmin, made.token.id, ctx);
  for (let i = 0; i < 3; i++) await unauthorized(w.login(made.secret));
});

wtest(
  "an expired token gets 401, becomes expired (record kept), and is audited token.expired exactly once",
  async (w) => {
    const made = await w.issue({ ...readInput, expires_at: new Date(T0 + 60_000).toISOString() });
    await w.login(made.secret);
    w.advance(60_000);
    await unauthorized(w.login(made.secret));
    await unauthorized(w.login(made.secret));
    w.advance(3_600_000);
    await unauthorized(w.login(made.secret));
    const record = await getTokenRecord(w.kv, made.token.id);
    assertEquals(record.status, "expired");
    assertEquals(record.revoked_at, null);
    const expired = await listAudit(w.kv, { type: "token.expired" });
    assertEquals(expired.items.map((e) => e.token_id), [made.token.id]);
    assertEquals(expired.items[0]!.request_id, "req-test");
  },
);

wtest("concurrent first observations of expiry write one token.expired", async (w) => {
  const made = await w.issue({ ...readInput, expires_at: new Date(T0 + 1_000).toISOString() });
  w.advance(2_000);
  await Promise.allSettled([1, 2, 3, 4].map(() => w.login(made.secret)));
  assertEquals((await listAudit(w.kv, { type: "token.expired" })).items.length, 1);
});

wtest(
  "last_used_at is updated at most once a minute per token, with token.authenticated",
  async (w) => {
    const made = await w.issue(readInput);
    await w.login(made.secret);
    const first = (await getTokenRecord(w.kv, made.token.id)).last_used_at;
    assertEquals(first, new Date(T0).toISOString());
    w.advance(LAST_USED_INTERVAL_MS - 1);
    await w.login(made.secret);
    assertEquals((await getTokenRecord(w.kv, made.token.id)).last_used_at, first);
    w.advance(1);
    await w.login(made.secret);
    assertEquals(
      (await getTokenRecord(w.kv, made.token.id)).last_used_at,
      new Date(T0 + LAST_USED_INTERVAL_MS).toISOString(),
    );
    const audits = await listAudit(w.kv, { token_id: made.token.id, type: "token.authenticated" });
    assertEquals(audits.items.length, 2);
    assertEquals(audits.items[0]!.principal_type, "service");
  },
);

wtest("the client IP is stored only as a keyed hash", async (w) => {
  const made = await w.issue(readInput);
  await w.login(made.secret, "203.0.113.9");
  const record = await getTokenRecord(w.kv, made.token.id);
  assertEquals(record.last_used_ip_hash?.length, 64);
  for await (const e of w.kv.list({ prefix: [] })) {
    assert(!dump(e).includes("203.0.113.9"));
  }
});

wtest(
  "the store keeps digests, never the secret: no KV entry (audit included) holds a token or its payload",
  async (w) => {
    const secrets = [w.boot.secret];
    for (
      const input of [readInput, {
        ...readInput,
        type: "namespace-client",
        name: "c",
        environment_slug: "staging",
      }]
    ) {
      const made = await w.issue(input);
      secrets.push(made.secret);
      await w.login(made.secret, "198.51.100.1");
    }
    const rotated = await (await import("../../lib/services/tokens.ts")).rotateToken(
      w.deps,
      w.superadmin,
      (await w.issue({ ...readInput, name: "rot" })).token.id,
      {},
      ctx,
    );
    secrets.push(rotated.secret);
    const user = await createUser(w.kv, { email: "a@example.com" });
    secrets.push((await createSession(w.kv, w.key, { user: user.id })).secret);
    let entries = 0;
    for await (const e of w.kv.list({ prefix: [] })) {
      entries++;
      const text = dump(e);
      for (const s of secrets) {
        const payload = s.slice(s.lastIndexOf("_") + 1);
        assert(!text.includes(payload), `entry ${JSON.stringify(e.key)} holds a secret`);
      }
    }
    assert(entries > 10);
  },
);

wtest(
  "a namespace-client token works only while its environment has public_evaluate = true; its record stays active",
  async (w) => {
    const made = await w.issue({
      ...readInput,
      type: "namespace-client",
      name: "c",
      environment_slug: "staging",
    });
    const p = await w.login(made.secret);
    assert(p.kind === "token");
    const audits = await listAudit(w.kv, { token_id: made.token.id, type: "token.authenticated" });
    assertEquals(audits.items[0]!.principal_type, "client");
    await w.setPublic(false);
    const err = await assertRejects(() => w.login(made.secret), ForbiddenError);
    assertEquals([err.status, err.code], [403, "forbidden"]);
    const record = await getTokenRecord(w.kv, made.token.id);
    assertEquals([record.status, record.revoked_at], ["active", null]);
    await w.setPublic(true);
    await w.login(made.secret);
  },
);

wtest("a human session authenticates as the user until it expires", async (w) => {
  const user = await createUser(w.kv, { email: "ana@example.com" });
  const { secret } = await createSession(w.kv, w.key, {
    user: "ana@example.com",
    ttl: 3_600_000,
    now: () => new Date(T0),
  });
  const p = await w.login(secret);
  assertEquals(p.kind === "session" ? p.user_id : null, user.id);
  w.advance(3_600_000);
  await unauthorized(w.login(secret));
});

wtest(
  "authenticateCredential() reads the public gate for namespace-client tokens only; the principal carries no mark",
  async (w) => {
    const client = await w.issue({
      type: "namespace-client",
      name: "c",
      tenant_slug: "acme",
      namespace_slug: "web",
      environment_slug: "staging",
    });
    const reader = await w.issue(readInput);
    const user = await createUser(w.kv, { email: "ana@example.com" });
    const session = await createSession(w.kv, w.key, { user: user.id, now: () => new Date(T0) });
    const principal = await authenticateCredential(w.deps, client.secret, ctx);
    assertEquals(Object.keys(principal).sort(), ["kind", "token"]);
    await w.setPublic(false);
    await assertRejects(() => authenticateCredential(w.deps, client.secret, ctx), ForbiddenError);
    for (const secret of [reader.secret, session.secret, w.boot.secret]) {
      await authenticateCredential(w.deps, secret, ctx); // no gate for anyone else
    }
  },
);
