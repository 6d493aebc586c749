/**
 * Webhooks end to end: a real `cfgtool serve --webhook-allow-private`, the
 * real `cfgtool webhook` commands, and real HTTP receivers on loopback
 * ports that verify every delivery's signature with the `standardwebhooks`
 * library's own `Webhook.verify`. A push produces a signed
 * `manifest.pushed` delivery; a receiver that answers 500 first gets it
 * again (short retry delays from `--webhook-retry-base-ms`) and the
 * delivery log shows both attempts; the Slack format posts `{text}`; a
 * server without the flag refuses a private destination when the webhook
 * is made.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { createAcmeWeb, runCli, startInstallation } from "./installation.ts";
import { pushManifest } from "./credentials_fixture.ts";
import { startReceiver, verified } from "./webhook_receiver.ts";

/** Polls `check` until it returns a value, for up to 20 s. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + 20_000;
  while (true) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("a push reaches a webhook signed, is retried after a 500, and the log shows both attempts; slack posts {text}", async (t) => {
  const flaky = await startReceiver((n) => (n === 1 ? 500 : 204));
  const slack = await startReceiver();
  const inst = await startInstallation({
    args: [
      "--webhook-allow-private",
      "--webhook-retry-base-ms",
      "300",
      "--public-url",
      "https://flags.example.test",
    ],
  });
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  try {
    await createAcmeWeb(inst);
    let id = "";
    let secret = "";
    await t.step(
      "webhook create prints the metadata, then the secret alone on the last line",
      async () => {
        const made = await runCli([
          "webhook",
          "create",
          "--tenant",
          "acme",
          "--url",
          `${flaky.origin}/hooks/cfgtool`,
          "--event",
          "manifest.*",
          "--namespace",
          "web",
        ], { env });
        assertEquals(made.code, 0, made.stderr);
        const lines = made.stdout.trim().split("\n");
        secret = lines.at(-1)!;
        assertMatch(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
        id = /^id:\s+(whk_\S+)$/m.exec(made.stdout)?.[1] ?? "";
        assertMatch(id, /^whk_[0-9A-Z]{26}$/);
        assertStringIncludes(made.stderr, "shown only now");
        const list = await runCli(["webhook", "list", "--tenant", "acme", "--json"], { env });
        assertEquals(list.code, 0, list.stderr);
        const hooks = JSON.parse(list.stdout);
        assertEquals(hooks.map((h: { id: string }) => h.id), [id]);
        assert(!list.stdout.includes("whsec_"), "a list shows no secret");
      },
    );

    await t.step(
      "a push is delivered, signed; a 500 is retried with the same webhook-id",
      async () => {
        await pushManifest(inst, inst.admin, "acme", "web", { production: false });
        const [first, second] = await flaky.waitFor(2);
        assertEquals([first!.status, second!.status], [500, 204]);
        for (const r of [first!, second!]) {
          assertEquals([r.method, r.path], ["POST", "/hooks/cfgtool"]);
          const payload = verified(secret, r);
          assertEquals(payload.type, "manifest.pushed");
          assertEquals(payload.data.tenant, "acme");
          assertEquals(payload.data.namespace, "web");
          assertEquals(payload.data.console_url, "https://flags.example.test/ui/t/acme/ns/web");
          assertEquals(payload.data.entry.details.version, 1);
        }
        assertEquals(first!.headers["webhook-id"], second!.headers["webhook-id"]);
        assertMatch(first!.headers["webhook-id"]!, /^dlv_/);
        assertMatch(first!.headers["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+=*$/);
      },
    );

    await t.step("the delivery log shows both attempts, then delivered", async () => {
      const delivery = await eventually("the delivery to be recorded delivered", async () => {
        const r = await runCli(["webhook", "deliveries", id, "--tenant", "acme", "--json"], {
          env,
        });
        assertEquals(r.code, 0, r.stderr);
        const [d] = JSON.parse(r.stdout);
        return d?.status === "delivered" ? d : undefined;
      });
      assertEquals(delivery.event_type, "manifest.pushed");
      assertEquals(delivery.attempt, 2);
      assertEquals(delivery.response_code, 204);
      assertEquals(
        delivery.attempts.map((a: { response_code: number; error: string | null }) => [
          a.response_code,
          a.error,
        ]),
        [[500, "the receiver answered 500"], [204, null]],
      );
      assertEquals(delivery.id, flaky.requests[0]!.headers["webhook-id"]);
      const table = await runCli(["webhook", "deliveries", id, "--tenant", "acme"], { env });
      assertMatch(table.stdout, /^ID\s+EVENT\s+ATTEMPTS\s+STATUS/m);
      assertMatch(table.stdout, /manifest\.pushed\s+2\s+delivered\s+204/);
    });

    await t.step(
      "webhook test sends a signed webhook.test now and prints the delivery",
      async () => {
        const tested = await runCli(["webhook", "test", id, "--tenant", "acme", "--json"], { env });
        assertEquals(tested.code, 0, tested.stderr);
        assertEquals(JSON.parse(tested.stdout).status, "delivered");
        const last = flaky.requests.at(-1)!;
        assertEquals(verified(secret, last).type, "webhook.test");
      },
    );

    await t.step("the slack format posts a one-line {text}, signed too", async () => {
      const made = await runCli([
        "webhook",
        "create",
        "--tenant",
        "acme",
        "--url",
        `${slack.origin}/services/T0/B0/x`,
        "--event",
        "namespace.*",
        "--format",
        "slack",
        "--json",
      ], { env });
      assertEquals(made.code, 0, made.stderr);
      const { secret: slackSecret } = JSON.parse(made.stdout);
      const ns = await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, {
        slug: "api",
      });
      assertEquals(ns.status, 201);
      const [got] = await slack.waitFor(1);
      const body = verified(slackSecret, got!);
      assertEquals(Object.keys(body), ["text"]);
      assertMatch(
        body.text,
        /^acme\/api: namespace\.created by tok_\S+ <https:\/\/flags\.example\.test\/ui\/t\/acme\/ns\/api\|open in cfgtool>$/,
      );
    });

    await t.step("webhook delete removes it; its id is then unknown (exit 1)", async () => {
      const gone = await runCli(["webhook", "delete", id, "--tenant", "acme"], { env });
      assertEquals(gone.code, 0, gone.stderr);
      assertEquals(gone.stdout.trim(), `deleted ${id}`);
      const again = await runCli(["webhook", "deliveries", id, "--tenant", "acme"], { env });
      assertEquals(again.code, 1);
      assertStringIncludes(again.stderr, `error: No webhook ${id} in tenant acme`);
    });
  } finally {
    await inst.close();
    await flaky.close();
    await slack.close();
  }
});

Deno.test("without --webhook-allow-private a loopback destination is refused when the webhook is made", async () => {
  const receiver = await startReceiver();
  const inst = await startInstallation();
  const env = { CFGTOOL_SERVER: inst.url, CFGTOOL_TOKEN: inst.admin };
  try {
    await createAcmeWeb(inst);
    const refused = await runCli([
      "webhook",
      "create",
      "--tenant",
      "acme",
      "--url",
      `${receiver.origin}/in`,
      "--event",
      "*",
    ], { env });
    assertEquals(refused.code, 1);
    assertStringIncludes(
      refused.stderr,
      "127.0.0.1 is a loopback address. Webhooks deliver only to public addresses",
    );
    assertEquals(refused.stdout, "");
    const res = await inst.api("POST", "/api/v1/tenants/acme/webhooks", inst.admin, {
      url: "http://localhost:9/in",
      events: ["*"],
    });
    assertEquals([res.status, res.body.code, res.body.details.field], [
      400,
      "invalid_request",
      "url",
    ]);
    const none = await runCli(["webhook", "list", "--tenant", "acme"], { env });
    assertEquals(none.stdout.trim(), "(none)");
    const usage = await runCli(
      ["webhook", "create", "--tenant", "acme", "--url", "https://x.test"],
      {
        env,
      },
    );
    assertEquals(usage.code, 2, "no --event: a usage error, nothing sent");
    assertEquals(receiver.requests.length, 0);
  } finally {
    await inst.close();
    await receiver.close();
  }
});

Deno.test("webhook-allow-private = true in the configuration file allows a loopback destination", async () => {
  const receiver = await startReceiver();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-webhook-config-" });
  const config = `${dir}/cfgtool.toml`;
  await Deno.writeTextFile(config, "webhook-allow-private = true\n");
  const inst = await startInstallation({ args: ["--config", config] });
  try {
    await createAcmeWeb(inst);
    const made = await inst.api("POST", "/api/v1/tenants/acme/webhooks", inst.admin, {
      url: `${receiver.origin}/in`,
      events: ["webhook.test"],
    });
    assertEquals(made.status, 201, JSON.stringify(made.body));
    const tested = await inst.api(
      "POST",
      `/api/v1/tenants/acme/webhooks/${made.body.webhook.id}/test`,
      inst.admin,
    );
    assertEquals([tested.status, tested.body.delivery.status], [200, "delivered"]);
    assertEquals(verified(made.body.secret, receiver.requests[0]!).type, "webhook.test");
  } finally {
    await inst.close();
    await receiver.close();
    await Deno.remove(dir, { recursive: true });
  }
});
