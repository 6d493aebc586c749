/** readServeValues(): `serve`'s option checks, naming the flag, the variable or the file's key. */
import { assertEquals, assertThrows } from "../assert.ts";
import { type GivenValue, readServeValues } from "../../lib/cli/serve_values.ts";
import { UsageError } from "../../lib/errors.ts";

/** Values as flags (`--port`), unless `labels` names them otherwise. */
function given(values: Record<string, string>, labels: Record<string, string> = {}) {
  return (attribute: string): GivenValue => ({
    value: values[attribute],
    label: labels[attribute] ?? `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
  });
}

function refusal(values: Record<string, string>, labels: Record<string, string> = {}): string {
  return assertThrows(() => readServeValues(given(values, labels)), UsageError).message;
}

Deno.test("nothing given: the defaults", () => {
  const v = readServeValues(given({}));
  assertEquals(v, {
    port: 8080,
    hostname: "127.0.0.1",
    kv: "./cfgtool-data/kv.sqlite3",
    workers: 1,
    mailFrom: "cfgtool <no-reply@localhost>",
    settings: {},
    logLevel: "info",
  });
});

Deno.test("tunables, audit retention, TLS paths, log level and metrics token are read", () => {
  const v = readServeValues(given({
    port: "0",
    headPollMs: "100",
    maxConnections: "50",
    auditRetention: "30d",
    tlsCert: "/etc/cfgtool/cert.pem",
    tlsKey: "/etc/cfgtool/key.pem",
    logLevel: "debug",
    metricsToken: "s3cr3t-token",
  }));
  assertEquals(v.port, 0);
  assertEquals(v.settings, {
    headPollMs: 100,
    maxConnections: 50,
    auditRetentionMs: 30 * 86_400_000,
  });
  assertEquals(v.tls, { certFile: "/etc/cfgtool/cert.pem", keyFile: "/etc/cfgtool/key.pem" });
  assertEquals(v.logLevel, "debug");
  assertEquals(v.metricsToken, "s3cr3t-token");
});

Deno.test("the connection timeouts are tunables, the request timeout among them", () => {
  const v = readServeValues(given({
    headerTimeoutMs: "2000",
    keepaliveTimeoutMs: "3000", // commander's name for --keepalive-timeout-ms
    requestTimeoutMs: "4000",
  }));
  assertEquals(v.settings, {
    headerTimeoutMs: 2000,
    keepAliveTimeoutMs: 3000,
    requestTimeoutMs: 4000,
  });
  assertEquals(
    refusal({ requestTimeoutMs: "0" }, { requestTimeoutMs: "request-timeout-ms in cfgtool.toml" }),
    'request-timeout-ms in cfgtool.toml must be a positive integer, not "0"',
  );
});

Deno.test("a bad value is named as it was given: flag, key of the file, or variable", () => {
  assertEquals(
    refusal({ port: "99999" }),
    '--port must be an integer from 0 to 65535, not "99999"',
  );
  assertEquals(
    refusal({ headPollMs: "0" }, { headPollMs: "head-poll-ms in /etc/cfgtool.toml" }),
    'head-poll-ms in /etc/cfgtool.toml must be a positive integer, not "0"',
  );
  assertEquals(
    refusal({ publicUrl: "flags.example.com" }, { publicUrl: "CFGTOOL_PUBLIC_URL" }),
    'CFGTOOL_PUBLIC_URL must be an absolute http(s) URL, not "flags.example.com"',
  );
  assertEquals(
    refusal({ auditRetention: "400" }),
    "--audit-retention must be a positive whole number followed by s, m, h, d or w " +
      '(30d, 12h, 90m), not "400"',
  );
  assertEquals(
    refusal({ logLevel: "trace" }),
    '--log-level must be one of debug, info, warn, error, not "trace"',
  );
  assertEquals(
    refusal({ workers: "two" }),
    '--workers must be a positive integer or auto, not "two"',
  );
});

Deno.test("--tls-cert and --tls-key go together", () => {
  assertEquals(
    refusal({ tlsCert: "cert.pem" }),
    "--tls-cert needs its pair: give --tls-cert (the certificate chain) and --tls-key " +
      "(its private key) together, or neither",
  );
  assertEquals(
    refusal({ tlsKey: "key.pem" }, { tlsKey: "tls-key in cfgtool.toml" }).split(" needs")[0],
    "tls-key in cfgtool.toml",
  );
});

Deno.test("a metrics token or an SMTP URL is checked and never echoed", () => {
  const token = refusal({ metricsToken: "two words" }, { metricsToken: "CFGTOOL_METRICS_TOKEN" });
  assertEquals(
    token,
    "CFGTOOL_METRICS_TOKEN must be printable ASCII without spaces (it is sent as a Bearer token)",
  );
  const smtp = refusal({ smtpUrl: "http://user:hunter2@mail" });
  assertEquals(smtp, "--smtp-url must be smtp://[user:password@]host[:port] or smtps://…");
});

Deno.test("an empty variable counts as unset", () => {
  const v = readServeValues(given({ publicUrl: "", smtpUrl: "", metricsToken: "", tlsCert: "" }));
  assertEquals([v.publicUrl, v.smtpUrl, v.metricsToken, v.tls], [
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

Deno.test("an audit retention under one day is refused, naming the minimum", () => {
  assertEquals(
    refusal({ auditRetention: "1s" }),
    '--audit-retention must be at least 1d (one day), not "1s"',
  );
  assertEquals(
    refusal({ auditRetention: "23h" }, { auditRetention: "audit-retention in cfgtool.toml" }),
    'audit-retention in cfgtool.toml must be at least 1d (one day), not "23h"',
  );
  assertEquals(
    readServeValues(given({ auditRetention: "1d" })).settings.auditRetentionMs,
    86_400_000,
  );
});
