/**
 * `cfgtool admin rekey` and webhook secrets (lib/auth/rekey.ts): with the
 * old key file at hand the secrets are sealed again under the new key, so
 * receivers keep verifying deliveries with the secret they were given;
 * with the key file lost they cannot be, and a delivery says to create the
 * webhook again instead of signing with a wrong secret.
 */
import { assert, assertEquals } from "../assert.ts";
import { loadTokenKey } from "../../lib/auth/hmac_key.ts";
import type { Principal } from "../../lib/auth/principal.ts";
import { rekeyStore } from "../../lib/auth/rekey.ts";
import { createWebhook, testWebhook } from "../../lib/services/webhooks.ts";
import { openKv } from "../../lib/store/kv.ts";
import { createTenant } from "../../lib/store/tenants.ts";
import { startReceiver, verified } from "../e2e/webhook_receiver.ts";

const operator: Principal = {
  kind: "session",
  user_id: "usr_op",
  session_id: "ssn_op",
  tenants: [],
  groups: [],
  since: "",
  superadmin: true,
};
const ctx = { requestId: "test" };

/** A store file with tenant acme and a webhook to `url`, and its token key file. */
async function installation(url: string) {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-rekey-" });
  const kvPath = `${dir}/kv.sqlite3`;
  const kv = await openKv(kvPath);
  const { key } = await loadTokenKey({ kv: kvPath });
  await createTenant(kv, { slug: "acme", created_by: "test" });
  const deps = (k: CryptoKey) => ({
    kv,
    key: k,
    runtime: undefined as never,
    settings: { webhookAllowPrivate: true },
  });
  const made = await createWebhook(deps(key), operator, "acme", { url, events: ["*"] }, ctx);
  return {
    dir,
    kvPath,
    kv,
    made,
    deps,
    async [Symbol.asyncDispose]() {
      kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("rekey with the old key file seals webhook secrets again: deliveries verify with the same secret", async () => {
  const receiver = await startReceiver();
  try {
    await using inst = await installation(`${receiver.origin}/in`);
    const result = await rekeyStore(inst.kv, { kv: inst.kvPath });
    assert(result.previous !== null);
    assertEquals(result.webhooks, { resealed: 1, unreadable: 0 });
    const { key: newKey } = await loadTokenKey({ kv: inst.kvPath });
    const d = await testWebhook(inst.deps(newKey), operator, "acme", inst.made.webhook.id, ctx);
    assertEquals(d.status, "delivered", d.error ?? "");
    assertEquals(verified(inst.made.secret, receiver.requests[0]!).type, "webhook.test");
  } finally {
    await receiver.close();
  }
});

Deno.test("rekey without the old key file leaves webhook secrets unreadable, and deliveries say what to do", async () => {
  const receiver = await startReceiver();
  try {
    await using inst = await installation(`${receiver.origin}/in`);
    await Deno.remove(`${inst.dir}/token.key`);
    const result = await rekeyStore(inst.kv, { kv: inst.kvPath });
    assertEquals(result.previous, null);
    assertEquals(result.webhooks, { resealed: 0, unreadable: 1 });
    const { key: newKey } = await loadTokenKey({ kv: inst.kvPath });
    const d = await testWebhook(inst.deps(newKey), operator, "acme", inst.made.webhook.id, ctx);
    assertEquals(d.status, "failed");
    assert(d.error!.includes("sealed with another token key"), d.error!);
    assert(d.error!.includes("delete the webhook and create it again"), d.error!);
    assertEquals(receiver.requests.length, 0, "nothing is sent with a wrong secret");
  } finally {
    await receiver.close();
  }
});
