import { assertEquals } from "../assert.ts";
import { Hono } from "hono";
import {
  ForbiddenError,
  InvalidRequestError,
  NotFoundError,
  RateLimitError,
  UnauthorizedError,
  UsageError,
} from "../../lib/errors.ts";
import type { AppEnv } from "../../lib/server/app.ts";
import { InvalidContextError } from "../../lib/http/context_input.ts";
import { OfrepError, ofrepErrorHandler, ofrepErrorResponse } from "../../lib/http/ofrep_errors.ts";
import type { TokenRecord } from "../../lib/store/tokens.ts";

Deno.test("ofrepErrorResponse() maps every error to OFREP's status and body", async () => {
  const logged: string[] = [];
  const log = (_l: string, msg: string) => void logged.push(msg);
  const cases: [unknown, string | undefined, number, Record<string, unknown> | null][] = [
    [new UnauthorizedError("x"), "f", 401, null],
    [new RateLimitError("x", 7), "f", 429, null],
    [new InvalidRequestError("bad json"), "f", 400, {
      key: "f",
      errorCode: "PARSE_ERROR",
      errorDetails: "bad json",
    }],
    [new UsageError("bad json"), "f", 400, {
      key: "f",
      errorCode: "PARSE_ERROR",
      errorDetails: "bad json",
    }],
    [new InvalidContextError("deep"), undefined, 400, {
      errorCode: "INVALID_CONTEXT",
      errorDetails: "deep",
    }],
    [new OfrepError("FLAG_NOT_FOUND", "no f", 404), "f", 404, {
      key: "f",
      errorCode: "FLAG_NOT_FOUND",
      errorDetails: "no f",
    }],
    [new NotFoundError("environment_not_found", "no env"), undefined, 404, {
      errorCode: "GENERAL",
      errorDetails: "no env",
    }],
    [new NotFoundError("namespace_not_found", "no ns"), "f", 404, {
      key: "f",
      errorCode: "FLAG_NOT_FOUND",
      errorDetails: "no ns",
    }],
    [new Error("secret internals"), "f", 500, {
      key: "f",
      errorCode: "GENERAL",
      errorDetails: "internal server error",
    }],
  ];
  for (const [err, key, status, body] of cases) {
    const res = ofrepErrorResponse(err, key, log, "r1");
    assertEquals(res.status, status, String(err));
    const text = await res.text();
    assertEquals(text === "" ? null : JSON.parse(text), body, String(err));
  }
  assertEquals(
    ofrepErrorResponse(new RateLimitError("x", 7), "f", log, "r").headers.get("retry-after"),
    "7",
  );
  assertEquals(
    ofrepErrorResponse(new UnauthorizedError("x"), "f", log, "r").headers.get("www-authenticate"),
    "Bearer",
  );
  assertEquals(logged, ["OFREP request failed"]);
});

Deno.test("ofrepErrorHandler() answers a throwing route in OFREP's shape, with the :key and CORS", async () => {
  const logged: string[] = [];
  const app = new Hono<AppEnv>();
  app.onError(ofrepErrorHandler((_l, msg) => void logged.push(msg)));
  const client = {
    type: "namespace-client",
    allowed_origins: ["https://app.example"],
  } as unknown as TokenRecord;
  app.post("/evaluate/flags/:key", (c) => {
    c.set("principal", { kind: "token", token: client });
    throw new OfrepError("FLAG_NOT_FOUND", "no such flag", 404);
  });
  app.post("/evaluate/flags", () => {
    throw new InvalidRequestError("request body must be a JSON object");
  });
  app.get("/event-stream", () => {
    throw new ForbiddenError("not a client token");
  });
  app.get("/boom", () => {
    throw new Error("secret internals");
  });

  const single = await app.request("/evaluate/flags/dark-mode", {
    method: "POST",
    headers: { origin: "https://app.example" },
  });
  assertEquals(single.status, 404);
  assertEquals(await single.json(), {
    key: "dark-mode",
    errorCode: "FLAG_NOT_FOUND",
    errorDetails: "no such flag",
  });
  assertEquals(single.headers.get("access-control-allow-origin"), "https://app.example");

  const bulk = await app.request("/evaluate/flags", {
    method: "POST",
    headers: { origin: "https://app.example" },
  });
  assertEquals(bulk.status, 400);
  assertEquals(await bulk.json(), {
    errorCode: "PARSE_ERROR",
    errorDetails: "request body must be a JSON object",
  });
  assertEquals(bulk.headers.get("access-control-allow-origin"), null, "no principal, no CORS");
  assertEquals(bulk.headers.get("vary"), "Origin");

  const stream = await app.request("/event-stream");
  assertEquals([stream.status, await stream.text()], [403, ""]);

  const boom = await app.request("/boom");
  assertEquals(boom.status, 500);
  assertEquals((await boom.json()).errorDetails, "internal server error");
  assertEquals(logged, ["OFREP request failed"]);
});

Deno.test("ofrepErrorHandler() answers a client that went away with 499, not a logged 500", async () => {
  const logged: string[] = [];
  const app = new Hono<AppEnv>();
  app.onError(ofrepErrorHandler((_l, msg) => void logged.push(msg)));
  app.post("/evaluate/flags", () => {
    throw new Deno.errors.ConnectionReset("connection reset");
  });
  const res = await app.request("/evaluate/flags", { method: "POST" });
  await res.body?.cancel();
  assertEquals([res.status, logged], [499, []]);
});
