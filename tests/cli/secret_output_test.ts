import { assert, assertEquals } from "../assert.ts";
import { noteSecret, printSecret } from "../../lib/cli/secret_output.ts";
import { runCfgtool } from "../cli_process.ts";
import { startOtlpReceiver } from "../e2e/otlp_receiver.ts";

/** A sink that keeps what was written, `step` bytes per write at most. */
function sink(step = Infinity) {
  let text = "";
  const dec = new TextDecoder();
  return {
    text: () => text,
    writeSync(b: Uint8Array) {
      const n = Math.min(step, b.length);
      text += dec.decode(b.subarray(0, n));
      return n;
    },
  };
}

Deno.test("printSecret writes the whole line and a newline, even in short writes", () => {
  const out = sink(3);
  printSecret("svc_admin_0123456789", out);
  assertEquals(out.text(), "svc_admin_0123456789\n");
  const err = sink();
  noteSecret("enter the code BCDF-GHJK", err);
  assertEquals(err.text(), "enter the code BCDF-GHJK\n");
});

Deno.test("printSecret ignores a closed pipe, as console.log does", () => {
  printSecret("x", {
    writeSync() {
      throw new Deno.errors.BrokenPipe("closed");
    },
  });
});

Deno.test("with OTEL_DENO=true, printed secrets reach stdout and no exported log record", async () => {
  const otlp = startOtlpReceiver();
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-secret-output-" });
  const kv = `${dir}/kv.sqlite3`;
  const env = {
    OTEL_DENO: "true",
    OTEL_SERVICE_NAME: "cfgtool-cli",
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BLRP_SCHEDULE_DELAY: "50",
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_METRIC_EXPORT_INTERVAL: "600000",
  };
  try {
    const boot = await runCfgtool(["admin", "bootstrap", "--kv", kv], { env });
    assertEquals(boot.code, 0, boot.stderr);
    const admin = boot.stdout.trim().split("\n").at(-1)!;
    assert(admin.startsWith("svc_admin_"), boot.stdout);
    const json = await runCfgtool(["admin", "bootstrap", "--kv", kv, "--json"], { env });
    assertEquals(json.code, 0, json.stderr);
    const second = JSON.parse(json.stdout).secret as string;
    const link = await runCfgtool(
      [
        "admin",
        "console-link",
        "--kv",
        kv,
        "--user",
        "ops@example.com",
        "--url",
        "https://f.example",
      ],
      { env },
    );
    assertEquals(link.code, 0, link.stderr);
    const url = link.stdout.trim().split("\n").at(-1)!;
    assert(url.startsWith("https://f.example/auth/operator?code="), link.stdout);
    const code = new URL(url).searchParams.get("code")!;
    const session = await runCfgtool(
      ["admin", "session", "create", "--kv", kv, "--user", "ops@example.com"],
      { env },
    );
    assertEquals(session.code, 0, session.stderr);
    const ses = session.stdout.trim().split("\n").at(-1)!;

    const logs = otlp.exports().filter((e) => e.path === "/v1/logs").map((e) => e.body);
    // the capture is on: the commands' other console lines were exported
    assert(
      logs.some((b) => b.includes("The secret below is shown only now")),
      "no console line was exported; is OTEL_DENO console capture on?",
    );
    assert(logs.some((b) => b.includes("console link for ops@example.com")));
    for (const secret of [admin, second, code, ses]) {
      assert(!logs.some((b) => b.includes(secret)), `a secret reached the log records`);
    }
  } finally {
    await otlp.close();
    await Deno.remove(dir, { recursive: true });
  }
});
