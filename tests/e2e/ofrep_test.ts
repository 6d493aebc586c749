/**
 * OFREP against a real server: the real `@openfeature/ofrep-provider`
 * (0.1.3, the registry's latest, with its peer `@openfeature/ofrep-core`
 * 0.1.4) under the real `@openfeature/server-sdk` 1.23.0, run by
 * tests/e2e/ofrep_provider_probe.ts in a module graph of its own; the newer wire client of
 * `@openfeature/ofrep-core` 2.3.0 (`OFREPApi`, what the repository's
 * providers use); and raw requests for every error code, ETag/304 and the
 * event stream (with Deno's `EventSource`), across two server processes.
 * OFREP, `…/evaluate` and FlagClient's local engine answer the `before` and
 * `after` operators alike.
 */
import { OFREPApi } from "npm:@openfeature/ofrep-core@2.3.0";
import { assert, assertEquals, assertMatch } from "../assert.ts";
import { startServer } from "./server_process.ts";
import { FlagClient } from "../../lib/client/flag_client.ts";
import { waitFor } from "../client/fixture.ts";
import {
  ALLOWED_ORIGIN,
  evalPath,
  type Fixture,
  manifestFiles,
  OTHER_ORIGIN,
  startFixture,
} from "./evaluation_fixture.ts";

const BULK = "/ofrep/v1/evaluate/flags";
const single = (key: string) => `/ofrep/v1/evaluate/flags/${key}`;
const WEB = {
  "x-cfgtool-tenant": "acme",
  "x-cfgtool-namespace": "web",
  "x-cfgtool-environment": "staging",
};

async function withFixture(args: string[], fn: (f: Fixture) => Promise<void>): Promise<void> {
  const f = await startFixture(args);
  try {
    await fn(f);
  } finally {
    await f.inst.close();
  }
}

/** A raw OFREP request: status, headers and the body text. */
async function ofrep(
  f: Fixture,
  path: string,
  token: string | null,
  body: string | unknown,
  headers: Record<string, string> = {},
): Promise<
  { status: number; headers: Headers; text: string; json: () => Record<string, unknown> }
> {
  const h = new Headers({ "content-type": "application/json", ...headers });
  if (token !== null) h.set("authorization", `Bearer ${token}`);
  const res = await fetch(`${f.inst.url}${path}`, {
    method: "POST",
    headers: h,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) };
}

function themeFlag(defaultVariation: string, betaRule = false): string {
  return `schema_version = 1
description = "Theme"
type = "string"
default = "${defaultVariation}"
[variations]
light = "light"
dark = "dark"
[[rule]]
segment = "staff"
variation = "dark"
${betaRule ? '[[rule]]\nsegment = "beta"\nvariation = "dark"\n' : ""}`;
}

Deno.test("the real @openfeature/ofrep-provider and server-sdk evaluate through cfgtool", async () => {
  await withFixture([], async (f) => {
    const probe = new URL("./ofrep_provider_probe.ts", import.meta.url).pathname;
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--no-config",
        "--no-lock",
        probe,
        f.inst.url,
        f.tokens.read,
        f.tokens.client,
        f.tokens.clientProduction,
      ],
      stdout: "piped",
      stderr: "piped",
      env: { NO_COLOR: "1" },
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assertEquals(out.code, 0, stderr);
    const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!);
    const ok = (value: unknown, reason: string, variant: string | null) => ({
      value,
      reason,
      variant,
      errorCode: null,
    });
    assertEquals(r.staffCheckout, ok(true, "TARGETING_MATCH", "on"));
    assertEquals(r.staffTheme, ok("dark", "TARGETING_MATCH", "dark"));
    assertEquals(r.plainTheme, ok("light", "DEFAULT", "light"));
    assertEquals(r.cartLimit.reason, "SPLIT");
    assert(r.cartLimit.value === 10 || r.cartLimit.value === 50, JSON.stringify(r.cartLimit));
    assertEquals(r.banner, ok({ show: false }, "DEFAULT", "none"));
    assertEquals([r.missing.value, r.missing.reason, r.missing.errorCode], [
      true,
      "ERROR",
      "FLAG_NOT_FOUND",
    ]);
    assertEquals([r.mismatch.value, r.mismatch.errorCode], [7, "TYPE_MISMATCH"]);
    assertEquals(r.emptyTargetingKey.errorCode, "TARGETING_KEY_MISSING");
    assertEquals(r.clientBeta, ok(true, "TARGETING_MATCH", "on"));
    assertEquals([r.privateClient.value, r.privateClient.reason], [true, "ERROR"]);
  });
});

Deno.test("ofrep-core 2.3.0 OFREPApi (the repository's wire client) against cfgtool", async () => {
  await withFixture([], async (f) => {
    const api = new OFREPApi({
      baseUrl: f.inst.url,
      headers: [["Authorization", `Bearer ${f.tokens.client}`]],
    });
    const one = await api.postEvaluateFlag("theme", {
      context: { targetingKey: "u-1", user: { email: "a@example.com" } },
    });
    assertEquals(one.httpStatus, 200);
    assertEquals(one.value, {
      key: "theme",
      value: "dark",
      reason: "TARGETING_MATCH",
      variant: "dark",
      metadata: { version: 1, ruleIndex: 0 },
    });
    const notFound = await api.postEvaluateFlag("nope", { context: {} });
    assertEquals(notFound.httpStatus, 404);
    assertEquals((notFound.value as { errorCode: string }).errorCode, "FLAG_NOT_FOUND");
    const bulk = await api.postBulkEvaluateFlags({ context: { targetingKey: "u-1" } });
    assertEquals(bulk.httpStatus, 200);
    const etag = bulk.httpResponse!.headers.get("etag");
    assert(etag !== null);
    const again = await api.postBulkEvaluateFlags({ context: { targetingKey: "u-1" } }, etag);
    assertEquals(again.httpStatus, 304);
    api.close();
  });
});

Deno.test("OFREP wire format, error codes and ETag through a real server", async (t) => {
  await withFixture([], async (f) => {
    const { tokens } = f;

    await t.step("single flag: 200 {key, value, reason, variant, metadata}", async () => {
      const res = await ofrep(f, single("new-checkout"), tokens.client, {
        context: { user: { beta: true } },
      });
      assertEquals(res.status, 200, res.text);
      assertMatch(res.headers.get("content-type")!, /^application\/json/);
      assertEquals(res.json(), {
        key: "new-checkout",
        value: true,
        reason: "TARGETING_MATCH",
        variant: "on",
        metadata: { version: 1, ruleIndex: 0 },
      });
      const empty = await ofrep(f, single("theme"), tokens.client, "");
      assertEquals([empty.status, empty.json().value], [200, "light"]);
    });

    await t.step("targetingKey is the targeting_key of rollouts", async () => {
      const seen = new Set<unknown>();
      for (let i = 0; i < 20; i++) {
        const key = `user-${i}`;
        const o = await ofrep(f, single("cart-limit"), tokens.client, {
          context: { targetingKey: key },
        });
        const native = await f.inst.api("POST", evalPath("acme", "web", "staging"), tokens.client, {
          flag: "cart-limit",
          context: { targeting_key: key },
        });
        assertEquals(o.json().value, native.body.value, key);
        assertEquals(o.json().reason, "SPLIT");
        seen.add(o.json().value);
      }
      assertEquals(seen.size, 2, "both variations of the 50/50 rollout are served");
    });

    await t.step("bulk: 200 {flags: [...]} in key order with an ETag", async () => {
      const res = await ofrep(f, BULK, tokens.read, { context: { targetingKey: "u-1" } }, WEB);
      assertEquals(res.status, 200, res.text);
      const body = res.json() as { flags: { key: string }[]; eventStreams?: unknown };
      assertEquals(body.flags.map((x) => x.key), ["banner", "cart-limit", "new-checkout", "theme"]);
      assertEquals(body.eventStreams, undefined, "no event stream for non-client tokens");
      assertMatch(res.headers.get("etag")!, /^"[0-9a-f]{16}"$/);
      assertEquals(res.headers.get("x-cfgtool-version"), "1");
    });

    await t.step(
      "errors 400: PARSE_ERROR, INVALID_CONTEXT, TARGETING_KEY_MISSING, GENERAL",
      async () => {
        const cases: [string, string | unknown, string, Record<string, string>?][] = [
          ["body not JSON", "{oops", "PARSE_ERROR"],
          ["body an array", "[1]", "PARSE_ERROR"],
          ["context an array", { context: [1] }, "INVALID_CONTEXT"],
          ["context a string", { context: "x" }, "INVALID_CONTEXT"],
          ["context too large", { context: { a: "x".repeat(33 * 1024) } }, "INVALID_CONTEXT"],
          ["body over 64 KiB", { context: { a: "x".repeat(70 * 1024) } }, "INVALID_CONTEXT"],
          ["targetingKey a number", { context: { targetingKey: 5 } }, "INVALID_CONTEXT"],
          ["targetingKey empty", { context: { targetingKey: "" } }, "TARGETING_KEY_MISSING"],
        ];
        let deep: Record<string, unknown> = {};
        for (let i = 0; i < 12; i++) deep = { d: deep };
        cases.push(["context too deep", { context: deep }, "INVALID_CONTEXT"]);
        for (const [what, body, code] of cases) {
          const s = await ofrep(f, single("theme"), tokens.client, body);
          assertEquals(s.status, 400, `${what}: ${s.text}`);
          assertEquals(s.json().key, "theme", what);
          assertEquals(s.json().errorCode, code, what);
          assertEquals(typeof s.json().errorDetails, "string", what);
          const b = await ofrep(f, BULK, tokens.client, body);
          assertEquals(b.status, 400, `${what} (bulk): ${b.text}`);
          assertEquals(b.json().errorCode, code, `${what} (bulk)`);
          assertEquals(b.json().key, undefined, `${what} (bulk)`);
        }
        const noHeaders = await ofrep(f, BULK, tokens.read, { context: {} });
        assertEquals([noHeaders.status, noHeaders.json().errorCode], [400, "GENERAL"]);
        assertMatch(String(noHeaders.json().errorDetails), /X-Cfgtool-Tenant/);
      },
    );

    await t.step("errors 404: FLAG_NOT_FOUND; unknown namespace or environment", async () => {
      const res = await ofrep(f, single("nope"), tokens.client, { context: {} });
      assertEquals(res.status, 404);
      assertEquals(res.json().key, "nope");
      assertEquals(res.json().errorCode, "FLAG_NOT_FOUND");
      const env = await ofrep(f, BULK, tokens.read, {}, { ...WEB, "x-cfgtool-environment": "qa" });
      assertEquals([env.status, env.json().errorCode], [404, "GENERAL"]);
      assertMatch(String(env.json().errorDetails), /environment qa/);
      const ns = await ofrep(f, single("theme"), f.inst.admin, {}, {
        ...WEB,
        "x-cfgtool-namespace": "nope",
      });
      assertEquals([ns.status, ns.json().errorCode], [404, "FLAG_NOT_FOUND"]);
    });

    await t.step("errors 401 and 403 have no body", async () => {
      const cases: [string | null, Record<string, string>, number, string][] = [
        [null, {}, 401, "no credential"],
        ["svc_read_" + "1".repeat(44), WEB, 401, "unknown token"],
        [tokens.clientProduction, {}, 403, "client of a private environment"],
        [
          tokens.client,
          { "x-cfgtool-environment": "production" },
          403,
          "client naming another env",
        ],
        [tokens.client, { "x-cfgtool-namespace": "api" }, 403, "client naming another namespace"],
        [tokens.readOtherNamespace, WEB, 403, "read token of another namespace"],
        [tokens.read, { ...WEB, "x-cfgtool-tenant": "other" }, 403, "read token, other tenant"],
      ];
      for (const [tok, headers, status, what] of cases) {
        for (const path of [BULK, single("theme")]) {
          const res = await ofrep(f, path, tok, { context: {} }, headers);
          assertEquals(res.status, status, `${what} ${path}: ${res.text}`);
          assertEquals(res.text, "", `${what}: no body`);
        }
      }
    });

    await t.step("ETag: 304 while this context's results stay, 200 when they change", async () => {
      const ctx = { context: { targetingKey: "u-9", user: { email: "bo@corp.test" } } };
      const first = await ofrep(f, BULK, tokens.client, ctx);
      const etag = first.headers.get("etag")!;
      const again = await ofrep(f, BULK, tokens.client, ctx, { "if-none-match": etag });
      assertEquals([again.status, again.text], [304, ""]);
      assertEquals(again.headers.get("etag"), etag);
      const other = await ofrep(f, BULK, tokens.client, {
        context: { targetingKey: "u-9", user: { beta: true } },
      });
      assert(other.headers.get("etag") !== etag, "another context, other results, other ETag");

      // a push that does not change what this context gets keeps the ETag
      const v2 = await f.push(manifestFiles({ "flags/theme.toml": themeFlag("light", true) }));
      assertEquals(v2.status, 201);
      const same = await ofrep(f, BULK, tokens.client, ctx, { "if-none-match": etag });
      assertEquals(same.status, 304, "unchanged results after a push");
      assertEquals(same.headers.get("x-cfgtool-version"), String(v2.body.version));
      // …but the beta context's results changed
      const beta = await ofrep(f, BULK, tokens.client, {
        context: { targetingKey: "u-9", user: { beta: true } },
      }, {
        "if-none-match": other.headers.get("etag")!,
      });
      assertEquals(beta.status, 200, "beta users now get the dark theme");

      // a push that changes this context's results changes the ETag
      await f.push(manifestFiles({ "flags/theme.toml": themeFlag("dark", true) }));
      const changed = await ofrep(f, BULK, tokens.client, ctx, { "if-none-match": etag });
      assertEquals(changed.status, 200);
      assert(changed.headers.get("etag") !== etag);
      const theme = (changed.json().flags as { key: string; value: unknown }[])
        .find((x) => x.key === "theme");
      assertEquals(theme?.value, "dark");
    });

    await t.step("CORS: allowed Origin of a client token only; preflight", async () => {
      const ok = await ofrep(f, BULK, tokens.client, {}, { origin: ALLOWED_ORIGIN });
      assertEquals(ok.headers.get("access-control-allow-origin"), ALLOWED_ORIGIN);
      assertMatch(ok.headers.get("access-control-expose-headers")!, /ETag/);
      const notModified = await ofrep(f, BULK, tokens.client, {}, {
        origin: ALLOWED_ORIGIN,
        "if-none-match": ok.headers.get("etag")!,
      });
      assertEquals(notModified.status, 304);
      assertEquals(notModified.headers.get("access-control-allow-origin"), ALLOWED_ORIGIN);
      for (
        const [tok, origin, headers] of [
          [tokens.client, OTHER_ORIGIN, {}],
          [tokens.read, ALLOWED_ORIGIN, WEB],
        ] as const
      ) {
        const res = await ofrep(f, BULK, tok, {}, { origin, ...headers });
        assertEquals(res.status, 200);
        assertEquals(res.headers.get("access-control-allow-origin"), null);
      }
      for (const path of [BULK, single("theme")]) {
        const pre = await fetch(`${f.inst.url}${path}`, {
          method: "OPTIONS",
          headers: {
            origin: ALLOWED_ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization,content-type,if-none-match",
          },
        });
        await pre.body?.cancel();
        assertEquals(pre.status, 204);
        assertEquals(pre.headers.get("access-control-allow-origin"), ALLOWED_ORIGIN);
        assertEquals(
          pre.headers.get("access-control-allow-headers"),
          "Authorization, Content-Type, If-None-Match",
        );
        const refused = await fetch(`${f.inst.url}${path}`, {
          method: "OPTIONS",
          headers: { origin: OTHER_ORIGIN, "access-control-request-method": "POST" },
        });
        await refused.body?.cancel();
        assertEquals(refused.headers.get("access-control-allow-origin"), null);
      }
    });
  });
});

Deno.test("before and after: OFREP, /evaluate and the SDK's local engine give the same answers", async () => {
  await withFixture([], async (f) => {
    const pushed = await f.push(manifestFiles({
      "segments/new-users.toml": `schema_version = 1
[[predicate]]
attribute = "user.created_at"
op = "after"
value = "2026-01-01T00:00:00Z"
`,
      "segments/trial.toml": `schema_version = 1
[[predicate]]
attribute = "account.trial_ends"
op = "before"
value = 2026-07-01
`,
      "flags/welcome-tour.toml": `schema_version = 1
type = "string"
default = "none"
[variations]
none = "none"
tour = "tour"
upgrade = "upgrade"
[[rule]]
segment = "trial"
variation = "upgrade"
[[rule]]
segment = "new-users"
variation = "tour"
`,
    }));
    const version = pushed.body.version as number;
    const client = new FlagClient({
      server: f.inst.url,
      token: f.tokens.read,
      namespaces: ["web:welcome-tour"],
      readyTimeoutMs: 10_000,
    });
    try {
      await client.ready();
      await waitFor(() => client.closure("web")?.version === version, `version ${version}`);
      const contexts: [Record<string, unknown>, string][] = [
        [{ user: { created_at: "2026-01-01T00:00:00.001Z" } }, "tour"],
        [{ user: { created_at: "2026-01-01T01:00:00+01:00" } }, "none"], // the same instant
        [{ user: { created_at: "2026-01-01" } }, "none"], // midnight UTC: the same instant
        [{ user: { created_at: "2026-01-02" } }, "tour"],
        [{ user: { created_at: "2025-12-31T23:59:59.999Z" } }, "none"],
        [{ user: { created_at: "2026-03-01T00:00:00" } }, "none"], // no zone
        [{ user: { created_at: "2026-02-30" } }, "none"],
        [{ user: { created_at: 1767225600001 } }, "none"],
        [{ user: { created_at: null } }, "none"],
        [{ account: { trial_ends: "2026-06-30T23:59:59.999Z" } }, "upgrade"],
        [{ account: { trial_ends: "2026-07-01T02:00:00+02:00" } }, "none"],
        [{
          user: { created_at: "2026-02-01T12:00:00-08:00" },
          account: { trial_ends: "2026-05-01" },
        }, "upgrade"],
        [{ user: { created_at: "2016-12-31T23:59:60Z" } }, "none"],
      ];
      for (const [context, want] of contexts) {
        const what = JSON.stringify(context);
        const local = client.evaluate("web", "staging", "welcome-tour", context);
        const remote = await f.inst.api(
          "POST",
          evalPath("acme", "web", "staging"),
          f.tokens.read,
          { flag: "welcome-tour", context },
        );
        assertEquals(remote.status, 200, what);
        const wire = await ofrep(f, single("welcome-tour"), f.tokens.read, { context }, WEB);
        assertEquals(wire.status, 200, `${what}: ${wire.text}`);
        const o = wire.json() as { value: unknown; variant: unknown; reason: unknown };
        assertEquals(local.variation, want, what);
        assertEquals(
          [remote.body.value, remote.body.variation, remote.body.reason, remote.body.version],
          [local.value, local.variation, local.reason, local.version],
          what,
        );
        assertEquals([o.value, o.variant, o.reason], [local.value, local.variation, local.reason]);
      }
    } finally {
      await client.close();
    }
  });
});

Deno.test("OFREP 429 carries Retry-After and no body", async () => {
  await withFixture(["--client-rate-limit", "3"], async (f) => {
    for (let i = 0; i < 3; i++) {
      assertEquals((await ofrep(f, BULK, f.tokens.client, {})).status, 200);
    }
    const res = await ofrep(f, single("theme"), f.tokens.client, {});
    assertEquals([res.status, res.text], [429, ""]);
    const retry = Number(res.headers.get("retry-after"));
    assert(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  });
});

/** Reads SSE events from a `fetch` body until `count` data events arrived. */
class SseReader {
  #reader: ReadableStreamDefaultReader<string>;
  #buffer = "";
  events: { id?: string; data: Record<string, unknown> }[] = [];
  constructor(body: ReadableStream<Uint8Array<ArrayBuffer>>) {
    this.#reader = body.pipeThrough(new TextDecoderStream()).getReader();
  }
  async next(timeoutMs = 5000): Promise<{ id?: string; data: Record<string, unknown> } | null> {
    const deadline = Date.now() + timeoutMs;
    while (true) {
      const sep = this.#buffer.indexOf("\n\n");
      if (sep !== -1) {
        const block = this.#buffer.slice(0, sep);
        this.#buffer = this.#buffer.slice(sep + 2);
        const lines = block.split("\n");
        const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (data === "") continue;
        const id = lines.find((l) => l.startsWith("id: "))?.slice(4);
        const ev = id === undefined ? { data: JSON.parse(data) } : { id, data: JSON.parse(data) };
        this.events.push(ev);
        return ev;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE event within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([
        this.#reader.read(),
        new Promise<"timeout">((res) => timer = setTimeout(() => res("timeout"), left)),
      ]);
      clearTimeout(timer);
      if (r === "timeout") throw new Error(`no SSE event within ${timeoutMs} ms`);
      if (r.done) return null;
      this.#buffer += r.value;
    }
  }
  async close(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
  }
}

Deno.test("OFREP push: eventStreams, refetchEvaluation on a push, across two processes", async (t) => {
  await withFixture(["--head-poll-ms", "50"], async (f) => {
    const bulk = await ofrep(f, BULK, f.tokens.client, {}, { origin: ALLOWED_ORIGIN });
    const streams = bulk.json().eventStreams as { type: string; url: string }[];

    await t.step("the bulk response of a client token advertises one SSE stream", () => {
      assertEquals(streams.length, 1);
      assertEquals(streams[0]!.type, "sse");
      const url = new URL(streams[0]!.url);
      assertEquals(url.origin, f.inst.url);
      assertEquals(url.pathname, "/ofrep/v1/event-stream");
      assertEquals(url.searchParams.get("token"), f.tokens.client);
    });

    await t.step("the stream refuses bad credentials without a body", async () => {
      for (
        const [q, status] of [
          ["", 401],
          [`?token=${f.tokens.read}`, 403],
          [`?token=${f.tokens.clientProduction}`, 403],
        ] as const
      ) {
        const res = await fetch(`${f.inst.url}/ofrep/v1/event-stream${q}`);
        assertEquals([res.status, await res.text()], [status, ""], q);
      }
    });

    const res = await fetch(streams[0]!.url, { headers: { origin: ALLOWED_ORIGIN } });
    const sse = new SseReader(res.body!);
    try {
      await t.step("it opens with CORS headers and one refetchEvaluation", async () => {
        assertEquals(res.status, 200);
        assertMatch(res.headers.get("content-type")!, /^text\/event-stream/);
        assertEquals(res.headers.get("access-control-allow-origin"), ALLOWED_ORIGIN);
        const first = await sse.next();
        assertEquals(first?.id, "1");
        assertEquals(first?.data.type, "refetchEvaluation");
        assertMatch(String(first?.data.etag), /^"v1-sha256:[0-9a-f]{64}"$/);
      });

      await t.step("a push sends refetchEvaluation with the new configuration ETag", async () => {
        const pushed = await f.push(manifestFiles({ "flags/theme.toml": themeFlag("dark") }));
        const ev = await sse.next();
        assertEquals(ev?.id, String(pushed.body.version));
        assertEquals(ev?.data, {
          type: "refetchEvaluation",
          etag: `"v${pushed.body.version}-${pushed.body.closure_hash}"`,
        });
        const refetch = await ofrep(
          f,
          `${BULK}?flagConfigEtag=${encodeURIComponent(String(ev?.data.etag))}`,
          f.tokens.client,
          {},
          { "if-none-match": bulk.headers.get("etag")! },
        );
        assertEquals(refetch.status, 200);
        assertEquals(refetch.headers.get("x-cfgtool-version"), String(pushed.body.version));
      });

      await t.step(
        "another process on the same KV pushes; this stream still hears it",
        async () => {
          const second = await startServer({ kv: f.inst.kvPath, args: ["--head-poll-ms", "50"] });
          try {
            const res2 = await fetch(`${second.url}${BULK}`, {
              method: "POST",
              headers: { authorization: `Bearer ${f.tokens.write}`, ...WEB },
              body: "{}",
            });
            await res2.body?.cancel();
            const pushed = await fetch(
              `${second.url}/api/v1/tenants/acme/namespaces/web/manifest`,
              {
                method: "PUT",
                headers: {
                  authorization: `Bearer ${f.inst.admin}`,
                  "content-type": "application/json",
                },
                body: JSON.stringify(manifestFiles({ "flags/theme.toml": themeFlag("light") })),
              },
            ).then((r) => r.json());
            const ev = await sse.next(5000);
            assertEquals(ev?.id, String(pushed.version));
            // the refetch names the version, so even a process that has not polled yet answers it
            const refetch = await ofrep(
              f,
              `${BULK}?flagConfigEtag=${encodeURIComponent(String(ev?.data.etag))}`,
              f.tokens.client,
              {},
            );
            assertEquals(refetch.headers.get("x-cfgtool-version"), String(pushed.version));
          } finally {
            await second.stop();
          }
        },
      );

      await t.step("making the environment private ends the stream", async () => {
        await f.push(manifestFiles({}, false));
        let ended = false;
        for (let i = 0; i < 5 && !ended; i++) ended = (await sse.next(5000)) === null;
        assert(ended, "stream ended");
      });
    } finally {
      await sse.close();
    }
  });
});

Deno.test("OFREP event stream with Deno's EventSource and Last-Event-ID", async () => {
  await withFixture([], async (f) => {
    const bulk = await ofrep(f, BULK, f.tokens.client, {});
    const url = (bulk.json().eventStreams as { url: string }[])[0]!.url;
    const got: MessageEvent[] = [];
    let notify = () => {};
    const es = new EventSource(url);
    es.onmessage = (e) => {
      got.push(e);
      notify();
    };
    const waitFor = (n: number) =>
      new Promise<void>((res, rej) => {
        const timer = setTimeout(
          () => rej(new Error(`got ${got.length} events, wanted ${n}`)),
          5000,
        );
        notify = () => {
          if (got.length >= n) {
            clearTimeout(timer);
            res();
          }
        };
        notify();
      });
    try {
      await waitFor(1);
      assertEquals(got[0]!.lastEventId, "1");
      const pushed = await f.push(manifestFiles({ "flags/theme.toml": themeFlag("dark") }));
      await waitFor(2);
      assertEquals(JSON.parse(got[1]!.data).type, "refetchEvaluation");
      assertEquals(got[1]!.lastEventId, String(pushed.body.version));
    } finally {
      es.close();
    }
    // a reconnect that already saw the current version gets no replay
    const res = await fetch(url, { headers: { "last-event-id": "2" } });
    const sse = new SseReader(res.body!);
    try {
      let error = "";
      try {
        await sse.next(300);
      } catch (e) {
        error = (e as Error).message;
      }
      assertMatch(error, /no SSE event/);
    } finally {
      await sse.close();
    }
  });
});
