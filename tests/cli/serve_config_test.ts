/**
 * `cfgtool serve --config <file>`: every flag of `serve` is a key; flags win
 * over environment variables, those over the file, the file over the
 * defaults; mistakes in the file stop the start with exit 2, naming the
 * file, the line and the nearest known key; the workers of a group run with
 * the same configuration.
 */
import { Command } from "commander";
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  assertThrows,
} from "../assert.ts";
import { registerServeCommand } from "../../lib/cli/serve.ts";
import {
  applyConfigFile,
  ConfigFileError,
  configKeys,
  configValues,
} from "../../lib/cli/serve_config.ts";
import { UsageError } from "../../lib/errors.ts";
import { freePort } from "../../lib/server/supervisor.ts";
import { CLI, runCfgtool } from "../cli_process.ts";

/** The real `serve` command, registered on a fresh program. */
function serveCommand(): Command {
  const program = new Command();
  registerServeCommand(program);
  return program.commands.find((c) => c.name() === "serve")! as unknown as Command;
}

Deno.test("every visible flag of serve is a key of the file, and a flag added later is one at once", () => {
  const cmd = serveCommand();
  const keys = configKeys(cmd.options);
  const names = keys.map((k) => k.key);
  const flags = cmd.options.filter((o) => !o.hidden && o.long !== "--config").map((o) =>
    o.long!.slice(2)
  );
  assertEquals(names, flags);
  for (
    const key of [
      "port",
      "hostname",
      "kv",
      "token-key-file",
      "workers",
      "public-url",
      "smtp-url",
      "mail-from",
      "tls-cert",
      "tls-key",
      "log-level",
      "metrics-token",
      "audit-retention",
      "head-poll-ms",
      "max-connections",
      "request-timeout-ms",
      "client-rate-limit",
    ]
  ) assert(names.includes(key), key);
  assert(!names.includes("config") && !names.includes("worker-index") && !names.includes("help"));
  const kind = (key: string) => keys.find((k) => k.key === key)?.kind;
  assertEquals([kind("port"), kind("head-poll-ms"), kind("workers"), kind("request-timeout-ms")], [
    "integer",
    "integer",
    "integer",
    "integer",
  ]);
  assertEquals([kind("kv"), kind("tls-cert"), kind("audit-retention")], [
    "string",
    "string",
    "string",
  ]);

  cmd.option("--flush-interval-ms <n>", "a flag added after this test was written");
  const later = configKeys(cmd.options).find((k) => k.key === "flush-interval-ms");
  assertEquals(later, { key: "flush-interval-ms", attribute: "flushIntervalMs", kind: "integer" });
});

Deno.test("a number key takes a TOML integer or a string as on the command line; others take strings", () => {
  const keys = configKeys(serveCommand().options);
  const text = 'port = 9090\nworkers = "auto"\nkv = "/srv/kv.sqlite3"\nhead-poll-ms = "100"\n';
  const values = configValues(
    { port: 9090, workers: "auto", kv: "/srv/kv.sqlite3", "head-poll-ms": "100" },
    keys,
    "cfgtool.toml",
    text,
  );
  assertEquals(Object.fromEntries(values), {
    port: "9090",
    workers: "auto",
    kv: "/srv/kv.sqlite3",
    headPollMs: "100",
  });
});

Deno.test("values of the wrong type are all reported, each with its line, key and what was found", () => {
  const keys = configKeys(serveCommand().options);
  const text = [
    "# cfgtool",
    "hostname = 8080",
    "port = 80.5",
    "head-poll-ms = true",
    'kv = ["a"]',
    "",
  ].join("\n");
  const err = assertThrows(
    () =>
      configValues(
        { hostname: 8080, port: 80.5, "head-poll-ms": true, kv: ["a"] },
        keys,
        "/etc/cfgtool/cfgtool.toml",
        text,
      ),
    ConfigFileError,
  );
  assert(err instanceof UsageError, "a usage error: exit 2");
  assertEquals(err.message.split("\n"), [
    "/etc/cfgtool/cfgtool.toml:2:1: hostname: expected a string, found the integer 8080",
    "/etc/cfgtool/cfgtool.toml:3:1: port: expected an integer (or a string, as on the command " +
    "line), found the number 80.5",
    "/etc/cfgtool/cfgtool.toml:4:1: head-poll-ms: expected an integer (or a string, as on the " +
    "command line), found the boolean true",
    "/etc/cfgtool/cfgtool.toml:5:1: kv: expected a string, found an array",
  ]);
  assertEquals(err.problems.length, 4);
});

Deno.test("an unknown key names the nearest known one; a table, another config file and a stranger too", () => {
  const keys = configKeys(serveCommand().options);
  const text = [
    "head-pol-ms = 250",
    'tls_cert = "c.pem"',
    'config = "other.toml"',
    'colour = "blue"',
    "[server]",
    "port = 1",
    "",
  ].join("\n");
  const err = assertThrows(
    () =>
      configValues(
        {
          "head-pol-ms": 250,
          tls_cert: "c.pem",
          config: "other.toml",
          colour: "blue",
          server: { port: 1 },
        },
        keys,
        "cfgtool.toml",
        text,
      ),
    ConfigFileError,
  );
  assertEquals(err.message.split("\n"), [
    'cfgtool.toml:1:1: unknown key "head-pol-ms"; did you mean "head-poll-ms"?',
    'cfgtool.toml:2:1: unknown key "tls_cert"; did you mean "tls-cert"?',
    'cfgtool.toml:3:1: unknown key "config": a configuration file cannot name another one',
    'cfgtool.toml:4:1: unknown key "colour" (the keys are the flags of `cfgtool serve --help`, ' +
    "without --)",
    'cfgtool.toml:5:1: unknown key "server" (the keys are the flags of `cfgtool serve --help`, ' +
    "without --)",
  ]);
});

Deno.test("a file that is missing, a directory or not TOML is a usage error naming it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const cmd = serveCommand() as unknown as Parameters<typeof applyConfigFile>[0];
    const missing = await assertRejects(
      () => applyConfigFile(cmd, `${dir}/nope.toml`),
      ConfigFileError,
    );
    assertEquals(
      missing.message,
      `${dir}/nope.toml: cannot read the configuration file: no such file`,
    );
    const directory = await assertRejects(() => applyConfigFile(cmd, dir), ConfigFileError);
    assertStringIncludes(directory.message, `${dir}: cannot read the configuration file`);
    await Deno.writeTextFile(`${dir}/bad.toml`, "port = = 1\n");
    const syntax = await assertRejects(
      () => applyConfigFile(cmd, `${dir}/bad.toml`),
      ConfigFileError,
    );
    assert(syntax.message.startsWith(`${dir}/bad.toml:1:8: invalid TOML`), syntax.message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("applyConfigFile sets a key only where neither the flag nor its variable was given", async () => {
  const file = await Deno.makeTempFile({ suffix: ".toml" });
  try {
    await Deno.writeTextFile(
      file,
      'port = 9090\nhostname = "0.0.0.0"\nkv = "/from/file"\nhead-poll-ms = 100\n',
    );
    const cmd = new Command("serve")
      .option("--port <port>", "port", "8080")
      .option("--hostname <host>", "address", "127.0.0.1")
      .option("--kv <location>", "store", "./default")
      .option("--head-poll-ms <n>", "poll")
      .action(() => {});
    cmd.parse(["--hostname", "::1"], { from: "user" });
    // as commander records a value from the environment
    cmd.setOptionValueWithSource("kv", "/from/env", "env");
    const keys = await applyConfigFile(cmd, file);
    assertEquals(keys, ["port", "hostname", "kv", "head-poll-ms"]);
    assertEquals(cmd.opts(), {
      port: "9090",
      hostname: "::1",
      kv: "/from/env",
      headPollMs: "100",
    });
    assertEquals(cmd.getOptionValueSource("port"), "config");
    assertEquals(cmd.getOptionValueSource("hostname"), "cli");
    assertEquals(cmd.getOptionValueSource("kv"), "env");
  } finally {
    await Deno.remove(file);
  }
});

/** A running `cfgtool serve` started with exactly `args` (no forced port or store). */
interface Served {
  url: string;
  stdout: () => string;
  stderr: () => string;
  child: Deno.ChildProcess;
  stop(): Promise<number>;
}

async function serve(args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", CLI, "serve", ...args],
    stdout: "piped",
    stderr: "piped",
    stdin: "null",
    env: { NO_COLOR: "1", ...env },
  }).spawn();
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    for await (const chunk of stream) {
      if (isOut) out += decoder.decode(chunk, { stream: true });
      else err += decoder.decode(chunk, { stream: true });
    }
  };
  const pumps = Promise.all([pump(child.stdout, true), pump(child.stderr, false)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const end = Date.now() + 30_000;
  let url: string | undefined;
  while (url === undefined) {
    url = /listening on (https?:\/\/\S+)/.exec(out)?.[1];
    if (url !== undefined) break;
    if (exited || Date.now() > end) {
      await pumps;
      throw new Error(`serve did not start:\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    url,
    stdout: () => out,
    stderr: () => err,
    child,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch {
        // gone
      }
      const s = await status;
      await pumps;
      return s.code;
    },
  };
}

function logLines(logs: string, msg: string): Record<string, unknown>[] {
  return logs.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
    .filter((l) => l.msg === msg);
}

Deno.test("precedence: a flag beats its variable, the variable beats the file, the file beats the default", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-config-" });
  try {
    const port = freePort("127.0.0.1", 0);
    const file = `${dir}/cfgtool.toml`;
    await Deno.writeTextFile(
      file,
      `# the service\nport = ${port}\nkv = ":memory:"\nlog-level = "warn"\n`,
    );

    // the file beats the defaults: its port (not 8080) and its log level (no info lines)
    const fromFile = await serve(["--config", file]);
    try {
      assertEquals(fromFile.url, `http://127.0.0.1:${port}`);
    } finally {
      assertEquals(await fromFile.stop(), 0);
    }
    assertEquals(logLines(fromFile.stderr(), "listening"), [], "info lines are below warn");

    // flags beat the file; CFGTOOL_KV beats the file's kv; CFGTOOL_CONFIG names the file
    const kvPath = `${dir}/kv.sqlite3`;
    const flags = await serve(["--port", "0", "--log-level", "info"], {
      CFGTOOL_CONFIG: file,
      CFGTOOL_KV: kvPath,
    });
    try {
      assert(flags.url !== `http://127.0.0.1:${port}`, "--port 0 won over the file's port");
    } finally {
      assertEquals(await flags.stop(), 0);
    }
    // (read once it exited: log lines are written in batches)
    const lines = logLines(flags.stderr(), "listening");
    assertEquals(lines.length, 1, flags.stderr());
    assertEquals(lines[0]!.kv, kvPath, "CFGTOOL_KV won over the file's kv");
    assertEquals(lines[0]!.config, file);

    // and a flag beats the variable
    const memory = await serve(["--kv", ":memory:", "--port", "0", "--log-level", "info"], {
      CFGTOOL_CONFIG: file,
      CFGTOOL_KV: kvPath,
    });
    assertEquals(await memory.stop(), 0);
    assertEquals(logLines(memory.stderr(), "listening")[0]!.kv, ":memory:");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --config with an unknown key, a wrong type, a bad value or no file exits 2 and names it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-config-" });
  try {
    const file = `${dir}/cfgtool.toml`;
    await Deno.writeTextFile(file, 'kv = ":memory:"\nport = 0\nhead-pol-ms = 250\n');
    const unknown = await runCfgtool(["serve", "--config", file]);
    assertEquals(unknown.code, 2, unknown.stderr);
    assertEquals(
      unknown.stderr.trim(),
      `error: ${file}:3:1: unknown key "head-pol-ms"; did you mean "head-poll-ms"?`,
    );

    await Deno.writeTextFile(file, 'kv = ":memory:"\nport = "zero"\nworkers = true\n');
    const wrong = await runCfgtool(["serve", "--config", file]);
    assertEquals(wrong.code, 2, wrong.stderr);
    assertStringIncludes(
      wrong.stderr,
      `${file}:3:1: workers: expected an integer (or a string, as on the command line), ` +
        "found the boolean true",
    );

    await Deno.writeTextFile(file, 'kv = ":memory:"\nport = 0\nhead-poll-ms = 0\n');
    const value = await runCfgtool(["serve", "--config", file]);
    assertEquals(value.code, 2, value.stderr);
    assertEquals(
      value.stderr.trim(),
      `error: head-poll-ms in ${file} must be a positive integer, not "0"`,
    );

    await Deno.writeTextFile(file, 'kv = ":memory:"\nport = 0\nlog-level = "verbose"\n');
    const level = await runCfgtool(["serve", "--config", file]);
    assertEquals(level.code, 2, level.stderr);
    assertStringIncludes(
      level.stderr,
      `log-level in ${file} must be one of debug, info, warn, error, not "verbose"`,
    );

    const none = await runCfgtool(["serve", "--config", `${dir}/none.toml`]);
    assertEquals(none.code, 2, none.stderr);
    assertEquals(
      none.stderr.trim(),
      `error: ${dir}/none.toml: cannot read the configuration file: no such file`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve --workers: every worker runs with the file's configuration, secrets in its environment", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-config-" });
  try {
    const port = freePort("127.0.0.1", 0);
    const file = `${dir}/cfgtool.toml`;
    const token = "metrics-1f3c9a7e5b2d4c68";
    await Deno.writeTextFile(
      file,
      [
        `port = ${port}`,
        `kv = "${dir}/kv.sqlite3"`,
        "workers = 2",
        "head-poll-ms = 120",
        'audit-retention = "30d"',
        `metrics-token = "${token}"`,
        'smtp-url = "smtp://mailer:hunter2@127.0.0.1:2525"',
        "",
      ].join("\n"),
    );
    const group = await serve(["--config", file]);
    try {
      assertEquals(group.url, `http://127.0.0.1:${port}`);
      const end = Date.now() + 10_000;
      while (logLines(group.stderr(), "workers listening").length === 0 && Date.now() < end) {
        await new Promise((r) => setTimeout(r, 25));
      }
      const pids = logLines(group.stderr(), "workers listening")[0]!.pids as number[];
      assertEquals(pids.length, 2);
      for (const pid of pids) {
        const argv = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
        const after = (flag: string) => argv[argv.indexOf(flag) + 1];
        assertEquals(after("--kv"), `${dir}/kv.sqlite3`);
        assertEquals(after("--head-poll-ms"), "120");
        assertEquals(after("--audit-retention"), "30d");
        assertEquals(after("--port"), String(port));
        assert(!argv.includes("--config"), "the workers read no file");
        const joined = argv.join(" ");
        assert(!joined.includes(token) && !joined.includes("hunter2"), "no secret on argv");
        const environ = (await Deno.readTextFile(`/proc/${pid}/environ`)).split("\0");
        assert(environ.includes(`CFGTOOL_METRICS_TOKEN=${token}`));
        assert(environ.includes("CFGTOOL_SMTP_URL=smtp://mailer:hunter2@127.0.0.1:2525"));
        assert(environ.includes("CFGTOOL_CONFIG="));
      }
      const health = await fetch(`${group.url}/healthz`);
      assertEquals(health.status, 200);
      await health.body?.cancel();
    } finally {
      assertEquals(await group.stop(), 0);
    }
    const workers = logLines(group.stderr(), "listening");
    assertEquals(workers.length, 2);
    assert(workers.every((l) => l.kv === `${dir}/kv.sqlite3`));
    assert(!group.stderr().includes(token), "the metrics token is never logged");
    assert(!group.stderr().includes("hunter2"), "nor the SMTP password");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a secret's value is never echoed: neither a mistyped metrics-token nor an unquoted one", async () => {
  const keys = configKeys(serveCommand().options);
  const typed = assertThrows(
    () =>
      configValues(
        { "metrics-token": 123456789, "smtp-url": true },
        keys,
        "cfgtool.toml",
        "metrics-token = 123456789\nsmtp-url = true\n",
      ),
    ConfigFileError,
  );
  assertEquals(typed.message.split("\n"), [
    "cfgtool.toml:1:1: metrics-token: expected a string, found an integer (value not shown)",
    "cfgtool.toml:2:1: smtp-url: expected a string, found a boolean (value not shown)",
  ]);
  const dir = await Deno.makeTempDir();
  try {
    const cmd = serveCommand() as unknown as Parameters<typeof applyConfigFile>[0];
    for (
      const [line, key] of [
        ["metrics-token = s3cr3tvalue", "metrics-token"],
        ["smtp-url = smtp://u:hunter2@mail.example", "smtp-url"],
      ]
    ) {
      await Deno.writeTextFile(`${dir}/bad.toml`, `port = 9090\n${line}\n`);
      const syntax = await assertRejects(
        () => applyConfigFile(cmd, `${dir}/bad.toml`),
        ConfigFileError,
      );
      assert(syntax.message.startsWith(`${dir}/bad.toml:2:`), syntax.message);
      assertStringIncludes(syntax.message, `invalid TOML in the value of ${key} (not shown`);
      assert(!/s3cr3t|hunter2/.test(syntax.message), syntax.message);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
