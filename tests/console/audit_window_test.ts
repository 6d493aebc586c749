/**
 * One page of a tenant's audit log with the actor and time filters the
 * API's query lacks (lib/console/audit_window.ts): the page is full
 * or the log is done, the cursor is the last entry read, and a sparse
 * filter stops after reading its limit, with a cursor to read on.
 */
import { assertEquals } from "../assert.ts";
import { readAuditWindow } from "../../lib/console/audit_window.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { eventAuditEntry, writeAudit } from "../../lib/store/audit.ts";
import type { AuthDeps } from "../../lib/auth/deps.ts";

const SUPER = { kind: "token", token: { type: "superadmin" } } as unknown as Principal;

/** A log of `n` sign-ins a second apart, the `every`-th by usr_b, the others by usr_a. */
async function log(n: number, every: number): Promise<{ deps: AuthDeps; kv: Deno.Kv }> {
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
  return { deps: { kv } as unknown as AuthDeps, kv };
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
