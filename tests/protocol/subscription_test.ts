import { assertEquals, assertThrows } from "../assert.ts";
import {
  canonicalFlagList,
  decodeSubscription,
  encodeSubscription,
  parseFlagList,
  parseNamespaceParam,
  parseResumeHints,
} from "../../lib/protocol/subscription.ts";
import { UsageError } from "../../lib/errors.ts";
import { KEY_RE } from "../../lib/flags/model.ts";
import { SLUG_PATTERN } from "../../lib/protocol/slug.ts";

Deno.test("parseFlagList() accepts * and canonicalizes keys (sorted byte-wise, no repeats)", () => {
  assertEquals(parseFlagList("*"), "*");
  assertEquals(parseFlagList("b,a,b,a-1"), ["a", "a-1", "b"]);
  assertEquals(canonicalFlagList(["z", "a", "z"]), "a,z");
});

Deno.test("parseFlagList() rejects empty lists, bad keys and * mixed with keys", () => {
  for (const bad of ["", "a,,b", "A", "a,*", "*,*", "a b", "../x"]) {
    assertThrows(() => parseFlagList(bad), UsageError, "Cannot parse flag list");
  }
});

Deno.test("encodeSubscription() is URL-safe base64 without padding of the canonical list", () => {
  assertEquals(encodeSubscription("*"), "Kg");
  assertEquals(encodeSubscription(["b", "a"]), btoa("a,b").replace(/=+$/, ""));
  const long = ["new-checkout", "dark-mode", "x.y_z"];
  const enc = encodeSubscription(long);
  assertEquals(/^[A-Za-z0-9_-]+$/.test(enc), true);
  assertEquals(decodeSubscription(enc), ["dark-mode", "new-checkout", "x.y_z"]);
});

Deno.test("decodeSubscription() rejects padding, standard base64 and non-canonical lists", () => {
  const nonCanonical = btoa("b,a").replace(/=+$/, "");
  assertThrows(() => decodeSubscription(nonCanonical), UsageError, "not canonical");
  assertThrows(() => decodeSubscription("Kg=="), UsageError);
  assertThrows(() => decodeSubscription("a+b/"), UsageError);
  assertThrows(() => decodeSubscription(btoa("a,a").replace(/=+$/, "")), UsageError);
});

Deno.test("parseNamespaceParam() reads <slug>:<flags> and <tenant>/<slug>:<flags>", () => {
  assertEquals(parseNamespaceParam("web:*"), { tenant: null, slug: "web", flags: "*" });
  assertEquals(parseNamespaceParam("acme/web:b,a"), {
    tenant: "acme",
    slug: "web",
    flags: ["a", "b"],
  });
  for (const bad of ["web", "web:", "a/b/c:*", "/web:*", "Web:*", ":*"]) {
    assertThrows(() => parseNamespaceParam(bad), UsageError);
  }
});

Deno.test("parseResumeHints() reads since lists and Last-Event-ID values", () => {
  assertEquals(parseResumeHints("web:3,acme/api:10", "since"), [
    { tenant: null, slug: "web", version: 3 },
    { tenant: "acme", slug: "api", version: 10 },
  ]);
  assertEquals(parseResumeHints("", "since"), []);
  assertThrows(() => parseResumeHints("web", "since"), UsageError, "since");
  assertThrows(() => parseResumeHints("web:-1", "since"), UsageError);
});

Deno.test("flag lists accept exactly the keys a manifest accepts (lib/flags/model.ts KEY_RE)", () => {
  const samples = [
    "a",
    "a-1",
    "x.y_z",
    "0",
    "a".repeat(63),
    "a".repeat(64),
    "A",
    "-a",
    ".a",
    "_a",
    "a b",
  ];
  for (const key of samples) {
    let accepted = true;
    try {
      parseFlagList(key);
    } catch {
      accepted = false;
    }
    assertEquals(accepted, KEY_RE.test(key), key);
  }
  assertThrows(() => parseFlagList("A"), UsageError, KEY_RE.source);
});

Deno.test("ns values accept exactly the slugs the store accepts (lib/protocol/slug.ts)", () => {
  const samples = ["web", "w.e_b-1", "0", "w".repeat(63), "w".repeat(64), "Web", "-web", "we b"];
  for (const slug of samples) {
    let accepted = true;
    try {
      parseNamespaceParam(`${slug}:*`);
    } catch {
      accepted = false;
    }
    assertEquals(accepted, SLUG_PATTERN.test(slug), slug);
  }
  assertThrows(() => parseNamespaceParam("Web:*"), UsageError, SLUG_PATTERN.source);
});
