import { Hono } from "hono";
import { assertEquals, assertThrows } from "../assert.ts";
import { CfgtoolError, InvalidRequestError, NotFoundError } from "../../lib/errors.ts";
import type { AppEnv } from "../../lib/server/app.ts";
import {
  guardPathIdentifiers,
  intParam,
  shapedParam,
  SHAPES,
  userRefField,
} from "../../lib/http/params.ts";

/** An app with the guard, answering the status and code of any error. */
function guardedApp(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((err) =>
    Response.json({ code: err instanceof CfgtoolError ? err.code : "internal" }, {
      status: err instanceof CfgtoolError ? err.status : 500,
    })
  );
  guardPathIdentifiers(app);
  const ok = (c: { text: (s: string) => Response }) => c.text("reached");
  app.get("/api/v1/tokens/:id", ok);
  app.get("/api/v1/tenants/:tenant/admins/:user", ok);
  app.get("/api/v1/tenants/:tenant/namespaces/:ns/versions/:v", ok);
  app.post("/api/v1/tenants/:tenant/namespaces/:ns/environments/:env/evaluate", ok);
  return app;
}

async function answer(app: Hono<AppEnv>, method: string, path: string) {
  const res = await app.request(path, { method });
  return { status: res.status, body: await res.text() };
}

Deno.test("path identifiers of a bad shape never reach the route: 404 with the code of what they name", async () => {
  const app = guardedApp();
  const ulid = "01HZX3V8Q6K9Y2R5T7W4N1M0PB";
  assertEquals(await answer(app, "GET", `/api/v1/tokens/tok_${ulid}`), {
    status: 200,
    body: "reached",
  });
  for (
    const [method, path, code] of [
      ["GET", `/api/v1/tokens/tok_${"x".repeat(3000)}`, "token_not_found"],
      ["GET", "/api/v1/tokens/tok_NOPE", "token_not_found"],
      ["GET", `/api/v1/tenants/${"a".repeat(64)}/admins/usr_${ulid}`, "tenant_not_found"],
      ["GET", `/api/v1/tenants/acme/admins/usr_${"1".repeat(3000)}`, "admin_not_found"],
      ["GET", "/api/v1/tenants/acme/namespaces/a%00b/versions/1", "namespace_not_found"],
      [
        "POST",
        `/api/v1/tenants/acme/namespaces/web/environments/${"e".repeat(3000)}/evaluate`,
        "environment_not_found",
      ],
    ] as const
  ) {
    const res = await answer(app, method, path);
    assertEquals(res.status, 404, path.slice(0, 80));
    assertEquals(JSON.parse(res.body).code, code, path.slice(0, 80));
  }
  const version = await answer(
    app,
    "GET",
    `/api/v1/tenants/acme/namespaces/web/versions/${"9".repeat(16)}`,
  );
  assertEquals([version.status, JSON.parse(version.body).code], [400, "invalid_request"]);
});

Deno.test("shapedParam() names the query parameter of a bad shape and passes a good one", () => {
  assertEquals(shapedParam(undefined, "tenant", SHAPES.slug), undefined);
  assertEquals(shapedParam("", "tenant", SHAPES.slug), undefined);
  assertEquals(shapedParam("acme", "tenant", SHAPES.slug), "acme");
  const err = assertThrows(
    () => shapedParam("x".repeat(3000), "after", SHAPES.auditId),
    InvalidRequestError,
  );
  assertEquals(err.details, { field: "after" });
  assert300(err.message);
  assertEquals(intParam("12", "limit"), 12);
  assertEquals(assertThrows(() => intParam("9".repeat(16), "limit"), InvalidRequestError).details, {
    field: "limit",
  });
});

function assert300(message: string): void {
  if (message.length > 300) throw new Error(`message quotes the whole value: ${message.length}`);
}

Deno.test("userRefField() refuses a user_id over the email limit with 400 and an unshaped one with 404", () => {
  assertEquals(userRefField({ user_id: "ana@example.com" }), "ana@example.com");
  const id = "usr_01HZX3V8Q6K9Y2R5T7W4N1M0PB";
  assertEquals(userRefField({ user_id: id }), id);
  assertEquals(
    assertThrows(() => userRefField({ user_id: `usr_${"x".repeat(300)}` }), InvalidRequestError)
      .details,
    { field: "user_id", limit: 254 },
  );
  assertEquals(
    assertThrows(() => userRefField({ user_id: "bob" }), NotFoundError).code,
    "user_not_found",
  );
  assertEquals(assertThrows(() => userRefField({}), InvalidRequestError).details, {
    field: "user_id",
  });
});
