/**
 * Webhooks on the wire (lib/protocol/webhooks.ts): how `events` patterns
 * pick entry types, how `namespaces` narrows them, and the retry schedule.
 */
import { assert, assertEquals } from "../assert.ts";
import {
  EVENT_PATTERN,
  eventMatches,
  retryDelayMs,
  WEBHOOK_MAX_ATTEMPTS,
  webhookHears,
} from "../../lib/protocol/webhooks.ts";

const TYPES = [
  "tenant.created",
  "tenant.deleted",
  "namespace.deleted",
  "manifest.pushed",
  "manifest.rolled_back",
  "token.created",
  "change_request.opened",
  "change_request.approved",
  "webhook.test",
];

/** The types a pattern picks out of {@linkcode TYPES}. */
const picked = (pattern: string) => TYPES.filter((t) => eventMatches(pattern, t));

Deno.test("a pattern without * matches its own type only", () => {
  assertEquals(picked("manifest.pushed"), ["manifest.pushed"]);
  assertEquals(picked("manifest"), []);
  assertEquals(picked("manifest.pushe"), []);
  assertEquals(picked("manifest.pushed.x"), []);
});

Deno.test("* matches any run of characters, dots included, anywhere in the pattern", () => {
  assertEquals(picked("*"), TYPES);
  assertEquals(picked("manifest.*"), ["manifest.pushed", "manifest.rolled_back"]);
  assertEquals(picked("change_request.*"), ["change_request.opened", "change_request.approved"]);
  assertEquals(picked("*.deleted"), ["tenant.deleted", "namespace.deleted"]);
  assertEquals(picked("*e*.*d"), [
    "tenant.created",
    "tenant.deleted",
    "namespace.deleted",
    "manifest.pushed",
    "token.created",
    "change_request.opened",
    "change_request.approved",
  ]);
  assertEquals(picked("t*n.*"), ["token.created"]);
  assertEquals(picked("manifest.*ed"), ["manifest.pushed"]);
  // the parts around * never overlap: "a*a" needs two a's
  assert(!eventMatches("a*a", "a"));
  assert(eventMatches("a*a", "aa"));
  assert(eventMatches("**", ""));
});

Deno.test("the pattern shape: lower-case words, dots, _ and - and *, at most 64 characters", () => {
  for (const ok of ["*", "manifest.*", "change_request.*", "*.deleted", "a-b.c_d"]) {
    assert(EVENT_PATTERN.test(ok), ok);
  }
  for (const bad of ["", ".x", "Manifest.pushed", "manifest pushed", "a/b", "é", "x".repeat(65)]) {
    assert(!EVENT_PATTERN.test(bad), bad);
  }
});

Deno.test("a webhook hears an entry whose type matches one of its events, of one of its namespaces when it names any", () => {
  const all = { events: ["manifest.*", "tenant.deleted"], namespaces: null };
  assert(webhookHears(all, { type: "manifest.pushed", namespace_slug: "web" }));
  assert(webhookHears(all, { type: "tenant.deleted", namespace_slug: null }));
  assert(!webhookHears(all, { type: "token.created", namespace_slug: "web" }));
  const web = { events: ["*"], namespaces: ["web", "api"] };
  assert(webhookHears(web, { type: "token.created", namespace_slug: "api" }));
  assert(!webhookHears(web, { type: "token.created", namespace_slug: "app" }));
  assert(!webhookHears(web, { type: "tenant.deleted", namespace_slug: null }));
});

Deno.test("retries come after 5 s, 30 s, 2 min, 10 min, 1 h and 6 h by default, scaled by the base", () => {
  const delays = Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, (_, i) => retryDelayMs(i + 1));
  assertEquals(delays, [5_000, 30_000, 120_000, 600_000, 3_600_000, 21_600_000, null]);
  assertEquals(
    Array.from({ length: 7 }, (_, i) => retryDelayMs(i + 1, 10)),
    [10, 60, 240, 1200, 7200, 43200, null],
  );
  assertEquals(WEBHOOK_MAX_ATTEMPTS, 7);
});
