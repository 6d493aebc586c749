/**
 * The secrets of a verified-email sign-in (lib/login/email_codes.ts):
 * single use, bounded lifetime, digests only in the store, codes tied to
 * the flow that asked, five tries per flow.
 */
import { assert, assertEquals, assertMatch, assertRejects } from "../assert.ts";
import {
  issueEmailSignIn,
  MAX_CODE_ATTEMPTS,
  peekEmailLink,
  redeemEmailCode,
  redeemEmailLink,
  startEmailFlow,
} from "../../lib/login/email_codes.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { LoginError } from "../../lib/errors.ts";

const TTL = 15 * 60 * 1000;
const T0 = 1_900_000_000_000;
const GRANT = { tenant: "acme", email: "ana@acme.test", next: "/ui" };

async function world(fn: (deps: { kv: Deno.Kv; key: CryptoKey }) => Promise<void>) {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn({ kv, key: await randomTokenKey() });
  } finally {
    kv.close();
  }
}

Deno.test("a link signs in once, and its code is void after it", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { token, code } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    assertEquals(await redeemEmailLink(deps, token, T0 + 1), GRANT);
    const again = await assertRejects(() => redeemEmailLink(deps, token, T0 + 2), LoginError);
    assertEquals(again.reason, "code");
    const coded = await assertRejects(() => redeemEmailCode(deps, flow, code, T0 + 3), LoginError);
    assertEquals(coded.reason, "code");
  });
});

Deno.test("a code signs in once in its own flow, and its link is void after it", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { token, code } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    assertMatch(code, /^\d{6}$/);
    assertEquals(await redeemEmailCode(deps, flow, code, T0 + 1), GRANT);
    assertEquals(
      (await assertRejects(() => redeemEmailLink(deps, token, T0 + 2), LoginError)).reason,
      "code",
    );
    assertEquals(await peekEmailLink(deps, token, T0 + 2), null);
  });
});

Deno.test("a code does not work in another flow (another browser)", async () => {
  await world(async (deps) => {
    const mine = await startEmailFlow(deps, "acme", TTL, T0);
    const theirs = await startEmailFlow(deps, "acme", TTL, T0);
    const { code } = await issueEmailSignIn(deps, mine, GRANT, TTL, T0);
    const err = await assertRejects(() => redeemEmailCode(deps, theirs, code, T0 + 1), LoginError);
    assertEquals(err.reason, "code");
    assertEquals(
      await redeemEmailCode(deps, mine, code, T0 + 2),
      GRANT,
      "still good where it belongs",
    );
  });
});

Deno.test("without a flow (no cookie, or an unknown one) a code is refused", async () => {
  await world(async (deps) => {
    for (const flow of [undefined, "not-a-flow", "3".repeat(44)]) {
      const err = await assertRejects(() => redeemEmailCode(deps, flow, "123456", T0), LoginError);
      assertEquals(err.reason, "code");
    }
  });
});

Deno.test("link and code expire after their lifetime", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { token, code } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    assertEquals(await peekEmailLink(deps, token, T0 + TTL - 1), GRANT);
    assertEquals(await peekEmailLink(deps, token, T0 + TTL), null);
    const link = await assertRejects(() => redeemEmailLink(deps, token, T0 + TTL), LoginError);
    assertEquals(link.reason, "code");
    const coded = await assertRejects(
      () => redeemEmailCode(deps, flow, code, T0 + TTL),
      LoginError,
    );
    assertEquals(coded.reason, "code");
  });
});

Deno.test("peeking at a link does not redeem it", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { token } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    assertEquals(await peekEmailLink(deps, token, T0), GRANT);
    assertEquals(await peekEmailLink(deps, token, T0), GRANT);
    assertEquals(await redeemEmailLink(deps, token, T0), GRANT);
  });
});

Deno.test("five wrong codes lock the flow: the right code is refused after them", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { code, token } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    const wrong = code === "000000" ? "000001" : "000000";
    const left: unknown[] = [];
    for (let i = 0; i < MAX_CODE_ATTEMPTS; i++) {
      const err = await assertRejects(() => redeemEmailCode(deps, flow, wrong, T0), LoginError);
      assertEquals(err.reason, "code");
      assertEquals(err.details?.tenant, "acme");
      left.push(err.details?.attempts_left);
    }
    assertEquals(left, [4, 3, 2, 1, 0]);
    const locked = await assertRejects(() => redeemEmailCode(deps, flow, code, T0), LoginError);
    assertEquals(locked.reason, "rate");
    assertEquals(await redeemEmailLink(deps, token, T0), GRANT, "the link still works");
  });
});

Deno.test("the store holds digests: no token, code or flow secret appears in it", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const { token, code } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
    const dump: string[] = [];
    for await (const entry of deps.kv.list({ prefix: [] })) {
      dump.push(JSON.stringify([entry.key, entry.value]));
    }
    const all = dump.join("\n");
    assertEquals(dump.length, 3, all);
    for (const secret of [token, flow, code]) assert(!all.includes(secret), `${secret} stored`);
  });
});

Deno.test("codes are six digits, spread over the whole range", async () => {
  await world(async (deps) => {
    const flow = await startEmailFlow(deps, "acme", TTL, T0);
    const firsts = new Set<string>();
    for (let i = 0; i < 60; i++) {
      const { code } = await issueEmailSignIn(deps, flow, GRANT, TTL, T0);
      assertMatch(code, /^\d{6}$/);
      firsts.add(code[0]!);
    }
    assert(firsts.size >= 5, `first digits: ${[...firsts]}`);
  });
});
