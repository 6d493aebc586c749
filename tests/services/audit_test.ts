/**
 * Reading the audit log (lib/services/audit.ts). One page of a tenant's
 * log with the actor and time filters the API's query lacks
 * (`readAuditWindow`): the page is full or the log is done, the cursor is
 * the last entry read, and a sparse filter stops after reading its limit,
 * with a cursor to read on. The console's page of a tenant's log
 * (`tenantAuditLog`): authorised once by the API's rule, an email as
 * actor, the namespaces the reader may read, nothing read for refused
 * filters.
 */
import { assertEquals, assertRejects } from "../assert.ts";
import { readAuditWindow, tenantAuditLog } from "../../lib/services/audit.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { eventAuditEntry, writeAudit } from "../../lib/store/audit.ts";
import { ForbiddenError } from "../../lib/errors.ts";
import { createUser } from "../../lib/store/users.ts";
import { createNamespace } from "../../lib/store/namespaces.ts";
import { serviceTest } from "./world.ts";

const SUPER = { kind: "token", token: { type: "superadmin" } } as unknown as Principal;

/** A log of `n` sign-ins a second apart, the `every`-th by usr_b, the others by usr_a. */
async function log(n: number, every: number): Promise<{ deps: { kv: Deno.Kv }; kv: Deno.Kv }> {
  const kv = await Deno.openKv(":memory:");
  for (let i = 0; i < n; i++) {
    const id = i % every === 0 ? "usr_b" : "usr_a";
    await writeAudit(
      kv,
      eventAuditEntry(
        "login.succeeded",
        { id, principal_type: "user", request_id: null },
        new Date(Date.UTC(2030, 0, 1) + i * 1000),
        { tenant_slug: "acme", details: { n: i } },
      ),
    );
  }
  return { deps: { kv }, kv };
}

function ns(page: { entries: { details: Record<string, unknown> }[] }): number[] {
  return page.entries.map((e) => e.details.n as number);
}

Deno.test("without actor or window a page is the API's page", async () => {
  const { deps, kv } = await log(5, 1);
  const page = await readAuditWindow(deps, SUPER, { tenant: "acme", limit: 2 });
  assertEquals(ns(page), [4, 3]);
  const next = await readAuditWindow(deps, SUPER, { tenant: "acme", limit: 2, after: page.next! });
  assertEquals(ns(next), [2, 1]);
  kv.close();
});

Deno.test("an actor filter pages through every entry of that actor once", async () => {
  const { deps, kv } = await log(40, 7); // usr_b: 35, 28, 21, 14, 7, 0
  const seen: number[] = [];
  let after: string | undefined;
  do {
    const page = await readAuditWindow(deps, SUPER, {
      tenant: "acme",
      actorId: "usr_b",
      limit: 4,
      ...(after === undefined ? {} : { after }),
    });
    seen.push(...ns(page));
    after = page.next ?? undefined;
  } while (after !== undefined);
  assertEquals(seen, [35, 28, 21, 14, 7, 0]);
  kv.close();
});

Deno.test("a window takes entries from its start up to before its end, and stops at its start", async () => {
  const { deps, kv } = await log(10, 1);
  const t = (i: number) => Date.UTC(2030, 0, 1) + i * 1000;
  const page = await readAuditWindow(deps, SUPER, {
    tenant: "acme",
    from: t(3),
    to: t(6),
    limit: 10,
  });
  assertEquals(ns(page), [5, 4, 3]);
  assertEquals(page.next, null);
  assertEquals(page.read, 8, "read 9 down to 2, the first before the window, and stopped");
  kv.close();
});

Deno.test("a sparse filter stops at the scan limit with a cursor to read on", async () => {
  const { deps, kv } = await log(30, 29); // usr_b: 29 and 0
  const first = await readAuditWindow(
    deps,
    SUPER,
    { tenant: "acme", actorId: "usr_b", limit: 5 },
    10,
  );
  assertEquals(ns(first), [29]);
  assertEquals(first.searchedOnly, true);
  assertEquals(first.read, 10);
  let page = first;
  const seen = ns(first);
  while (page.next !== null) {
    page = await readAuditWindow(
      deps,
      SUPER,
      { tenant: "acme", actorId: "usr_b", limit: 5, after: page.next },
      10,
    );
    seen.push(...ns(page));
  }
  assertEquals(seen, [29, 0]);
  kv.close();
});

// The console's page of a tenant's log.

/** Writes a sign-in of `actor` to acme's log. */
async function signIn(kv: Deno.Kv, actor: string, namespace?: string): Promise<void> {
  await writeAudit(
    kv,
    eventAuditEntry(
      "login.succeeded",
      { id: actor, principal_type: "user", request_id: null },
      new Date(),
      {
        tenant_slug: "acme",
        ...(namespace === undefined ? {} : { namespace_slug: namespace }),
      },
    ),
  );
}

serviceTest(
  "a tenant's log is read by its admin, refused to others as the API refuses",
  async (w) => {
    await signIn(w.kv, "usr_a");
    const admin = await w.as({ type: "tenant-admin", name: "ta", tenant_slug: "acme" });
    const log = await tenantAuditLog(w.services, admin, "acme", { limit: 50 });
    assertEquals(log.page.entries.map((e) => e.tenant_slug).every((t) => t === "acme"), true);
    assertEquals(log.page.entries.some((e) => e.actor_id === "usr_a"), true);
    await assertRejects(
      () => tenantAuditLog(w.services, admin, "other", { limit: 50 }),
      ForbiddenError,
    );
    const reader = await w.asWeb("namespace-read");
    await assertRejects(() => tenantAuditLog(w.services, reader, "acme", null), ForbiddenError);
  },
);

serviceTest(
  "an email as actor stands for its user; an unknown email matches nothing",
  async (w) => {
    const ana = await createUser(w.kv, { email: "ana@example.com" });
    await signIn(w.kv, ana.id);
    await signIn(w.kv, "usr_other");
    const of = async (actor: string) =>
      (await tenantAuditLog(w.services, w.superadmin, "acme", { actor, limit: 50 })).page.entries
        .map((e) => e.actor_id);
    assertEquals(await of("ana@example.com"), [ana.id]);
    assertEquals(await of("usr_other"), ["usr_other"]);
    assertEquals(await of("nobody@example.com"), []);
  },
);

serviceTest(
  "the namespace choices are the tenant's the reader may read; refused filters read nothing",
  async (w) => {
    await createNamespace(w.kv, { tenant: "acme", slug: "api", created_by: "test" });
    await signIn(w.kv, "usr_a", "web");
    const all = await tenantAuditLog(w.services, w.superadmin, "acme", null);
    assertEquals(all.namespaces.toSorted(), ["api", "web"]);
    assertEquals(all.page, { entries: [], next: null, searchedOnly: false, read: 0 });
    const web = await tenantAuditLog(w.services, w.superadmin, "acme", {
      namespace: "web",
      type: "login.succeeded",
      limit: 5,
    });
    assertEquals(web.page.entries.map((e) => e.namespace_slug), ["web"]);
  },
);
