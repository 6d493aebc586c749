import { assertEquals } from "../assert.ts";
import { eventAuditEntry } from "../../lib/store/audit.ts";
import {
  APPLY_MESSAGE,
  type ChangeRequestRecord,
  createChangeRequest,
} from "../../lib/store/change_requests.ts";
import { createNamespace } from "../../lib/store/namespaces.ts";
import { QueueListener } from "../../lib/store/queue.ts";
import { OVERDUE_MS, resendOverdue } from "../../lib/store/schedule_sweep.ts";
import { createTenant } from "../../lib/store/tenants.ts";

const actor = { id: "test", principal_type: "system" as const, request_id: null };

function request(id: string, scheduledAt: Date, status: ChangeRequestRecord["status"]) {
  const at = scheduledAt.toISOString();
  const record: ChangeRequestRecord = {
    id,
    tenant_slug: "acme",
    namespace_slug: "web",
    base_version: 0,
    tree: "t",
    base_tree: "b",
    revision: 1,
    changes_blob: "c",
    changed_paths: ["flags/a.toml"],
    message: "m",
    author_id: "usr_1",
    author_kind: "user",
    author_email: null,
    created_at: at,
    updated_at: at,
    impact: [],
    required_approvals: 0,
    approvals: [],
    rejection: null,
    status,
    scheduled_at: status === "scheduled" ? at : null,
    schedule_id: status === "scheduled" ? `s-${id}` : null,
    applied_version: null,
    failure: null,
    plan: null,
  };
  return record;
}

Deno.test("the sweep sends again the apply of a request scheduled well past its time, only that", async () => {
  const kv = await Deno.openKv(":memory:");
  const listener = new QueueListener(kv, () => {});
  try {
    await createTenant(kv, { slug: "acme", created_by: "test" });
    await createNamespace(kv, { tenant: "acme", slug: "web", created_by: "test" });
    const now = new Date(); // the message is due now: the listener runs it at once
    const long = new Date(now.getTime() - OVERDUE_MS - 1000);
    const recent = new Date(now.getTime() - 1000);
    const audit = eventAuditEntry("change_request.opened", actor, now, { tenant_slug: "acme" });
    await createChangeRequest(kv, request("cr_lost", long, "scheduled"), audit);
    await createChangeRequest(kv, request("cr_due", recent, "scheduled"), { ...audit, id: "2" });
    await createChangeRequest(kv, request("cr_done", long, "applied"), { ...audit, id: "3" });
    const got: unknown[] = [];
    const arrived = new Promise<void>((resolve) =>
      listener.on(APPLY_MESSAGE, (m) => {
        got.push(m);
        resolve();
      })
    );
    listener.start();
    assertEquals(await resendOverdue(kv, now), 1);
    await arrived;
    const [message] = got as { id: string; schedule_id: string }[];
    assertEquals([message!.id, message!.schedule_id], ["cr_lost", "s-cr_lost"]);
  } finally {
    kv.close();
    await listener.stopped;
  }
});
