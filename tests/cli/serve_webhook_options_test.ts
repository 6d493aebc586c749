/**
 * `cfgtool serve`'s webhook options (lib/cli/serve.ts, serve_values.ts,
 * serve_config.ts): `--webhook-allow-private`, a switch, and
 * `--webhook-retry-base-ms`, a tunable, are flags, keys of the
 * configuration file (a boolean and an integer) and settings.
 */
import { Command } from "commander";
import { assertEquals } from "../assert.ts";
import { registerServeCommand } from "../../lib/cli/serve.ts";
import { configKeys, configValues } from "../../lib/cli/serve_config.ts";
import { type GivenValue, readServeValues } from "../../lib/cli/serve_values.ts";
import { DEFAULT_SETTINGS, resolveSettings } from "../../lib/settings.ts";

function serveCommand() {
  const program = new Command();
  registerServeCommand(program);
  return program.commands.find((c) => c.name() === "serve")!;
}

const given = (values: Record<string, string>) => (attribute: string): GivenValue => ({
  value: values[attribute],
  label: `--${attribute}`,
});

Deno.test("the webhook options are keys of the file: a switch takes a boolean, the delay an integer", () => {
  const keys = configKeys(serveCommand().options);
  const kind = (key: string) => keys.find((k) => k.key === key)?.kind;
  assertEquals([kind("webhook-allow-private"), kind("webhook-retry-base-ms")], [
    "boolean",
    "integer",
  ]);
  const text = "webhook-allow-private = true\nwebhook-retry-base-ms = 250\n";
  const values = configValues(
    { "webhook-allow-private": true, "webhook-retry-base-ms": 250 },
    keys,
    "cfgtool.toml",
    text,
  );
  assertEquals(Object.fromEntries(values), {
    webhookAllowPrivate: true,
    webhookRetryBaseMs: "250",
  });
  const wrong = (() => {
    try {
      configValues(
        { "webhook-allow-private": "yes" },
        keys,
        "cfgtool.toml",
        'webhook-allow-private = "yes"\n',
      );
      return "";
    } catch (err) {
      return (err as Error).message;
    }
  })();
  assertEquals(
    wrong,
    'cfgtool.toml:1:1: webhook-allow-private: expected true or false, found the string "yes"',
  );
});

Deno.test("the webhook options become settings; unset, private destinations stay refused and retries start at 5 s", () => {
  assertEquals(readServeValues(given({})).settings, {});
  assertEquals(
    readServeValues(given({ webhookAllowPrivate: "true", webhookRetryBaseMs: "50" })).settings,
    { webhookRetryBaseMs: 50, webhookAllowPrivate: true },
  );
  assertEquals([DEFAULT_SETTINGS.webhookAllowPrivate, DEFAULT_SETTINGS.webhookRetryBaseMs], [
    false,
    5000,
  ]);
  const s = resolveSettings({ webhookAllowPrivate: true });
  assertEquals([s.webhookAllowPrivate, s.webhookRetryBaseMs], [true, 5000]);
});

Deno.test("serve --help names both webhook options", () => {
  const help = serveCommand().helpInformation();
  for (const flag of ["--webhook-allow-private", "--webhook-retry-base-ms <n>"]) {
    assertEquals(help.includes(flag), true, flag);
  }
});
