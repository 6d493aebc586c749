/**
 * A person's role level remembered per process (lib/auth/level_memo.ts):
 * a repeated request by a session reads no admin list, login policy or
 * tenant record to authorise it, and every change that could lower the
 * level is refused from the very next request of the process that made it
 * (and by another process once its epoch poll sees the change), with
 * nothing written by the refused request.
 */
import { assertEquals } from "../assert.ts";
import { OIDC_POLICY } from "../http/auth/world.ts";
import { createApp } from "../../lib/server/app.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../../lib/auth/bootstrap.ts";
import { CredentialCache } from "../../lib/auth/credential_cache.ts";
import { LevelMemo } from "../../lib/auth/level_memo.ts";
import { signIn } from "../../lib/login/sign_in.ts";
import { Runtime } from "../../lib/runtime/runtime.ts";
import { DEFAULT_SETTINGS } from "../../lib/settings.ts";
import { bumpCredentialEpoch } from "../../lib/store/credential_epoch.ts";
import { createTenant } from "../../lib/store/tenants.ts";

/** What the store was asked while a function ran: reads and writes by the key's first part. */
interface Traffic {
  reads: string[];
  writes: string[];
}

/**
 * Records the KV reads and writes made while `fn` runs. The epoch poll's
 * read (`credential_epoch`, on a timer whatever the requests) and the
 * throttled `last_seen_at` write of the session (`session`) are left out.
 */
async function traffic(fn: () => Promise<unknown>): Promise<Traffic> {
  // deno-lint-ignore no-explicit-any
  const kvProto = Deno.Kv.prototype as any;
  // deno-lint-ignore no-explicit-any
  const opProto = Deno.AtomicOperation.prototype as any;
  const t: Traffic = { reads: [], writes: [] };
  const note = (list: string[], key: unknown) => {
    const first = String((key as unknown[])[0]);
    if (first !== "credential_epoch" && first !== "session") list.push(first);
  };
  const saved = new Map<[object, string], unknown>();
  const wrap = (proto: object, name: string, record: (args: unknown[]) => void) => {
    const orig = (proto as Record<string, (...a: unknown[]) => unknown>)[name]!;
    saved.set([proto, name], orig);
    (proto as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      record(args);
      return orig.apply(this, args);
    };
  };
  wrap(kvProto, "get", (a) => note(t.reads, a[0]));
  wrap(kvProto, "getMany", (a) => (a[0] as unknown[]).forEach((k) => note(t.reads, k)));
  wrap(kvProto, "list", (a) => note(t.reads, (a[0] as { prefix?: unknown[] }).prefix ?? ["?"]));
  wrap(kvProto, "set", (a) => note(t.writes, a[0]));
  wrap(kvProto, "delete", (a) => note(t.writes, a[0]));
  wrap(opProto, "set", (a) => note(t.writes, a[0]));
  wrap(opProto, "delete", (a) => note(t.writes, a[0]));
  wrap(opProto, "sum", (a) => note(t.writes, a[0]));
  wrap(opProto, "mutate", (a) => a.forEach((m) => note(t.writes, (m as { key: unknown }).key)));
  try {
    await fn();
  } finally {
    for (const [[proto, name], orig] of saved) (proto as Record<string, unknown>)[name] = orig;
  }
  return t;
}

/** The status of a request, its body read. */
async function status(res: Response | Promise<Response>): Promise<number> {
  const r = await res;
  await r.body?.cancel();
  return r.status;
}

/** A person signed in to a tenant. */
interface Person {
  user_id: string;
  secret: string;
  cookie: string;
}

/** What a request carries. */
interface CallOptions {
  bearer?: string;
  cookie?: string;
  body?: unknown;
}

/** The app in-process on a `:memory:` store with tenant acme, and its runtime. */
interface World {
  /** The superadmin's secret. */
  admin: string;
  /** Moves the app's clock forward. */
  advance(ms: number): void;
  /** A session made by an OIDC sign-in to acme. */
  person(email: string, groups?: string[]): Promise<Person>;
  call(method: string, path: string, o: CallOptions): Promise<Response>;
  json(
    method: string,
    path: string,
    o: CallOptions,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /**
   * Has the process read the credential epoch, as its next poll would: what
   * is remembered from now on is not dropped by a poll catching up on a
   * change made earlier.
   */
  settle(): Promise<void>;
}

/** Runs a test on a fresh world and closes it after. */
function memoTest(name: string, fn: (w: World) => Promise<void>): void {
  Deno.test(name, async () => {
    const kv = await Deno.openKv(":memory:");
    const key = await randomTokenKey();
    let now = Date.now();
    const clock = () => new Date(now);
    const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
    try {
      const app = createApp({
        kv,
        key,
        log: () => {},
        settings: DEFAULT_SETTINGS,
        runtime,
        now: clock,
      });
      const boot = await bootstrapSuperadmin(kv, key);
      await createTenant(kv, { slug: "acme", created_by: boot.token.id, now: clock });
      const call: World["call"] = (method, path, o) => {
        const headers = new Headers();
        if (o.bearer) headers.set("authorization", `Bearer ${o.bearer}`);
        if (o.cookie) headers.set("cookie", o.cookie);
        if (o.body !== undefined) headers.set("content-type", "application/json");
        const body = o.body === undefined ? null : JSON.stringify(o.body);
        return Promise.resolve(
          app.request(`http://127.0.0.1:8080${path}`, { method, headers, body }),
        );
      };
      await fn({
        admin: boot.secret,
        advance: (ms) => void (now += ms),
        person: async (email, groups = []) => {
          const made = await signIn(
            { kv, key, now: clock },
            { tenant: "acme", email, method: "oidc", assurance: ["pwd"], groups },
            "browser",
            { requestId: "test" },
          );
          return {
            user_id: made.session.user_id,
            secret: made.secret,
            cookie: `cfgtool_session=${made.secret}`,
          };
        },
        call,
        json: async (method, path, o) => {
          const res = await call(method, path, o);
          return { status: res.status, body: await res.json() };
        },
        settle: async () => void await runtime.credentials.sync(),
      });
    } finally {
      runtime.close();
      kv.close();
    }
  });
}

/** Makes a user a tenant admin of acme, as the superadmin. */
async function addAdmin(w: World, email: string): Promise<void> {
  const res = await w.json("POST", "/api/v1/tenants/acme/admins", {
    bearer: w.admin,
    body: { user_id: email },
  });
  assertEquals(res.status, 201, JSON.stringify(res.body));
}

memoTest(
  "a person's repeated GET /api/v1/tenants/acme reads nothing to authorise it",
  async (w) => {
    const ana = await w.person("ana@acme.test");
    await addAdmin(w, "ana@acme.test");
    const bo = await w.person("bo@acme.test", ["ops"]);
    await w.settle();
    const callers = [{ bearer: ana.secret }, { cookie: ana.cookie }, { bearer: bo.secret }];
    for (const options of callers) {
      assertEquals(await status(w.call("GET", "/api/v1/tenants/acme", options)), 200);
      const again = await traffic(async () => {
        assertEquals(await status(w.call("GET", "/api/v1/tenants/acme", options)), 200);
      });
      // the one read left is the record the answer carries
      assertEquals(again.reads, ["tenant"]);
      assertEquals(again.writes, []);
    }
    // the admin list: what is read is what the answer shows (the tenant, its admins)
    const admins = () => w.call("GET", "/api/v1/tenants/acme/admins", { bearer: ana.secret });
    assertEquals(await status(admins()), 200);
    const listed = await traffic(async () => assertEquals(await status(admins()), 200));
    assertEquals(listed.reads, ["tenant", "tenant_admin"]);
  },
);

memoTest(
  "removing a person from the tenant admin list is refused on the very next request",
  async (w) => {
    const ana = await w.person("ana@acme.test");
    await addAdmin(w, "ana@acme.test");
    const admins = () => w.call("GET", "/api/v1/tenants/acme/admins", { bearer: ana.secret });
    const addSelf = () =>
      w.call("POST", "/api/v1/tenants/acme/admins", {
        bearer: ana.secret,
        body: { user_id: ana.user_id },
      });
    // a human tenant admin may change the admin list (adding herself again changes nothing)
    assertEquals(await status(addSelf()), 201);
    assertEquals(await status(addSelf()), 201);
    const removed = await w.json("DELETE", `/api/v1/tenants/acme/admins/${ana.user_id}`, {
      bearer: w.admin,
    });
    assertEquals(removed.status, 200);
    // still a member (her sign-in admitted her), no longer an admin
    assertEquals(await status(admins()), 200);
    const refused = await traffic(async () => assertEquals(await status(addSelf()), 403));
    assertEquals(refused.writes, []);
    const listed = await w.json("GET", "/api/v1/tenants/acme/admins", { bearer: w.admin });
    assertEquals(listed.body.admins, []);
  },
);

memoTest("a tenant deleted and made again does not keep the rights of the old one", async (w) => {
  const ana = await w.person("ana@acme.test");
  await addAdmin(w, "ana@acme.test");
  const read = () => status(w.call("GET", "/api/v1/tenants/acme", { cookie: ana.cookie }));
  assertEquals(await read(), 200);
  assertEquals(await read(), 200);
  assertEquals(await status(w.call("DELETE", "/api/v1/tenants/acme", { bearer: w.admin })), 200);
  assertEquals(await read(), 403);
  w.advance(1000); // the new acme is made after ana signed in to the old one
  const made = await w.json("POST", "/api/v1/tenants", { bearer: w.admin, body: { slug: "acme" } });
  assertEquals(made.status, 201);
  const refused = await traffic(async () => {
    assertEquals(await read(), 403);
    assertEquals(
      await status(w.call("POST", "/api/v1/tenants/acme/namespaces", {
        bearer: ana.secret,
        body: { slug: "web" },
      })),
      403,
    );
  });
  assertEquals(refused.writes, []);
  const namespaces = await w.json("GET", "/api/v1/tenants/acme/namespaces", { bearer: w.admin });
  assertEquals(namespaces.body.namespaces, []);
});

memoTest(
  "a login policy that no longer names a person's group is refused on the very next request",
  async (w) => {
    const setPolicy = async (groups: string[]) => {
      const res = await w.json("PUT", "/api/v1/tenants/acme/login", {
        bearer: w.admin,
        body: { ...OIDC_POLICY, admin_groups: groups },
      });
      assertEquals(res.status, 200, JSON.stringify(res.body));
    };
    await setPolicy(["ops"]);
    const bo = await w.person("bo@acme.test", ["ops"]);
    await w.settle();
    const readPolicy = () =>
      status(w.call("GET", "/api/v1/tenants/acme/login", { bearer: bo.secret }));
    assertEquals(await readPolicy(), 200);
    const again = await traffic(async () => assertEquals(await readPolicy(), 200));
    assertEquals(again.reads.filter((k) => k !== "login_policy" && k !== "tenant"), []);
    assertEquals(
      again.reads.filter((k) => k === "login_policy").length,
      1,
      "the policy answered, once",
    );
    await setPolicy(["admins"]);
    const refused = await traffic(async () => {
      assertEquals(await readPolicy(), 403);
      assertEquals(
        await status(w.call("PUT", "/api/v1/tenants/acme/login", {
          bearer: bo.secret,
          body: { ...OIDC_POLICY, admin_groups: ["ops"] },
        })),
        403,
      );
    });
    assertEquals(refused.writes, []);
    // and a member still reads the tenant
    assertEquals(await status(w.call("GET", "/api/v1/tenants/acme", { bearer: bo.secret })), 200);
  },
);

Deno.test("a level remembered by another process is dropped once its epoch poll sees the change (admin removed, tenant deleted)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-level-memo-" });
  const path = `${dir}/kv.sqlite3`;
  const key = await randomTokenKey();
  // the store is made before the second handle opens it (one writer at a time while it starts)
  const kvA = await Deno.openKv(path);
  const boot = await bootstrapSuperadmin(kvA, key);
  await createTenant(kvA, { slug: "acme", created_by: boot.token.id });
  const made = await signIn(
    { kv: kvA, key },
    { tenant: "acme", email: "ana@acme.test", method: "oidc", assurance: ["pwd"], groups: [] },
    "browser",
    { requestId: "test" },
  );
  const kvB = await Deno.openKv(path);
  const settings = { ...DEFAULT_SETTINGS, credentialPollMs: 10 };
  const runtimeA = new Runtime({ kv: kvA, key, log: () => {}, settings });
  const runtimeB = new Runtime({ kv: kvB, key, log: () => {}, settings });
  try {
    const appOf = (kv: Deno.Kv, runtime: Runtime) =>
      createApp({ kv, key, log: () => {}, settings, runtime });
    const a = appOf(kvA, runtimeA);
    const b = appOf(kvB, runtimeB);
    const call = (app: typeof a, method: string, path: string, bearer: string, body?: unknown) =>
      status(app.request(`http://127.0.0.1:8080${path}`, {
        method,
        headers: {
          authorization: `Bearer ${bearer}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? null : JSON.stringify(body),
      }));
    const login = "/api/v1/tenants/acme/login";
    const admins = "/api/v1/tenants/acme/admins";
    assertEquals(await call(a, "PUT", login, boot.secret, OIDC_POLICY), 200);
    assertEquals(await call(a, "POST", admins, boot.secret, { user_id: "ana@acme.test" }), 201);
    // a tenant admin reads the login policy; B remembers ana's level
    await runtimeB.credentials.sync(); // B has read the epoch of both changes
    const readPolicy = (app: typeof a) => call(app, "GET", login, made.secret);
    assertEquals(await readPolicy(b), 200);
    const remembered = await traffic(async () => assertEquals(await readPolicy(b), 200));
    assertEquals(remembered.reads, ["tenant", "login_policy"]);
    assertEquals(await call(a, "DELETE", `${admins}/${made.session.user_id}`, boot.secret), 200);
    // A, the process that removed her: the very next request
    assertEquals(await readPolicy(a), 403);
    // B: once its poll has seen the epoch move (no timing asserted, only that it comes)
    let bStatus = await readPolicy(b);
    for (let i = 0; i < 1000 && bStatus !== 403; i++) {
      await new Promise((r) => setTimeout(r, 5));
      bStatus = await readPolicy(b);
    }
    assertEquals(bStatus, 403);
    const refused = await traffic(async () => {
      assertEquals(await call(b, "PUT", login, made.secret, OIDC_POLICY), 403);
      assertEquals(await call(b, "POST", admins, made.secret, { user_id: "ana@acme.test" }), 403);
    });
    assertEquals(refused.writes, []);
    // still admitted to acme by her sign-in, until acme is deleted (through A)
    const readTenant = (app: typeof a) => call(app, "GET", "/api/v1/tenants/acme", made.secret);
    assertEquals(await readTenant(b), 200);
    assertEquals(await readTenant(b), 200);
    assertEquals(await call(a, "DELETE", "/api/v1/tenants/acme", boot.secret), 200);
    assertEquals(await readTenant(a), 403);
    // B refuses (403) rather than looking for a tenant it still thinks she may read (404)
    bStatus = await readTenant(b);
    for (let i = 0; i < 1000 && bStatus !== 403; i++) {
      await new Promise((r) => setTimeout(r, 5));
      bStatus = await readTenant(b);
    }
    assertEquals(bStatus, 403);
  } finally {
    runtimeA.close();
    runtimeB.close();
    kvA.close();
    kvB.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the memo keeps a level only while the credential cache can vouch for it", async () => {
  const kv = await Deno.openKv(":memory:");
  let clock = 0;
  const cache = new CredentialCache(kv, { pollMs: 60_000, staleAfterMs: 1_000, now: () => clock });
  const memo = new LevelMemo(cache);
  const p = {
    kind: "session" as const,
    user_id: "usr_1",
    session_id: "ssn_1",
    tenants: ["acme"],
    groups: ["ops"],
    since: "2030-01-01T00:00:00.000Z",
  };
  let reads = 0;
  const read = () => Promise.resolve(`level ${++reads}`);
  try {
    // not started: every check reads
    await memo.level(p, "acme", undefined, read);
    await memo.level(p, "acme", undefined, read);
    assertEquals(reads, 2);
    await cache.start();
    assertEquals(await memo.level(p, "acme", undefined, read), "level 3");
    assertEquals(await memo.level(p, "acme", undefined, read), "level 3");
    // another question is another key: namespace, groups, sign-in time, tenants
    assertEquals(await memo.level(p, "acme", "web", read), "level 4");
    assertEquals(await memo.level({ ...p, groups: [] }, "acme", undefined, read), "level 5");
    assertEquals(
      await memo.level({ ...p, since: "2030-01-02T00:00:00.000Z" }, "acme", undefined, read),
      "level 6",
    );
    assertEquals(await memo.level({ ...p, tenants: [] }, "acme", undefined, read), "level 7");
    // a level computed while a change was made through this process is not kept
    const during = await memo.level(p, "other", undefined, () => {
      cache.changed();
      return read();
    });
    assertEquals(during, "level 8");
    assertEquals(await memo.level(p, "other", undefined, read), "level 9");
    assertEquals(await memo.level(p, "other", undefined, read), "level 9");
    // a change committed anywhere, once the cache has read the epoch
    await bumpCredentialEpoch(kv.atomic()).commit();
    assertEquals(
      await memo.level(p, "other", undefined, read),
      "level 9",
      "the poll has not run yet",
    );
    await cache.sync();
    assertEquals(await memo.level(p, "other", undefined, read), "level 10");
    // a poll that has not succeeded for staleAfterMs: nothing is trusted
    clock += 1_001;
    assertEquals(await memo.level(p, "other", undefined, read), "level 11");
    assertEquals(await memo.level(p, "other", undefined, read), "level 12");
    // a poll that succeeds again on the same epoch: nothing was committed meanwhile
    await cache.sync();
    assertEquals(await memo.level(p, "other", undefined, read), "level 10");
    // closed: nothing is trusted
    cache.close();
    assertEquals(await memo.level(p, "other", undefined, read), "level 13");
  } finally {
    cache.close();
    kv.close();
  }
});
