import { assert, assertEquals } from "../assert.ts";
import {
  type CfgtoolError,
  ConflictError,
  ForbiddenError,
  KvOpenError,
  LoginError,
  NotFoundError,
  PreconditionFailedError,
  ProblemsError,
  RateLimitError,
  UnauthorizedError,
  UnavailableError,
  UsageError,
} from "../../lib/errors.ts";
import {
  ERROR_CODES,
  genericCodeOf,
  isServiceErrorCode,
  type ServiceErrorCode,
} from "../../lib/protocol/error_codes.ts";

/** The server's code: every directory whose errors can reach an HTTP answer or `cfgtool serve`. */
const SERVER_DIRS = ["http", "auth", "store", "events", "closure", "net", "workers"];
const LIB = new URL("../../lib/", import.meta.url);

interface Emitted {
  code: string;
  /** The status the call gives it, when it can be read from the source. */
  status: number | undefined;
  where: string;
}

/** Source text without comment lines (JSDoc examples may use made-up codes). */
async function sourceOf(url: URL): Promise<string> {
  const text = await Deno.readTextFile(url);
  return text.split("\n").filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l)).join("\n");
}

/** The text of a call's arguments, from its "(" to the matching ")", skipping strings. */
function argumentsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'" || ch === "`") {
      for (i++; i < text.length && text[i] !== ch; i++) if (text[i] === "\\") i++;
    } else if (ch === "(") depth++;
    else if (ch === ")" && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

/** Every literal code the server constructs an error with, and the status it gives it. */
async function emittedCodes(): Promise<Emitted[]> {
  const files: URL[] = [new URL("errors.ts", LIB)];
  for (const dir of SERVER_DIRS) {
    for await (const e of Deno.readDir(new URL(`${dir}/`, LIB))) {
      if (e.isFile && e.name.endsWith(".ts")) files.push(new URL(`${dir}/${e.name}`, LIB));
    }
  }
  const out: Emitted[] = [];
  for (const url of files) {
    const text = await sourceOf(url);
    const where = url.pathname.slice(LIB.pathname.length);
    const call = /new\s+(CfgtoolError|NotFoundError|KvOpenError)\(\s*"([a-z0-9_]+)"/g;
    for (const m of text.matchAll(call)) {
      const args = argumentsAt(text, m.index! + m[0].indexOf("("));
      const literal = /status:\s*(\d{3})/.exec(args);
      const status = m[1] === "NotFoundError"
        ? 404
        : m[1] === "KvOpenError"
        ? 503
        : literal
        ? Number(literal[1])
        : /status:|\.\.\.\w/.test(args)
        ? undefined // a computed status or spread options: not read here
        : 500; // CfgtoolError's default
      out.push({ code: m[2]!, status, where });
    }
    for (const m of text.matchAll(/super\(\s*"([a-z0-9_]+)"/g)) {
      const literal = /status:\s*(\d{3})/.exec(argumentsAt(text, m.index! + 5));
      out.push({ code: m[1]!, status: literal ? Number(literal[1]) : undefined, where });
    }
    for (const m of text.matchAll(/\bcode = "([a-z0-9_]+)"/g)) {
      out.push({ code: m[1]!, status: undefined, where });
    }
  }
  return out;
}

Deno.test("the error table has every code the server constructs an error with", async () => {
  const emitted = await emittedCodes();
  assert(emitted.length > 20, `only ${emitted.length} codes found: is the scan broken?`);
  const missing = emitted.filter((e) => !isServiceErrorCode(e.code));
  assertEquals(missing, []);
});

Deno.test("the server answers each code with the table's status", async () => {
  const wrong = (await emittedCodes()).filter((e) =>
    e.status !== undefined && isServiceErrorCode(e.code) && ERROR_CODES[e.code].status !== e.status
  );
  assertEquals(wrong, []);
});

Deno.test("the error classes of lib/errors.ts carry the table's code and status", () => {
  const errors: CfgtoolError[] = [
    new UsageError("m"),
    new UnauthorizedError("m"),
    new ForbiddenError("m"),
    new ConflictError("m"),
    new PreconditionFailedError("m"),
    new RateLimitError("m", 1),
    new ProblemsError([]),
    new NotFoundError("tenant_not_found", "m"),
    new KvOpenError("kv_unavailable", "m"),
    new KvOpenError("kv_access_token_missing", "m"),
    new LoginError("state", "m"),
    new UnavailableError("login_unavailable", "m"),
  ];
  for (const err of errors) {
    assert(isServiceErrorCode(err.code), err.code);
    assertEquals(ERROR_CODES[err.code as ServiceErrorCode].status, err.status, err.code);
  }
});

Deno.test("every documented code of docs/api.md is in the table with the documented status", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/api.md", import.meta.url));
  const rows = [...doc.matchAll(/^\| (\d{3})\s+\| `([a-z_]+)`/gm)];
  assert(rows.length > 15, `only ${rows.length} rows read from docs/api.md`);
  for (const [, status, code] of rows) {
    assert(isServiceErrorCode(code!), code);
    assertEquals(ERROR_CODES[code as ServiceErrorCode].status, Number(status), code);
  }
});

Deno.test("each status the SDK names without an envelope has exactly one generic code", () => {
  assertEquals(
    [400, 401, 403, 404, 409, 412, 413, 422, 429].map(genericCodeOf),
    [
      "invalid_request",
      "unauthorized",
      "forbidden",
      "not_found",
      "conflict",
      "precondition_failed",
      "payload_too_large",
      "invalid_manifest",
      "rate_limit_exceeded",
    ],
  );
  for (const status of [410, 500, 502, 503, 504]) assertEquals(genericCodeOf(status), undefined);
  const generic = Object.values(ERROR_CODES).filter((info) => info.generic === true);
  assertEquals(new Set(generic.map((info) => info.status)).size, generic.length);
});

Deno.test("every code has a status between 400 and 599 and a meaning", () => {
  for (const [code, info] of Object.entries(ERROR_CODES)) {
    assert(info.status >= 400 && info.status <= 599, code);
    assert(info.meaning.length > 10, code);
  }
  assert(!isServiceErrorCode("constructor") && !isServiceErrorCode("http_error"));
});
