import fc from "fast-check";
import { distance } from "fastest-levenshtein";
import { assertEquals } from "./assert.ts";
import { closestName, didYouMean, editDistance } from "../lib/suggest.ts";

Deno.test("closestName suggests a name one edit away", () => {
  assertEquals(closestName("eu-customer", ["beta-testers", "eu-customers"]), "eu-customers");
  assertEquals(
    closestName("securty-alerts", ["security-alerts", "incident-updates"]),
    "security-alerts",
  );
});

Deno.test("closestName suggests nothing when no name is close", () => {
  assertEquals(closestName("sec", ["security-alerts"]), undefined);
  assertEquals(closestName("payments", ["beta-testers", "eu-customers"]), undefined);
  assertEquals(closestName("x", []), undefined);
  assertEquals(closestName("x", ["a", "b"]), undefined);
  assertEquals(closestName("ab", ["ac"]), "ac");
});

Deno.test("closestName ignores case and never suggests the name itself", () => {
  assertEquals(closestName("EU-Customers", ["eu-customers"]), "eu-customers");
  assertEquals(closestName("beta", ["beta"]), undefined);
});

Deno.test("closestName prefers the nearest name, then the one that sorts first", () => {
  assertEquals(closestName("abcdef", ["abcxyz", "abcdeg"]), "abcdeg");
  assertEquals(closestName("abcdef", ["abcdez", "abcdey"]), "abcdey");
  assertEquals(closestName("abcdef", ["abcdey", "abcdez"]), "abcdey");
});

Deno.test("closestName allows about a third of a long name to differ, at most 4 edits", () => {
  assertEquals(closestName("notification-policy", ["notification-polcy"]), "notification-polcy");
  assertEquals(closestName("notification-delivery", ["notification-xxxxxxry"]), undefined);
});

Deno.test("didYouMean formats the message tail, or nothing", () => {
  assertEquals(didYouMean("eu-customer", ["eu-customers"]), '; did you mean "eu-customers"?');
  assertEquals(didYouMean("zzz", ["eu-customers"]), "");
});

Deno.test("closestName() looks for no suggestion for a name longer than any key", () => {
  // A 240 KB unknown segment name compared with every segment name held a
  // server thread for a quarter of a second a lint.
  const long = "eu-customers" + "x".repeat(240_000);
  assertEquals(closestName(long, ["eu-customers"]), undefined);
  assertEquals(closestName("eu-customerz", ["eu-customers"]), "eu-customers");
});

Deno.test("editDistance counts as fastest-levenshtein does", () => {
  const text = fc.string({
    unit: fc.constantFrom("a", "b", "A", "é", "😀", "-", "_"),
    maxLength: 12,
  });
  fc.assert(fc.property(text, text, (a, b) => editDistance(a, b) === distance(a, b)), {
    numRuns: 2000,
  });
});
