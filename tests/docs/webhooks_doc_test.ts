/**
 * docs/webhooks.md's receiver example, run as written: started as its own
 * Deno process with a webhook's secret, it accepts a real delivery signed
 * by the service (204) and refuses one whose body was changed (400).
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { createWebhook, testWebhook } from "../../lib/services/webhooks.ts";
import { serviceTest } from "../services/world.ts";
import { parseDocBlocks } from "./doc_blocks.ts";

const DOC = new URL("../../docs/webhooks.md", import.meta.url);

/** A port free now on loopback. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

serviceTest(
  "the documented receiver accepts a signed delivery and refuses a changed one",
  async (w) => {
    const blocks = parseDocBlocks(await Deno.readTextFile(DOC), "docs/webhooks.md");
    const receiver = blocks.find((b) => b.directives?.get("file") === "receiver.ts");
    assert(receiver !== undefined, "docs/webhooks.md has no receiver.ts block");
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-receiver-" });
    await Deno.writeTextFile(`${dir}/receiver.ts`, receiver.text);
    const port = freePort();
    const deps = { ...w.services, settings: { webhookAllowPrivate: true } };
    const made = await createWebhook(deps, w.superadmin, "acme", {
      url: `http://127.0.0.1:${port}/cfgtool`,
      events: ["*"],
    }, { requestId: "doc" });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-env", "receiver.ts"],
      cwd: dir,
      env: { PORT: String(port), WEBHOOK_SECRET: made.secret, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
      stdin: "null",
    }).spawn();
    try {
      const end = Date.now() + 30_000;
      while (true) {
        try {
          (await Deno.connect({ hostname: "127.0.0.1", port })).close();
          break;
        } catch {
          if (Date.now() > end) throw new Error("the receiver did not start");
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      const delivered = await testWebhook(deps, w.superadmin, "acme", made.webhook.id, {
        requestId: "doc",
      });
      assertEquals([delivered.status, delivered.response_code], ["delivered", 204]);
      // the same headers with another body: refused
      const forged = await fetch(`http://127.0.0.1:${port}/cfgtool`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": delivered.id,
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
        },
        body: '{"type":"manifest.pushed"}',
      });
      assertEquals(forged.status, 400);
      await forged.body?.cancel();
    } finally {
      child.kill("SIGTERM");
      const out = await child.output();
      await Deno.remove(dir, { recursive: true });
      assertStringIncludes(new TextDecoder().decode(out.stdout), "webhook.test in acme/-");
    }
  },
);
