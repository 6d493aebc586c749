import { assert, assertEquals } from "../assert.ts";
import type { ApiResponse } from "./installation.ts";
import {
  ALLOWED_ORIGIN,
  evalPath,
  type Fixture,
  manifestFiles,
  OTHER_ORIGIN,
  startFixture,
} from "./evaluation_fixture.ts";

const STAGING = evalPath("acme", "web", "staging");
const STAGING_ALL = evalPath("acme", "web", "staging", true);

function assertEnvelope(res: ApiResponse, status: number, code: string, what: string): void {
  const seen = `${what} → ${res.status} ${JSON.stringify(res.body)}`;
  assertEquals(res.status, status, seen);
  assertEquals(res.body?.code, code, seen);
  assertEquals(typeof res.body?.message, "string", seen);
  assertEquals(res.body?.request_id, res.headers.get("x-request-id"), seen);
}

async function withFixture(args: string[], fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await startFixture(args);
  try {
    await fn(f);
  } finally {
    await f.inst.close();
  }
}

Deno.test("evaluate and evaluate/all through a real server", async (t) => {
  await withFixture([], async (f) => {
    const { inst, tokens } = f;

    await t.step("evaluate returns one result with reason, variation and version", async () => {
      const res = await inst.api("POST", STAGING, tokens.read, {
        flag: "new-checkout",
        context: { user: { email: "ana@example.com" } },
      });
      assertEquals(res.status, 200, JSON.stringify(res.body));
      assertEquals(res.body, {
        flag: "new-checkout",
        value: true,
        variation: "on",
        reason: "TARGETING_MATCH",
        rule_index: 0,
        version: 1,
      });
      const def = await inst.api("POST", STAGING, tokens.read, { flag: "theme" });
      assertEquals([def.body.value, def.body.reason], ["light", "DEFAULT"]);
    });

    await t.step(
      "a flag disabled in the environment serves its default with DISABLED",
      async () => {
        const res = await inst.api("POST", evalPath("acme", "web", "production"), tokens.read, {
          flag: "new-checkout",
          context: { user: { beta: true } },
        });
        assertEquals([res.status, res.body.value, res.body.reason], [200, false, "DISABLED"]);
      },
    );

    await t.step("an unknown flag is a 200 ERROR result with FLAG_NOT_FOUND", async () => {
      const res = await inst.api("POST", STAGING, tokens.read, { flag: "nope", context: {} });
      assertEquals(res.status, 200);
      assertEquals([res.body.reason, res.body.error_code, res.body.value], [
        "ERROR",
        "FLAG_NOT_FOUND",
        null,
      ]);
    });

    await t.step("evaluate/all returns {version, flags} keyed by flag", async () => {
      const res = await inst.api("POST", STAGING_ALL, tokens.client, {
        context: { targeting_key: "u-1", user: { beta: true } },
      });
      assertEquals(res.status, 200, JSON.stringify(res.body));
      assertEquals(res.body.version, 1);
      assertEquals(Object.keys(res.body.flags).sort(), [
        "banner",
        "cart-limit",
        "new-checkout",
        "theme",
      ]);
      assertEquals(res.body.flags["new-checkout"].value, true);
      assertEquals(res.body.flags.banner.value, { show: false });
      assertEquals(res.body.flags["cart-limit"].reason, "SPLIT");
    });

    await t.step("a missing flag member, bad JSON and bad contexts are 400", async () => {
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.read, { context: {} }),
        400,
        "invalid_request",
        "no flag",
      );
      const wrongType = await inst.api("POST", STAGING, tokens.read, { flag: 5, context: {} });
      assertEnvelope(wrongType, 400, "invalid_request", "a number for flag");
      assertEquals(
        wrongType.body.message,
        "flag must be a string: the key of the flag to evaluate",
      );
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.read, "{not json", {
          "content-type": "application/json",
        }),
        400,
        "invalid_request",
        "bad JSON",
      );
      for (
        const [what, context] of [
          ["an array", [1, 2]],
          ["a string", "user=1"],
          ["a number", 5],
        ] as const
      ) {
        const res = await inst.api("POST", STAGING, tokens.read, { flag: "theme", context });
        assertEnvelope(res, 400, "invalid_context", what);
        assert(res.body.message.includes("must be a JSON object"), res.body.message);
      }
      let deep: Record<string, unknown> = { leaf: 1 };
      for (let i = 0; i < 11; i++) deep = { d: deep };
      const tooDeep = await inst.api("POST", STAGING, tokens.read, {
        flag: "theme",
        context: deep,
      });
      assertEnvelope(tooDeep, 400, "invalid_context", "too deep");
      assert(tooDeep.body.message.includes("deeper than 10 levels"), tooDeep.body.message);
      const big = { blob: "x".repeat(40 * 1024) };
      const tooBig = await inst.api("POST", STAGING_ALL, tokens.read, { context: big });
      assertEnvelope(tooBig, 400, "invalid_context", "too large");
      assert(tooBig.body.message.includes("32768 bytes"), tooBig.body.message);
      const huge = await inst.api("POST", STAGING_ALL, tokens.read, {
        context: { blob: "x".repeat(100 * 1024) },
      });
      assertEnvelope(huge, 413, "payload_too_large", "body over 64 KiB");
    });

    await t.step("an unknown environment, namespace or tenant is 404 with its code", async () => {
      assertEnvelope(
        await inst.api("POST", evalPath("acme", "web", "qa"), tokens.read, { flag: "theme" }),
        404,
        "environment_not_found",
        "unknown environment",
      );
      assertEnvelope(
        await inst.api("POST", evalPath("acme", "nope", "staging"), inst.admin, { flag: "theme" }),
        404,
        "namespace_not_found",
        "unknown namespace",
      );
      assertEnvelope(
        await inst.api("POST", evalPath("nope", "web", "staging"), inst.admin, { flag: "theme" }),
        404,
        "tenant_not_found",
        "unknown tenant",
      );
    });

    await t.step("a push through the server is visible to the very next evaluation", async () => {
      for (let i = 0; i < 5; i++) {
        const theme = i % 2 === 0 ? "dark" : "light";
        const pushed = await f.push(
          manifestFiles({
            "flags/theme.toml": FLAGS_THEME(theme),
          }),
        );
        const res = await inst.api("POST", STAGING, tokens.client, { flag: "theme" });
        assertEquals(res.body.value, theme, `push ${i}`);
        assertEquals(res.body.version, pushed.body.version, `push ${i}`);
      }
    });

    await t.step("deleting and re-creating a namespace is visible at once", async () => {
      const api = evalPath("acme", "api", "staging");
      assertEquals((await inst.api("POST", api, inst.admin, { flag: "theme" })).status, 200);
      const del = await inst.api("DELETE", "/api/v1/tenants/acme/namespaces/api", inst.admin);
      assertEquals(del.status, 200, JSON.stringify(del.body));
      assertEnvelope(
        await inst.api("POST", api, inst.admin, { flag: "theme" }),
        404,
        "namespace_not_found",
        "deleted namespace",
      );
      const made = await inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, {
        slug: "api",
      });
      assertEquals(made.status, 201);
      // version 0 declares no environment yet
      assertEnvelope(
        await inst.api("POST", api, inst.admin, { flag: "theme" }),
        404,
        "environment_not_found",
        "re-created namespace at version 0",
      );
      await f.push(manifestFiles(), "api");
      const res = await inst.api("POST", api, inst.admin, { flag: "theme" });
      assertEquals([res.status, res.body.value, res.body.version], [200, "light", 1]);
    });
  });
});

function FLAGS_THEME(defaultVariation: string): string {
  return `schema_version = 1
description = "Theme"
type = "string"
default = "${defaultVariation}"
[variations]
light = "light"
dark = "dark"
`;
}

Deno.test("evaluation permissions: every principal on every triple", async (t) => {
  await withFixture([], async (f) => {
    const { inst, tokens } = f;
    const body = { flag: "theme", context: {} };

    await t.step("no credential or an unknown one is 401", async () => {
      assertEnvelope(await inst.api("POST", STAGING, null, body), 401, "unauthorized", "none");
      assertEnvelope(
        await inst.api("POST", STAGING, "svc_client_" + "1".repeat(44), body),
        401,
        "unauthorized",
        "unknown",
      );
    });

    await t.step("namespace-read, namespace-write and superadmin may evaluate", async () => {
      for (const tok of [tokens.read, tokens.write, inst.admin]) {
        assertEquals((await inst.api("POST", STAGING, tok, body)).status, 200);
        assertEquals((await inst.api("POST", STAGING_ALL, tok, {})).status, 200);
      }
      // read tokens are not limited to public environments
      const prod = await inst.api("POST", evalPath("acme", "web", "production"), tokens.read, body);
      assertEquals(prod.status, 200);
    });

    await t.step("a namespace-read token of another namespace is 403", async () => {
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.readOtherNamespace, body),
        403,
        "forbidden",
        "read of acme/api on acme/web",
      );
    });

    await t.step("namespace-client works only on its bound triple", async () => {
      assertEquals((await inst.api("POST", STAGING, tokens.client, body)).status, 200);
      const cases: [string, string][] = [
        [evalPath("acme", "web", "production"), "another environment"],
        [evalPath("acme", "api", "staging"), "another namespace"],
        [evalPath("other", "web", "staging"), "another tenant"],
      ];
      for (const [path, what] of cases) {
        assertEnvelope(await inst.api("POST", path, tokens.client, body), 403, "forbidden", what);
      }
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.clientOtherTenant, body),
        403,
        "forbidden",
        "client of other/web on acme/web",
      );
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.clientOtherNamespace, body),
        403,
        "forbidden",
        "client of acme/api on acme/web",
      );
    });

    await t.step("namespace-client cannot use the control plane", async () => {
      const res = await inst.api(
        "GET",
        "/api/v1/tenants/acme/namespaces/web/manifest",
        tokens.client,
      );
      assertEnvelope(res, 403, "forbidden", "manifest download");
    });

    await t.step("public_evaluate = false is 403 and leaves the token record active", async () => {
      const prod = await inst.api(
        "POST",
        evalPath("acme", "web", "production"),
        tokens.clientProduction,
        body,
      );
      assertEnvelope(prod, 403, "forbidden", "client of a private environment");
      await f.push(manifestFiles({}, false)); // staging becomes private
      assertEnvelope(
        await inst.api("POST", STAGING, tokens.client, body),
        403,
        "forbidden",
        "staging made private",
      );
      const rec = await inst.api("GET", `/api/v1/tokens/${f.ids.client}`, inst.admin);
      assertEquals(rec.status, 200, JSON.stringify(rec.body));
      assertEquals(rec.body.token.status, "active");
      assertEquals(rec.body.token.revoked_at, null);
      // the read token is not gated
      assertEquals((await inst.api("POST", STAGING, tokens.read, body)).status, 200);
      await f.push(manifestFiles({}, true));
      assertEquals((await inst.api("POST", STAGING, tokens.client, body)).status, 200);
    });
  });
});

Deno.test("evaluation CORS: only client tokens, only allowed Origins", async (t) => {
  await withFixture([], async (f) => {
    const { inst, tokens } = f;
    const body = { flag: "theme", context: {} };
    const acao = (res: ApiResponse) => res.headers.get("access-control-allow-origin");

    await t.step("a client token with an allowed Origin gets CORS headers", async () => {
      for (const path of [STAGING, STAGING_ALL]) {
        const res = await inst.api("POST", path, tokens.client, body, { origin: ALLOWED_ORIGIN });
        assertEquals(res.status, 200);
        assertEquals(acao(res), ALLOWED_ORIGIN);
        assert(res.headers.get("access-control-expose-headers")?.includes("ETag"));
        assert(res.headers.get("vary")?.includes("Origin"));
      }
    });

    await t.step("no CORS for other Origins, origin-less lists or other principals", async () => {
      const cases: [string, string, string][] = [
        [tokens.client, OTHER_ORIGIN, "client, unlisted Origin"],
        [tokens.clientNoOrigins, ALLOWED_ORIGIN, "client without allowed_origins"],
        [tokens.read, ALLOWED_ORIGIN, "namespace-read"],
        [inst.admin, ALLOWED_ORIGIN, "superadmin"],
      ];
      for (const [tok, origin, what] of cases) {
        const res = await inst.api("POST", STAGING, tok, body, { origin });
        assertEquals(res.status, 200, what);
        assertEquals(acao(res), null, what);
      }
    });

    await t.step("error responses of an allowed client carry CORS headers too", async () => {
      const res = await inst.api("POST", STAGING, tokens.client, { flag: "theme", context: [] }, {
        origin: ALLOWED_ORIGIN,
      });
      assertEquals(res.status, 400);
      assertEquals(acao(res), ALLOWED_ORIGIN);
    });

    await t.step(
      "preflight: approved for an Origin a client token of the triple lists",
      async () => {
        for (const path of [STAGING, STAGING_ALL]) {
          const res = await inst.api("OPTIONS", path, null, undefined, {
            origin: ALLOWED_ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization, content-type",
          });
          assertEquals(res.status, 204);
          assertEquals(acao(res), ALLOWED_ORIGIN);
          assertEquals(res.headers.get("access-control-allow-methods"), "POST");
          assertEquals(
            res.headers.get("access-control-allow-headers"),
            "Authorization, Content-Type, If-None-Match",
          );
        }
      },
    );

    await t.step("preflight: refused for other Origins, private or unbound triples", async () => {
      const cases: [string, string, string][] = [
        [STAGING, OTHER_ORIGIN, "unlisted Origin"],
        [evalPath("acme", "web", "production"), ALLOWED_ORIGIN, "private environment"],
        [evalPath("other", "api", "staging"), ALLOWED_ORIGIN, "no token bound there"],
      ];
      for (const [path, origin, what] of cases) {
        const res = await inst.api("OPTIONS", path, null, undefined, {
          origin,
          "access-control-request-method": "POST",
        });
        assertEquals(res.status, 204, what);
        assertEquals(acao(res), null, what);
        assertEquals(res.headers.get("access-control-allow-headers"), null, what);
      }
    });

    await t.step("no CORS on other endpoints, even for a client token", async () => {
      const res = await inst.api(
        "GET",
        "/api/v1/tenants/acme/namespaces/web",
        tokens.client,
        undefined,
        {
          origin: ALLOWED_ORIGIN,
        },
      );
      assertEquals(acao(res), null);
    });
  });
});

Deno.test("namespace-client rate limit per (tenant, namespace, environment, Origin)", async (t) => {
  await withFixture(["--client-rate-limit", "5"], async (f) => {
    const { inst, tokens } = f;
    const body = { flag: "theme", context: {} };
    const call = (tok: string, origin?: string, path = STAGING) =>
      inst.api("POST", path, tok, body, origin === undefined ? {} : { origin });

    await t.step("the sixth request of a minute is 429 with Retry-After", async () => {
      for (let i = 0; i < 5; i++) {
        assertEquals((await call(tokens.client, ALLOWED_ORIGIN)).status, 200, `request ${i + 1}`);
      }
      const res = await call(tokens.client, ALLOWED_ORIGIN);
      assertEnvelope(res, 429, "rate_limit_exceeded", "sixth");
      const retry = Number(res.headers.get("retry-after"));
      assert(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      assertEquals(res.body.details.retry_after, retry);
      assertEquals(res.headers.get("access-control-allow-origin"), ALLOWED_ORIGIN);
      assertEquals((await call(tokens.client, ALLOWED_ORIGIN, STAGING_ALL)).status, 429);
    });

    await t.step("the limit is per Origin and triple, not per token", async () => {
      // requests without an Origin have a bucket of their own; a token that does not list
      // the Origin it sends counts there too, whichever token it is
      assertEquals((await call(tokens.clientNoOrigins, ALLOWED_ORIGIN)).status, 200);
      for (let i = 0; i < 4; i++) assertEquals((await call(tokens.client)).status, 200);
      assertEquals((await call(tokens.client)).status, 429, "no-Origin bucket exhausted");
      // an unlisted Origin cannot open a bucket of its own
      assertEquals((await call(tokens.client, OTHER_ORIGIN)).status, 429, "unlisted Origin");
      // another triple has its own buckets
      assertEquals(
        (await call(
          tokens.clientOtherNamespace,
          ALLOWED_ORIGIN,
          evalPath("acme", "api", "staging"),
        ))
          .status,
        200,
      );
    });

    await t.step("other principals are not limited", async () => {
      for (let i = 0; i < 8; i++) {
        assertEquals((await call(tokens.read, ALLOWED_ORIGIN)).status, 200);
      }
    });
  });
});
