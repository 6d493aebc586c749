import { assert, assertEquals, assertRejects } from "../assert.ts";
import { ConflictError, ForbiddenError, NotFoundError } from "../../lib/errors.ts";
import { sessionPrincipal } from "../../lib/auth/principal.ts";
import {
  addNamespaceAdmin,
  createNamespace,
  deleteNamespace,
  getNamespace,
  listNamespaceAdmins,
  listNamespaces,
  namespaceAdminLists,
  namespaceSummaries,
  removeNamespaceAdmin,
} from "../../lib/services/namespaces.ts";
import { findNamespace, isNamespaceAdmin } from "../../lib/store/namespaces.ts";
import { getTokenRecord } from "../../lib/store/tokens.ts";
import { createUser } from "../../lib/store/users.ts";
import { createSession } from "../../lib/auth/sessions.ts";
import { getHead } from "../../lib/store/versions.ts";
import { serviceTest } from "./world.ts";

const ctx = { requestId: "req-svc" };

serviceTest(
  "a tenant-admin creates a namespace of its tenant at version 0 and the runtime is told",
  async (w) => {
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    const ns = await createNamespace(w.services, admin, "acme", {
      slug: "api",
      description: "API",
    }, ctx);
    assertEquals(ns.slug, "api");
    assertEquals(ns.description, "API");
    assertEquals((await getHead(w.kv, "acme", "api"))?.version, 0);
    assertEquals(w.changes, ["ns:acme/api"]);
    assertEquals((await w.runtime.models.get("acme", "api"))?.head.version, 0);
  },
);

serviceTest(
  "a tenant-admin of another tenant cannot create a namespace: 403 before the input is read",
  async (w) => {
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "other" });
    let read = false;
    await assertRejects(
      () =>
        createNamespace(w.services, admin, "acme", () => {
          read = true;
          return { slug: "api" };
        }, ctx),
      ForbiddenError,
    );
    assert(!read, "the input was read before authorisation");
    assertEquals(await findNamespace(w.kv, "acme", "api"), null);
    assertEquals(w.changes, []);
  },
);

serviceTest(
  "creating a namespace in a tenant that does not exist is 404 tenant_not_found",
  async (w) => {
    const err = await assertRejects(
      () => createNamespace(w.services, w.superadmin, "nope", { slug: "api" }, ctx),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
  },
);

serviceTest("a namespace slug that is taken is 409", async (w) => {
  await assertRejects(
    () => createNamespace(w.services, w.superadmin, "acme", { slug: "web" }, ctx),
    ConflictError,
  );
  assertEquals(w.changes, []);
});

serviceTest(
  "deleting a namespace revokes its tokens, tells the runtime and re-checks the streams",
  async (w) => {
    const bound = await w.asWeb("namespace-read");
    assert(bound.kind === "token");
    await w.runtime.models.get("acme", "web");
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    const { revoked } = await deleteNamespace(w.services, admin, "acme", "web", ctx);
    assertEquals(revoked, [bound.token.id]);
    assertEquals((await getTokenRecord(w.kv, bound.token.id)).revoked_at !== null, true);
    assertEquals(await findNamespace(w.kv, "acme", "web"), null);
    assertEquals(w.changes, ["ns:acme/web"]);
    assertEquals(w.rechecks(), 1);
    assertEquals(await w.runtime.models.get("acme", "web"), null);
  },
);

serviceTest(
  "a tenant-admin of another tenant cannot delete a namespace: 403 and nothing is removed",
  async (w) => {
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "other" });
    await assertRejects(
      () => deleteNamespace(w.services, admin, "acme", "web", ctx),
      ForbiddenError,
    );
    assert(await findNamespace(w.kv, "acme", "web") !== null);
    assertEquals(w.changes, []);
    assertEquals(w.rechecks(), 0);
  },
);

serviceTest("deleting a namespace that does not exist is 404 namespace_not_found", async (w) => {
  const err = await assertRejects(
    () => deleteNamespace(w.services, w.superadmin, "acme", "nope", ctx),
    NotFoundError,
  );
  assertEquals(err.code, "namespace_not_found");
});

serviceTest("a tenant-admin adds a namespace admin by email and removes them by id", async (w) => {
  const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
  const ana = await createUser(w.kv, { email: "ana@example.com" });
  // Ana signed in to acme: one of its people, whom its admins may add.
  await createSession(w.kv, w.key, { user: ana.id, tenants: ["acme"], login_method: "oidc" });
  const member = await addNamespaceAdmin(
    w.services,
    admin,
    "acme",
    "web",
    () => "ana@example.com",
    ctx,
  );
  assertEquals(member.user_id, ana.id);
  assert(await isNamespaceAdmin(w.kv, "acme", "web", ana.id));
  await removeNamespaceAdmin(w.services, admin, "acme", "web", ana.id, ctx);
  assert(!await isNamespaceAdmin(w.kv, "acme", "web", ana.id));
});

serviceTest("a namespace-write token cannot manage namespace admins", async (w) => {
  const writer = await w.asWeb("namespace-write");
  const ana = await createUser(w.kv, { email: "ana@example.com" });
  await assertRejects(
    () => addNamespaceAdmin(w.services, writer, "acme", "web", ana.id, ctx),
    ForbiddenError,
  );
  assert(!await isNamespaceAdmin(w.kv, "acme", "web", ana.id));
  await assertRejects(
    () => removeNamespaceAdmin(w.services, writer, "acme", "web", ana.id, ctx),
    ForbiddenError,
  );
});

serviceTest("adding an admin who is no user is 404 user_not_found", async (w) => {
  const err = await assertRejects(
    () => addNamespaceAdmin(w.services, w.superadmin, "acme", "web", "nobody@example.com", ctx),
    NotFoundError,
  );
  assertEquals(err.code, "user_not_found");
});

// Reads: the namespaces a principal may read, one namespace, its admins, the people page's lists.

serviceTest(
  "the namespaces of a tenant a principal sees: all for a tenant admin, its own for a namespace token",
  async (w) => {
    await createNamespace(w.services, w.superadmin, "acme", { slug: "api" }, ctx);
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    const listed = await listNamespaces(w.services, admin, "acme");
    assertEquals(listed.map((ns) => ns.slug), ["api", "web"]);
    assertEquals(listed[1]!.head, await getHead(w.kv, "acme", "web"));
    const reader = await w.asWeb("namespace-read");
    assertEquals((await listNamespaces(w.services, reader, "acme")).map((ns) => ns.slug), ["web"]);
    await assertRejects(() => listNamespaces(w.services, reader, "other"), ForbiddenError);
    const err = await assertRejects(
      () => listNamespaces(w.services, w.superadmin, "nope"),
      NotFoundError,
    );
    assertEquals(err.code, "tenant_not_found");
  },
);

serviceTest("the console's summaries carry the head and when its version was made", async (w) => {
  const [web] = await namespaceSummaries(w.services, w.superadmin, "acme");
  const record = await findNamespace(w.kv, "acme", "web");
  assertEquals(web?.namespace, record);
  assertEquals(web?.head.version, 0);
  assertEquals(web?.lastChange, record?.created_at);
});

serviceTest(
  "one namespace and its admins need namespace.read (403), then the namespace (404)",
  async (w) => {
    const ana = await createUser(w.kv, { email: "ana@example.com" });
    await addNamespaceAdmin(w.services, w.superadmin, "acme", "web", ana.id, ctx);
    const reader = await w.asWeb("namespace-read");
    const web = await getNamespace(w.services, reader, "acme", "web");
    assertEquals(web.slug, "web");
    assertEquals(web.head?.version, 0);
    assertEquals(
      (await listNamespaceAdmins(w.services, reader, "acme", "web")).map((m) => m.user_id),
      [ana.id],
    );
    await createNamespace(w.services, w.superadmin, "acme", { slug: "api" }, ctx);
    await assertRejects(() => getNamespace(w.services, reader, "acme", "api"), ForbiddenError);
    await assertRejects(
      () => listNamespaceAdmins(w.services, reader, "acme", "api"),
      ForbiddenError,
    );
    for (const read of [getNamespace, listNamespaceAdmins]) {
      const err = await assertRejects(
        () => read(w.services, w.superadmin, "acme", "nope"),
        NotFoundError,
      );
      assertEquals(err.code, "namespace_not_found");
    }
  },
);

serviceTest(
  "the people page's admin lists: the namespaces the reader reads, changeable by tenant admins only",
  async (w) => {
    await createNamespace(w.services, w.superadmin, "acme", { slug: "api" }, ctx);
    const ana = await createUser(w.kv, { email: "ana@example.com" });
    await addNamespaceAdmin(w.services, w.superadmin, "acme", "web", ana.id, ctx);
    const { session } = await createSession(w.kv, w.key, { user: ana.id });
    const lists = await namespaceAdminLists(w.services, sessionPrincipal(session), "acme");
    assertEquals(lists.map((l) => [l.slug, l.admins.map((m) => m.user_id), l.mayChange]), [
      ["web", [ana.id], false],
    ]);
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    const all = await namespaceAdminLists(w.services, admin, "acme");
    assertEquals(all.map((l) => [l.slug, l.admins.length, l.mayChange]), [
      ["api", 0, true],
      ["web", 1, true],
    ]);
  },
);
