/**
 * lib/relay/verdicts.ts with a fake upstream and a fake clock: how long a
 * verdict and a refusal count, the offline grace, and what is kept on disk
 * (by the token's digest, never the token, written atomically, refused
 * when it does not read back).
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  MAX_CHECKS_IN_FLIGHT,
  MAX_REFUSALS,
  VerdictCache,
  type VerdictCacheOptions,
} from "../../lib/relay/verdicts.ts";
import { UpstreamUnavailableError } from "../../lib/relay/errors.ts";
import { generateToken } from "../../lib/auth/token_format.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import { ForbiddenError, UnauthorizedError } from "../../lib/errors.ts";

const TOKEN = generateToken("namespace-read");
const OTHER = generateToken("tenant-admin");

function me(expiresAt: string | null = null) {
  return {
    principal: {
      type: "service",
      token: {
        id: "tok_1",
        type: "namespace-read",
        tenant_slug: "acme",
        namespace_slug: "web",
        environment_slug: null,
        allowed_origins: [],
        status: "active",
        expires_at: expiresAt,
      },
    },
  };
}

/** An upstream whose answer the test sets, counting calls; and a clock the test moves. */
function world(extra: Partial<VerdictCacheOptions> = {}) {
  const w = {
    now: 1_000_000,
    calls: 0,
    answer: (): Promise<Response> => Promise.resolve(Response.json(me())),
    warnings: [] as string[],
  };
  const cache = new VerdictCache({
    upstream: "http://primary.example",
    ttlMs: 30_000,
    refusalTtlMs: 5_000,
    offlineGraceMs: 3_600_000,
    fetch: (() => {
      w.calls++;
      return w.answer();
    }) as typeof fetch,
    now: () => w.now,
    log: (level, msg) => {
      if (level === "warn") w.warnings.push(msg);
    },
    ...extra,
  });
  return { w, cache };
}

const down = () => Promise.reject(new TypeError("connection refused"));

Deno.test("a verdict counts for the TTL, then the upstream is asked again", async () => {
  const { w, cache } = world();
  assertEquals((await cache.check(TOKEN)).id, "tok_1");
  w.now += 29_999;
  await cache.check(TOKEN);
  assertEquals(w.calls, 1);
  w.now += 1;
  await cache.check(TOKEN);
  assertEquals(w.calls, 2);
});

Deno.test("concurrent checks of one token share one upstream call", async () => {
  const { w, cache } = world();
  await Promise.all(Array.from({ length: 20 }, () => cache.check(TOKEN)));
  assertEquals(w.calls, 1);
});

Deno.test("a refusal counts for the refusal TTL, with the upstream's words and status", async () => {
  const { w, cache } = world();
  w.answer = () =>
    Promise.resolve(
      Response.json({ code: "unauthorized", message: "Token revoked" }, { status: 401 }),
    );
  const err = await assertRejects(() => cache.check(TOKEN), UnauthorizedError);
  assertEquals(err.message, "Token revoked");
  w.answer = () => Promise.resolve(Response.json(me()));
  w.now += 4_999;
  await assertRejects(() => cache.check(TOKEN), UnauthorizedError);
  assertEquals(w.calls, 1);
  w.now += 1;
  assertEquals((await cache.check(TOKEN)).id, "tok_1", "asked again after the refusal TTL");
  assertEquals(w.calls, 2);
  w.answer = () => Promise.resolve(Response.json({ message: "Not yours" }, { status: 403 }));
  await assertRejects(() => cache.check(OTHER), ForbiddenError);
});

Deno.test("upstream down: a verdict within the offline grace counts, then 503", async () => {
  const { w, cache } = world();
  await cache.check(TOKEN);
  w.answer = down;
  w.now += 3_599_999; // past the TTL, within the grace
  assertEquals((await cache.check(TOKEN)).id, "tok_1");
  w.now += 1;
  const err = await assertRejects(() => cache.check(TOKEN), UpstreamUnavailableError);
  assertEquals([err.code, err.status], ["upstream_unavailable", 503]);
  // a 5xx is "no answer" too; a token never seen is never served blind
  w.answer = () => Promise.resolve(new Response("oops", { status: 502 }));
  await assertRejects(() => cache.check(OTHER), UpstreamUnavailableError);
});

Deno.test("upstream down: a refusal stays a refusal", async () => {
  const { w, cache } = world();
  w.answer = () => Promise.resolve(Response.json({ message: "Revoked" }, { status: 401 }));
  await assertRejects(() => cache.check(TOKEN), UnauthorizedError);
  w.answer = down;
  w.now += 60_000;
  await assertRejects(() => cache.check(TOKEN), UnauthorizedError);
});

Deno.test("a token past its expiry is refused whatever the cache holds", async () => {
  const { w, cache } = world();
  w.answer = () => Promise.resolve(Response.json(me(new Date(w.now + 10_000).toISOString())));
  await cache.check(TOKEN);
  w.now += 10_000;
  await assertRejects(() => cache.check(TOKEN), UnauthorizedError, "expired");
  // sessions and garbage are refused without asking anyone
  const calls = w.calls;
  await assertRejects(() => cache.check("ses_abc"), UnauthorizedError);
  await assertRejects(() => cache.check("garbage"), UnauthorizedError);
  assertEquals(w.calls, calls);
});

Deno.test("kept on disk by digest, never the token; read back within the grace after a restart", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-verdicts-" });
  try {
    const { w, cache } = world({ dataDir: dir });
    await cache.check(TOKEN);
    await cache.check(OTHER);
    await cache.flush();
    const names = [...Deno.readDirSync(dir)].map((e) => e.name);
    assertEquals(names, ["verdicts.json"], "no temporary file left behind");
    const text = await Deno.readTextFile(`${dir}/verdicts.json`);
    assert(!text.includes(TOKEN) && !text.includes(OTHER), "no token on disk");
    const digests = Object.keys(JSON.parse(text)).sort();
    const want = (await Promise.all([TOKEN, OTHER].map((t) =>
      sha256Hex(new TextEncoder().encode(t))
    ))).sort();
    assertEquals(digests, want);
    assertEquals((await Deno.stat(`${dir}/verdicts.json`)).mode! & 0o077, 0);

    // a restarted relay whose upstream is down serves the clients it knew, within the grace
    const again = world({ dataDir: dir });
    again.w.now = w.now + 60_000;
    again.w.answer = down;
    assertEquals(await again.cache.load(), 2);
    assertEquals((await again.cache.check(TOKEN)).id, "tok_1");
    const late = world({ dataDir: dir });
    late.w.now = w.now + 3_600_000;
    assertEquals(await late.cache.load(), 0, "past the grace: nothing loaded");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refusal of a known token removes it from disk", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-verdicts-" });
  try {
    const { w, cache } = world({ dataDir: dir });
    await cache.check(TOKEN);
    await cache.flush();
    w.now += 30_000;
    w.answer = () => Promise.resolve(Response.json({ message: "Revoked" }, { status: 401 }));
    await assertRejects(() => cache.check(TOKEN), UnauthorizedError);
    await new Promise((r) => setTimeout(r, 150)); // the save is batched
    await cache.flush();
    assertEquals(JSON.parse(await Deno.readTextFile(`${dir}/verdicts.json`)), {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a corrupted verdicts file is refused on load, with a warning", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-verdicts-" });
  try {
    const digest = await sha256Hex(new TextEncoder().encode(TOKEN));
    for (
      const [text, warned] of [
        ['{"' + digest + '": {"verdict": ', true], // cut short
        "\u0000\u0001garbage",
        JSON.stringify({ "not-a-digest": { verdict: {}, confirmedAt: 1_000_000 } }),
        JSON.stringify({ [digest]: { verdict: { id: 7 }, confirmedAt: 1_000_000 } }),
        JSON.stringify({ [digest]: { verdict: me().principal, confirmedAt: "yesterday" } }),
      ].map((x) => Array.isArray(x) ? x : [x, null])
    ) {
      await Deno.writeTextFile(`${dir}/verdicts.json`, text as string);
      const { w, cache } = world({ dataDir: dir });
      w.answer = down;
      assertEquals(await cache.load(), 0, String(text).slice(0, 40));
      await assertRejects(() => cache.check(TOKEN), UpstreamUnavailableError);
      if (warned === true) {
        assert(w.warnings.some((m) => m.includes("cannot read the kept token verdicts")));
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("made-up tokens cannot grow the cache without end, nor crowd out a known token", async () => {
  const { w, cache } = world();
  await cache.check(TOKEN); // a real client, known
  w.answer = () =>
    Promise.resolve(Response.json({ code: "unauthorized", message: "Unknown" }, { status: 401 }));
  const junk = MAX_REFUSALS + 2_000;
  for (let i = 0; i < junk; i++) {
    await assertRejects(() => cache.check(generateToken("namespace-read")), UnauthorizedError);
  }
  assertEquals(cache.size, MAX_REFUSALS + 1, "the refusals are bounded; the known token stays");
  // the upstream goes away: the known client is still served within the grace
  w.answer = down;
  w.now += 60_000;
  assertEquals((await cache.check(TOKEN)).id, "tok_1");
});

Deno.test("at most a bounded number of token checks run against the upstream at once", async () => {
  let running = 0;
  let most = 0;
  const { w, cache } = world();
  w.answer = async () => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return Response.json(me());
  };
  await Promise.all(
    Array.from(
      { length: MAX_CHECKS_IN_FLIGHT * 3 },
      () => cache.check(generateToken("namespace-read")),
    ),
  );
  assertEquals(most, MAX_CHECKS_IN_FLIGHT);
  assertEquals(w.calls, MAX_CHECKS_IN_FLIGHT * 3);
});
