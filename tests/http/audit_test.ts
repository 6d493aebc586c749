/**
 * `GET /api/v1/audit` (lib/http/audit.ts) and the control-plane changes it
 * records, each made through the real HTTP API in-process: the change's
 * entry is found exactly once with its type, actor, principal type,
 * request id, tenant, namespace and details; a refused change (a push
 * with a stale `If-Match`, a taken slug) leaves no entry; `since` lists
 * only what is newer than an entry, newest first, and pages with `after`.
 */
import { assert, assertEquals } from "../assert.ts";
import { type Person, signInTest, type SignInWorld } from "./auth/world.ts";

// deno-lint-ignore no-explicit-any
type Entry = Record<string, any>;

const NS = "/api/v1/tenants/acme/namespaces";
const MANIFEST = `${NS}/web/manifest`;

/** Sends a request as `bearer` and checks the status; returns the body and the request id. */
async function send(
  w: SignInWorld,
  method: string,
  path: string,
  bearer: string,
  status: number,
  json?: unknown,
  headers?: Record<string, string>,
): Promise<{ body: Entry; requestId: string }> {
  const res = await w.call(method, path, {
    bearer,
    ...(json === undefined ? {} : { json }),
    ...(headers === undefined ? {} : { headers }),
  });
  const text = await res.text();
  assertEquals(res.status, status, `${method} ${path}: ${text}`);
  return { body: JSON.parse(text), requestId: res.headers.get("x-request-id")! };
}

/** The entries of `type` the superadmin reads, newest first, with extra filters. */
async function entries(w: SignInWorld, type: string, query = ""): Promise<Entry[]> {
  const res = await w.json("GET", `/api/v1/audit?type=${type}&limit=500${query}`, {
    bearer: w.admin,
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return res.body.entries as Entry[];
}

/** Exactly one entry of `type` (with the filters), returned. */
async function theOne(w: SignInWorld, type: string, query = ""): Promise<Entry> {
  const found = await entries(w, type, query);
  assertEquals(found.length, 1, `${type}${query}: ${JSON.stringify(found)}`);
  return found[0]!;
}

/** The superadmin's token id. */
async function adminId(w: SignInWorld): Promise<string> {
  const me = await w.json("GET", "/api/v1/me", { bearer: w.admin });
  return (me.body.principal as { token: { id: string } }).token.id;
}

/** The fields every control-plane entry has, checked against the change's request. */
function assertMadeBy(
  e: Entry,
  by: { actor: string; type: "service" | "user"; requestId: string },
  where: { tenant: string | null; namespace: string | null },
): void {
  assertEquals(e.actor_id, by.actor);
  assertEquals(e.principal_type, by.type);
  assertEquals(e.request_id, by.requestId);
  assertEquals(e.result, "success");
  assertEquals(e.tenant_slug, where.tenant);
  assertEquals(e.namespace_slug, where.namespace);
  assertEquals([e.token_id, e.token_prefix, e.token_type], [null, null, null]);
  assert(/^[0-9A-HJKMNP-TV-Z]{26}$/.test(e.id), e.id);
  assert(!Number.isNaN(Date.parse(e.timestamp)));
}

const NAMESPACE_TOML = "schema_version = 1\n[namespace.environments.prod]\n";
const FLAG =
  'schema_version = 1\ntype = "boolean"\ndefault = "a"\n[variations]\na = true\nb = false\n';

signInTest(
  "creating and deleting a tenant is audited as the caller, with the request id",
  async (w) => {
    const admin = await adminId(w);
    const made = await send(w, "POST", "/api/v1/tenants", w.admin, 201, {
      slug: "beta",
      description: "B",
    });
    const created = await theOne(w, "tenant.created", "&tenant=beta");
    assertMadeBy(created, { actor: admin, type: "service", requestId: made.requestId }, {
      tenant: "beta",
      namespace: null,
    });
    assertEquals(created.details, { description: "B" });

    await send(w, "POST", "/api/v1/tenants/beta/namespaces", w.admin, 201, { slug: "app" });
    const gone = await send(w, "DELETE", "/api/v1/tenants/beta", w.admin, 200);
    const deleted = await theOne(w, "tenant.deleted", "&tenant=beta");
    assertMadeBy(deleted, { actor: admin, type: "service", requestId: gone.requestId }, {
      tenant: "beta",
      namespace: null,
    });
    assertEquals(deleted.details.description, "B");
    assertEquals(deleted.details.created_by, admin);
    // its namespace went with it, in the same request
    const cascade = await theOne(w, "namespace.deleted", "&tenant=beta");
    assertEquals(cascade.request_id, gone.requestId);
    assertEquals(cascade.details.reason, "tenant deleted");
    assertEquals(cascade.namespace_slug, "app");
  },
);

signInTest("creating and deleting a namespace is audited with its last version", async (w) => {
  const admin = await adminId(w);
  const made = await send(w, "POST", NS, w.admin, 201, { slug: "web", description: "Web" });
  const created = await theOne(w, "namespace.created", "&tenant=acme");
  assertMadeBy(created, { actor: admin, type: "service", requestId: made.requestId }, {
    tenant: "acme",
    namespace: "web",
  });
  assertEquals(created.details, { description: "Web" });
  const pushed = await send(w, "PUT", MANIFEST, w.admin, 201, {
    files: { "namespace.toml": NAMESPACE_TOML },
  });
  const gone = await send(w, "DELETE", `${NS}/web`, w.admin, 200);
  const deleted = await theOne(w, "namespace.deleted", "&tenant=acme&namespace=web");
  assertMadeBy(deleted, { actor: admin, type: "service", requestId: gone.requestId }, {
    tenant: "acme",
    namespace: "web",
  });
  assertEquals(deleted.details.version, 1);
  assertEquals(deleted.details.closure_hash, pushed.body.closure_hash);
  assertEquals(deleted.details.reason, undefined, "deleted on its own");
});

signInTest(
  "a push and a rollback are audited with version, hash, message and file count",
  async (w) => {
    const admin = await adminId(w);
    await send(w, "POST", NS, w.admin, 201, { slug: "web" });
    const first = await send(w, "PUT", MANIFEST, w.admin, 201, {
      files: { "namespace.toml": NAMESPACE_TOML },
      message: "first",
    });
    const second = await send(w, "PUT", MANIFEST, w.admin, 201, {
      files: { "namespace.toml": NAMESPACE_TOML, "flags/dark.toml": FLAG },
      message: "add dark",
    });
    const pushes = await entries(w, "manifest.pushed", "&tenant=acme&namespace=web");
    assertEquals(pushes.length, 2);
    assertMadeBy(pushes[0]!, { actor: admin, type: "service", requestId: second.requestId }, {
      tenant: "acme",
      namespace: "web",
    });
    assertEquals(pushes[0]!.details, {
      version: 2,
      closure_hash: second.body.closure_hash,
      message: "add dark",
      file_count: 2,
      previous_version: 1,
    });
    assertEquals(pushes[1]!.request_id, first.requestId);
    assertEquals(pushes[1]!.details.version, 1);

    // pushing the same content again changes nothing and is not audited
    await send(w, "PUT", MANIFEST, w.admin, 200, {
      files: { "namespace.toml": NAMESPACE_TOML, "flags/dark.toml": FLAG },
    });
    assertEquals((await entries(w, "manifest.pushed", "&tenant=acme")).length, 2);

    const back = await send(w, "POST", `${NS}/web/rollback`, w.admin, 201, { version: 1 });
    const rolled = await theOne(w, "manifest.rolled_back", "&tenant=acme");
    assertMadeBy(rolled, { actor: admin, type: "service", requestId: back.requestId }, {
      tenant: "acme",
      namespace: "web",
    });
    assertEquals(rolled.details, {
      version: 3,
      closure_hash: first.body.closure_hash,
      message: "rollback to version 1",
      file_count: 1,
      previous_version: 2,
      rolled_back_to: 1,
    });
  },
);

signInTest("a push refused by If-Match, and a taken slug, leave no entry", async (w) => {
  await send(w, "POST", NS, w.admin, 201, { slug: "web" });
  await send(w, "PUT", MANIFEST, w.admin, 201, { files: { "namespace.toml": NAMESPACE_TOML } });
  const before = await entries(w, "manifest.pushed", "&tenant=acme");
  // a push that expected version 0 while the head is 1
  const stale = await w.json("PUT", MANIFEST, {
    bearer: w.admin,
    json: { files: { "namespace.toml": NAMESPACE_TOML, "flags/dark.toml": FLAG } },
    headers: { "if-match": '"v0"' },
  });
  assertEquals(stale.status, 412, JSON.stringify(stale.body));
  assertEquals(await entries(w, "manifest.pushed", "&tenant=acme"), before);
  const head = await w.json("GET", `${NS}/web`, { bearer: w.admin });
  assertEquals(head.status, 200);

  // taken slugs: 409 and still one creation each
  await send(w, "POST", NS, w.admin, 409, { slug: "web" });
  await send(w, "POST", "/api/v1/tenants", w.admin, 409, { slug: "acme" });
  assertEquals((await entries(w, "namespace.created", "&tenant=acme")).length, 1);
  assertEquals((await entries(w, "tenant.created", "&tenant=acme")).length, 1);
  // a removal of someone who is no admin: 404 and no entry
  const ana = await w.person("ana@acme.test", "acme");
  await send(w, "DELETE", `/api/v1/tenants/acme/admins/${ana.user_id}`, w.admin, 404);
  assertEquals(await entries(w, "admin.removed", "&tenant=acme"), []);
});

signInTest(
  "adding and removing tenant and namespace admins is audited with the user and the scope",
  async (w) => {
    const admin = await adminId(w);
    await send(w, "POST", NS, w.admin, 201, { slug: "web" });
    const ada: Person = await w.person("ada@acme.test", "acme");
    const bo: Person = await w.person("bo@acme.test", "acme");

    // the superadmin makes ada a tenant admin (by email)
    const added = await send(w, "POST", "/api/v1/tenants/acme/admins", w.admin, 201, {
      user_id: "ada@acme.test",
    });
    const tenantAdded = await theOne(w, "admin.added", "&tenant=acme");
    assertMadeBy(tenantAdded, { actor: admin, type: "service", requestId: added.requestId }, {
      tenant: "acme",
      namespace: null,
    });
    assertEquals(tenantAdded.details, {
      user_id: ada.user_id,
      email: "ada@acme.test",
      scope: "tenant",
    });

    // ada, a person, makes bo a namespace admin and removes him again
    const nsAdded = await send(w, "POST", `${NS}/web/admins`, ada.secret, 201, {
      user_id: bo.user_id,
    });
    const addedEntry = await theOne(w, "admin.added", "&tenant=acme&namespace=web");
    assertMadeBy(addedEntry, { actor: ada.user_id, type: "user", requestId: nsAdded.requestId }, {
      tenant: "acme",
      namespace: "web",
    });
    assertEquals(addedEntry.details, {
      user_id: bo.user_id,
      email: "bo@acme.test",
      scope: "namespace",
    });
    // adding again changes nothing: no second entry
    await w.call("POST", `${NS}/web/admins`, { bearer: ada.secret, json: { user_id: bo.user_id } });
    assertEquals((await entries(w, "admin.added", "&tenant=acme&namespace=web")).length, 1);

    const nsRemoved = await send(w, "DELETE", `${NS}/web/admins/${bo.user_id}`, ada.secret, 200);
    const removedEntry = await theOne(w, "admin.removed", "&tenant=acme&namespace=web");
    assertMadeBy(
      removedEntry,
      { actor: ada.user_id, type: "user", requestId: nsRemoved.requestId },
      {
        tenant: "acme",
        namespace: "web",
      },
    );
    assertEquals(removedEntry.details, {
      user_id: bo.user_id,
      email: "bo@acme.test",
      scope: "namespace",
    });

    // the superadmin removes ada as tenant admin
    const removed = await send(
      w,
      "DELETE",
      `/api/v1/tenants/acme/admins/${ada.user_id}`,
      w.admin,
      200,
    );
    const tenantRemoved = (await entries(w, "admin.removed", "&tenant=acme"))
      .filter((e) => e.namespace_slug === null);
    assertEquals(tenantRemoved.length, 1);
    assertMadeBy(
      tenantRemoved[0]!,
      { actor: admin, type: "service", requestId: removed.requestId },
      {
        tenant: "acme",
        namespace: null,
      },
    );
    assertEquals(tenantRemoved[0]!.details.scope, "tenant");
  },
);

signInTest("deleting a namespace removes its admins, each audited with the reason", async (w) => {
  await send(w, "POST", NS, w.admin, 201, { slug: "web" });
  const bo = await w.person("bo@acme.test", "acme");
  await send(w, "POST", `${NS}/web/admins`, w.admin, 201, { user_id: bo.user_id });
  const gone = await send(w, "DELETE", `${NS}/web`, w.admin, 200);
  const removed = await theOne(w, "admin.removed", "&tenant=acme");
  assertEquals(removed.request_id, gone.requestId);
  assertEquals(removed.details, {
    user_id: bo.user_id,
    email: "bo@acme.test",
    scope: "namespace",
    reason: "namespace deleted",
  });
});

signInTest("since lists only newer entries, newest first, and pages back with after", async (w) => {
  const first = (await entries(w, "tenant.created", "&tenant=acme"))[0]!;
  for (const slug of ["a1", "a2", "a3"]) {
    await send(w, "POST", NS, w.admin, 201, { slug });
  }
  const newer = await w.json("GET", `/api/v1/audit?tenant=acme&since=${first.id}`, {
    bearer: w.admin,
  });
  assertEquals(newer.status, 200);
  const slugs = (newer.body.entries as Entry[]).map((e) => e.namespace_slug);
  assertEquals(slugs, ["a3", "a2", "a1"]);
  const ids = (newer.body.entries as Entry[]).map((e) => e.id);
  // a page of one at a time within the range
  const seen: string[] = [];
  let after: string | null = null;
  do {
    const q: string = `/api/v1/audit?tenant=acme&since=${first.id}&limit=1` +
      (after === null ? "" : `&after=${after}`);
    const page = await w.json("GET", q, { bearer: w.admin });
    seen.push(...(page.body.entries as Entry[]).map((e) => e.id));
    after = page.body.next as string | null;
  } while (after !== null);
  assertEquals(seen, ids);
  // since the newest entry: nothing; the same over the installation-wide list
  const none = await w.json("GET", `/api/v1/audit?since=${ids[0]}`, { bearer: w.admin });
  assertEquals(none.body.entries, []);
  const bad = await w.json("GET", "/api/v1/audit?since=yesterday", { bearer: w.admin });
  assertEquals(bad.status, 400);
  assertEquals(bad.body.code, "invalid_request");
  assertEquals(bad.body.details, { field: "since" });
});

signInTest(
  "a new tenant reusing a deleted tenant's slug reads only its own entries; the superadmin reads all",
  async (w) => {
    await send(w, "POST", "/api/v1/tenants", w.admin, 201, { slug: "beta", description: "old" });
    await send(w, "POST", "/api/v1/tenants/beta/namespaces", w.admin, 201, { slug: "secret-app" });
    await send(w, "DELETE", "/api/v1/tenants/beta", w.admin, 200);
    w.advance(1000);
    await send(w, "POST", "/api/v1/tenants", w.admin, 201, { slug: "beta", description: "new" });
    await send(w, "POST", "/api/v1/tenants/beta/namespaces", w.admin, 201, { slug: "app" });
    const token = await send(w, "POST", "/api/v1/tokens", w.admin, 201, {
      type: "tenant-admin",
      name: "beta-admin",
      tenant_slug: "beta",
    });
    const admin = token.body.secret as string;

    for (const query of ["", "?tenant=beta"]) {
      const res = await w.json("GET", `/api/v1/audit${query}`, { bearer: admin });
      assertEquals(res.status, 200, JSON.stringify(res.body));
      const seen = (res.body.entries as Entry[])
        .filter((e) => e.type !== "token.authenticated") // the token's first uses
        .map((e) => [e.type, e.namespace_slug]);
      assertEquals(seen, [
        ["token.created", null],
        ["namespace.created", "app"],
        ["tenant.created", null],
      ], `GET /api/v1/audit${query}`);
      const created = (res.body.entries as Entry[]).at(-1)!;
      assertEquals(created.details, { description: "new" });
    }
    // the old tenant's entries are still the installation's: listed without a tenant
    const all = await w.json("GET", "/api/v1/audit?limit=500", { bearer: w.admin });
    const old = (all.body.entries as Entry[]).filter((e) => e.tenant_slug === "beta");
    assertEquals(old.filter((e) => e.type === "tenant.created").length, 2);
    assertEquals(old.filter((e) => e.type === "tenant.deleted").length, 1);
    assert(old.some((e) => e.namespace_slug === "secret-app"));
  },
);
