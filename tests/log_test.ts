import { assert, assertEquals } from "./assert.ts";
import { bufferedWriter, createLogger, redactSecrets } from "../lib/log.ts";
import { generateToken } from "../lib/auth/token_format.ts";

Deno.test("redactSecrets removes service and session tokens anywhere, plain or percent-encoded", () => {
  for (
    const type of ["namespace-read", "namespace-client", "tenant-admin", "superadmin"] as const
  ) {
    const token = generateToken(type);
    const word = token.split("_")[1]!;
    assertEquals(redactSecrets(`/a/${token}/b`), `/a/svc_${word}_[redacted]/b`);
    const encoded = token.replaceAll("_", "%5F");
    assert(!redactSecrets(`/a/${encoded}`).includes(token.split("_")[2]!));
  }
  assertEquals(redactSecrets("/x?q=ses_4Hq8ZyXb7nQ2mK9"), "/x?q=ses_[redacted]");
});

Deno.test("redactSecrets removes credential-named query values and leaves other text alone", () => {
  assertEquals(
    redactSecrets("/closure?token=abc.def&v=2&api_key=k1#frag"),
    "/closure?token=[redacted]&v=2&api_key=[redacted]#frag",
  );
  assertEquals(redactSecrets("/api/v1/tenants/acme/namespaces"), "/api/v1/tenants/acme/namespaces");
  assertEquals(redactSecrets("svc_read_abc"), "svc_read_abc", "a short display prefix stays");
});

Deno.test("createLogger redacts a token passed in any field", () => {
  const lines: string[] = [];
  const log = createLogger("info", (l) => lines.push(l));
  const token = generateToken("namespace-write");
  log("info", "request", { path: `/api/v1/tokens/${token}`, note: token });
  assertEquals(lines.length, 1);
  assert(!lines[0]!.includes(token));
  assertEquals(JSON.parse(lines[0]!).path, "/api/v1/tokens/svc_write_[redacted]");
});

Deno.test("redactSecrets removes a token glued to other text: after a letter, digit or underscore", () => {
  const token = generateToken("superadmin");
  const payload = token.split("_")[2]!;
  for (const glued of [`/x/abc_${token}`, `/x/9${token}`, `/x/A${token}/y`]) {
    const out = redactSecrets(glued);
    assert(!out.includes(payload), out);
    assert(out.includes("svc_admin_[redacted]"), out);
  }
  assertEquals(redactSecrets("classes_abcdefgh"), "classes_abcdefgh", "ordinary words stay");
});

Deno.test("createLogger writes time, level and msg first, then the fields in their order", () => {
  const lines: string[] = [];
  const log = createLogger("debug", (l) => lines.push(l));
  const cases: (Record<string, unknown> | undefined)[] = [
    undefined,
    {},
    { request_id: "r1", status: 200, ms: 1.5, skipped: undefined, nested: { a: [1, "x"] } },
    { msg: "overridden in place", extra: true },
    { path: '/a"b\\c\u2028', level: "error" },
  ];
  for (const fields of cases) {
    lines.length = 0;
    log("warn", 'said "this"', fields);
    const record = JSON.parse(lines[0]!);
    assertEquals(typeof record.time, "string");
    const expected = JSON.stringify({
      time: record.time,
      level: "warn",
      msg: 'said "this"',
      ...fields,
    });
    assertEquals(lines[0], expected);
  }
});

Deno.test("bufferedWriter writes every line once, in order, whatever its size", () => {
  const batches: string[] = [];
  const w = bufferedWriter({
    maxLines: 50,
    sink: (b) => batches.push(new TextDecoder().decode(b)),
  });
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) lines.push(`${i} ${"é😀x".repeat(i % 7)}`);
  lines.splice(123, 0, "big ".repeat(60_000)); // larger than the writer's buffer: written alone
  lines.splice(300, 0, "ü".repeat(70_000)); // fits only after a flush
  for (const l of lines) w.write(l);
  w.flush();
  assertEquals(batches.join(""), lines.map((l) => `${l}\n`).join(""));
  assert(batches.length >= 400 / 50, "flushed every 50 lines");
});
