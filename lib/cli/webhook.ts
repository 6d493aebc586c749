/**
 * `cfgtool webhook …`: a tenant's webhooks on a remote service (create,
 * list, delete, test, deliveries; docs/webhooks.md). A new webhook's
 * signing secret is printed once, alone on the last line of stdout (past
 * Deno's console capture, lib/cli/secret_output.ts), so `| tail -n1`
 * captures it. `webhook test` exits 1 when the test delivery failed.
 *
 * @module
 */
import { type Command, Option } from "commander";
import type { WebhookDeliveryInfo, WebhookInfo } from "../client/api.ts";
import { CfgtoolError, UsageError } from "../errors.ts";
import { WEBHOOK_FORMATS } from "../protocol/webhooks.ts";
import { printList } from "./listing.ts";
import { cell, openClient, printFields, printJson, withRemoteOptions } from "./remote_options.ts";
import { printSecret } from "./secret_output.ts";

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool webhook create --tenant acme --url https://hooks.example.com/cfgtool \\\n" +
  "      --event 'manifest.*' --event 'change_request.*' --namespace checkout\n" +
  "  cfgtool webhook create --tenant acme --url https://hooks.slack.com/services/T0/B0/XYZ \\\n" +
  "      --event manifest.pushed --format slack\n" +
  "  cfgtool webhook list --tenant acme\n" +
  "  cfgtool webhook test whk_01J0… --tenant acme\n" +
  "  cfgtool webhook deliveries whk_01J0… --tenant acme\n" +
  "  cfgtool webhook delete whk_01J0… --tenant acme\n";

const collect = (v: string, prev: string[]) => [...prev, v];

/**
 * Registers `webhook` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerWebhookCommands } from "./webhook.ts";
 * const program = new Command();
 * registerWebhookCommands(program);
 * const webhook = program.commands.find((c) => c.name() === "webhook");
 * if (webhook?.commands.map((c) => c.name()).join() !== "create,list,delete,test,deliveries") {
 *   throw new Error();
 * }
 * ```
 */
export function registerWebhookCommands(program: Command): void {
  const webhook = program
    .command("webhook")
    .description(
      "Manage a tenant's webhooks on a cfgtool service: signed HTTP POSTs of the tenant's " +
        "audit events (pushes, rollbacks, change requests, tokens, …) to your URL, retried " +
        "for six hours. Tenant admins and superadmins only.",
    )
    .addHelpText("after", EXAMPLES);

  withRemoteOptions(
    webhook.command("create").description(
      "Create a webhook; prints its metadata, then its signing secret (whsec_…) alone on the " +
        "last line. The secret is shown once: receivers verify each delivery with it.",
    ),
  )
    .requiredOption("--tenant <slug>", "the tenant whose events are sent")
    .requiredOption("--url <url>", "where deliveries are posted: a public http(s) URL")
    .addOption(
      new Option(
        "--event <pattern>",
        "an event type to send, * matching any run of characters (manifest.*, *); repeatable, " +
          "at least one",
      ).argParser(collect).default([] as string[], "none"),
    )
    .addOption(
      new Option("--namespace <slug>", "only events of this namespace; repeatable")
        .argParser(collect).default([] as string[], "every event of the tenant"),
    )
    .addOption(
      new Option(
        "--format <format>",
        "standard: signed JSON; slack: {text} for a Slack " +
          "incoming webhook",
      ).choices(WEBHOOK_FORMATS).default("standard"),
    )
    .option("--description <text>", "a note")
    .option("--json", "print {webhook, secret} as JSON")
    .addHelpText(
      "after",
      "\nEach delivery is an HTTP POST signed per the Standard Webhooks spec (headers\n" +
        "webhook-id, webhook-timestamp, webhook-signature): verify it with the secret,\n" +
        "e.g. with the standardwebhooks library. A 2xx answer within 10 s delivers; others\n" +
        "are retried after 5 s, 30 s, 2 min, 10 min, 1 h and 6 h. URLs on loopback, private\n" +
        "or link-local addresses are refused unless the server runs with\n" +
        '--webhook-allow-private. Event types: docs/api.md, "Audit".\n' + EXAMPLES,
    )
    .action(async (opts) => {
      if (opts.event.length === 0) {
        throw new UsageError(
          "--event is required: name the events to send (--event 'manifest.*', --event '*')",
        );
      }
      const made = await (await openClient(opts)).createWebhook(opts.tenant, {
        url: opts.url,
        events: opts.event,
        ...(opts.namespace.length === 0 ? {} : { namespaces: opts.namespace }),
        format: opts.format,
        ...(opts.description === undefined ? {} : { description: opts.description }),
      });
      if (opts.json) {
        printSecret(JSON.stringify(made, null, 2)); // printJson's shape, past console capture
        return;
      }
      printFields(webhookFields(made.webhook));
      console.error("The signing secret below is shown only now; give it to the receiver.");
      printSecret(made.secret);
    });

  withRemoteOptions(
    webhook.command("list").description("List a tenant's webhooks (never secrets)."),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print a JSON array")
    .addHelpText("after", "\nExamples:\n  cfgtool webhook list --tenant acme --json\n")
    .action(async (opts) => {
      const list = await (await openClient(opts)).listWebhooks(opts.tenant);
      printList(
        list,
        opts.json === true,
        ["ID", "URL", "EVENTS", "NAMESPACES", "FORMAT", "CREATED"],
        (w) => [w.id, w.url, cell(w.events), cell(w.namespaces), w.format, w.created_at],
      );
    });

  withRemoteOptions(
    webhook.command("delete")
      .description("Delete a webhook and its delivery log; queued deliveries are dropped.")
      .argument("<id>", "webhook id (whk_…)"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print the deleted webhook as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool webhook delete whk_01J0… --tenant acme\n")
    .action(async (id, opts) => {
      const gone = await (await openClient(opts)).deleteWebhook(opts.tenant, id);
      if (opts.json) return printJson(gone);
      console.log(`deleted ${gone.id ?? id}`);
    });

  withRemoteOptions(
    webhook.command("test")
      .description(
        "Send a webhook.test event to a webhook now (one attempt, no retries) and print the " +
          "delivery; exits 1 when it failed.",
      )
      .argument("<id>", "webhook id (whk_…)"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print the delivery as JSON")
    .addHelpText("after", "\nExamples:\n  cfgtool webhook test whk_01J0… --tenant acme\n")
    .action(async (id, opts) => {
      const d = await (await openClient(opts)).testWebhook(opts.tenant, id);
      if (opts.json) printJson(d);
      else printFields(deliveryFields(d));
      if (d.status !== "delivered") {
        throw new CfgtoolError("delivery_failed", `the test delivery failed: ${d.error}`);
      }
    });

  withRemoteOptions(
    webhook.command("deliveries")
      .description(
        "List a webhook's newest deliveries (at most 100), newest first: event, attempts, " +
          "status (pending, delivered, failed), the receiver's answer, time, error.",
      )
      .argument("<id>", "webhook id (whk_…)"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .option("--json", "print a JSON array, each delivery with all its attempts")
    .addHelpText("after", "\nExamples:\n  cfgtool webhook deliveries whk_01J0… --tenant acme\n")
    .action(async (id, opts) => {
      const list = await (await openClient(opts)).listWebhookDeliveries(opts.tenant, id);
      printList(
        list,
        opts.json === true,
        ["ID", "EVENT", "ATTEMPTS", "STATUS", "CODE", "MS", "AT", "ERROR"],
        (d) => [
          d.id,
          d.event_type,
          String(d.attempt),
          d.status,
          cell(d.response_code),
          cell(d.ms),
          d.at,
          cell(d.error),
        ],
      );
    });
}

function webhookFields(w: WebhookInfo): [string, unknown][] {
  return [
    ["id", w.id],
    ["tenant", w.tenant_slug],
    ["url", w.url],
    ["events", w.events],
    ["namespaces", w.namespaces ?? "(all)"],
    ["format", w.format],
    ["description", w.description],
    ["created", w.created_at],
    ["created by", w.created_by],
  ];
}

function deliveryFields(d: WebhookDeliveryInfo): [string, unknown][] {
  return [
    ["delivery", d.id],
    ["event", `${d.event_type} ${d.event_id}`],
    ["status", d.status],
    ["response", d.response_code],
    ["ms", d.ms],
    ["error", d.error],
    ["at", d.at],
  ];
}
