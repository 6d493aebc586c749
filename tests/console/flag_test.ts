/**
 * One flag and one segment (lib/console/flag.tsx): the rules in order
 * with nested segments expanded, rollouts as weight bars, environment
 * overrides, change links only for people who may change the manifest,
 * the segment's users, and the door in front of both pages.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { consoleTest, FIXTURE } from "./world.ts";

// deno-lint-ignore no-explicit-any
const text = (el: any): string => (el?.textContent ?? "").replace(/\s+/g, " ").trim();

/** A table's body rows, each as its cells' text joined by spaces. */
// deno-lint-ignore no-explicit-any
function rows(doc: any, table: string): string[] {
  return [...doc.querySelectorAll(`${table} tbody tr`)].map((r) =>
    // deno-lint-ignore no-explicit-any
    [...r.querySelectorAll("th, td")].map((cell: any) => text(cell)).join(" ")
  );
}

consoleTest("the flag page shows the rules in order with nested segments expanded", async (w) => {
  const res = await w.page("/ui/t/acme/ns/web/flags/new-checkout?env=production", w.member);
  assertEquals(res.status, 200, res.text);
  const { doc } = res;
  assertStringIncludes(text(doc.querySelector("main")), "New checkout flow");
  assertStringIncludes(text(doc.querySelector(".facts")), "boolean");
  const variations = rows(doc, "#variations");
  assertEquals(variations, ["on true", "off default false"]);

  const rules = [...doc.querySelectorAll("#rules > li")];
  assertEquals(rules.length, 2);
  assertStringIncludes(text(rules[0]), "Rule 1");
  assertStringIncludes(text(rules[0]), "beta-testers");
  assertStringIncludes(text(rules[0]), "user.beta eq true");
  assertStringIncludes(text(rules[0]), "serve on");
  assertStringIncludes(text(rules[1]), "Rule 2");
  // eu-customers, and paying expanded under its segment.paying predicate
  const second = text(rules[1]);
  assertStringIncludes(second, 'account.country in ["DE","FR","NL"]');
  assertStringIncludes(second, "in segment paying");
  assertStringIncludes(second, 'account.plan in ["pro","team"]');
  assert(second.indexOf("in segment paying") < second.indexOf("account.plan"), second);
  // the rollout as a bar with percentages and its bucketing path
  assertStringIncludes(second, "on 25%");
  assertStringIncludes(second, "off 75%");
  assertStringIncludes(second, "bucketed by targeting_key");
  assertEquals(rules[1].querySelector("svg.bar").getAttribute("role"), "img");
  const links = [...rules[1].querySelectorAll("a")].map((a) => a.getAttribute("href"));
  assert(links.includes("/ui/t/acme/ns/web/segments/eu-customers"), String(links));
  assert(links.includes("/ui/t/acme/ns/web/segments/paying"), String(links));

  // production overrides the default (with the same variation)
  assertStringIncludes(
    text(doc.querySelector("#flag-overrides")),
    "production overrides the default",
  );
  assertEquals(doc.querySelector("#flag-disabled"), null);
  const envs = rows(doc, "#environments");
  assertEquals(envs, ["production yes off own flag's (2)", "staging yes flag's (off) flag's (2)"]);
  assertEquals(
    [...doc.querySelectorAll("#reached a")].map(text),
    ["beta-testers", "eu-customers", "paying"],
  );
  assertEquals(doc.querySelector("#change-links"), null); // a member may not change it
  assert(!res.text.includes("/change?"), "no quick-change link for a member");
});

consoleTest("the flag page says when an environment turns the flag off", async (w) => {
  const staging = await w.page("/ui/t/acme/ns/web/flags/banner-text?env=staging", w.member);
  assertEquals(staging.status, 200, staging.text);
  assertStringIncludes(text(staging.doc.querySelector("#flag-disabled")), "Disabled in staging");
  assertStringIncludes(text(staging.doc.querySelector("#variations")), '"Winter sale"');
  assertStringIncludes(text(staging.doc.querySelector("#no-rules")), "No rules");
  const prod = await w.page("/ui/t/acme/ns/web/flags/banner-text?env=production", w.member);
  assertEquals(prod.doc.querySelector("#flag-disabled"), null);
  const written = await w.page("/ui/t/acme/ns/web/flags/banner-text", w.member);
  assertEquals(written.status, 200);
  assertStringIncludes(written.text, "as written");
  const nav = [...written.doc.querySelectorAll("nav[aria-label=Environments] a")];
  assertEquals(
    nav.map((a) => a.getAttribute("href")),
    [
      "/ui/t/acme/ns/web/flags/banner-text",
      "/ui/t/acme/ns/web/flags/banner-text?env=production",
      "/ui/t/acme/ns/web/flags/banner-text?env=staging",
    ],
  );
});

consoleTest("an environment's own rules replace the flag's on its page", async (w) => {
  await w.push({
    ...FIXTURE,
    "flags/max-items.toml": `${FIXTURE["flags/max-items.toml"]}[environments.staging]
[[environments.staging.rule]]
segment = "paying"
variation = "fifty"
`,
  });
  const staging = await w.page("/ui/t/acme/ns/web/flags/max-items?env=staging", w.member);
  assertEquals(staging.status, 200, staging.text);
  assertStringIncludes(text(staging.doc.querySelector("#flag-overrides")), "overrides the rules");
  assertEquals(staging.doc.querySelectorAll("#rules > li").length, 1);
  assertStringIncludes(text(staging.doc.querySelector("#rules")), "serve fifty");
  const prod = await w.page("/ui/t/acme/ns/web/flags/max-items?env=production", w.member);
  assertEquals(prod.doc.querySelector("#rules"), null);
  assertStringIncludes(text(prod.doc.querySelector("#environments")), "1 own rule");
});

consoleTest("a namespace admin gets links to the quick changes of the environment", async (w) => {
  const res = await w.page("/ui/t/acme/ns/web/flags/new-checkout?env=production", w.writer);
  assertEquals(res.status, 200, res.text);
  const hrefs = [...res.doc.querySelectorAll("#change-links a")].map((a) => a.getAttribute("href"));
  const base = "/ui/t/acme/ns/web/flags/new-checkout/change?env=production";
  assertEquals(hrefs, [`${base}&kind=toggle`, `${base}&kind=default`, `${base}&kind=weights`]);
  assertStringIncludes(text(res.doc.querySelector("#change-links")), "Turn off in production");
  // no rollout in banner-text: no weights link; turned off in staging: "Turn on"
  const banner = await w.page("/ui/t/acme/ns/web/flags/banner-text?env=staging", w.writer);
  const bannerLinks = [...banner.doc.querySelectorAll("#change-links a")].map(text);
  assertEquals(bannerLinks, ["Turn on in staging", "Change the default in staging"]);
});

consoleTest("an unknown flag, segment or environment is a console 404", async (w) => {
  const flag = await w.page("/ui/t/acme/ns/web/flags/nope?env=production", w.member);
  assertEquals(flag.status, 404);
  assertStringIncludes(flag.text, "has no flag nope");
  assertStringIncludes(flag.text, "<h1>Not found</h1>");
  const env = await w.page("/ui/t/acme/ns/web/flags/new-checkout?env=qa", w.member);
  assertEquals(env.status, 404);
  assertStringIncludes(env.text, "declares no environment qa");
  const segment = await w.page("/ui/t/acme/ns/web/segments/nope", w.member);
  assertEquals(segment.status, 404);
  assertStringIncludes(segment.text, "has no segment nope");
});

consoleTest("the segment page lists its predicates and the flags that use it", async (w) => {
  const paying = await w.page("/ui/t/acme/ns/web/segments/paying", w.member);
  assertEquals(paying.status, 200, paying.text);
  assertStringIncludes(text(paying.doc.querySelector("main")), "Paying customers");
  assertEquals(
    rows(paying.doc, "#predicates"),
    ['account.plan in ["pro","team"]'],
  );
  assertEquals(
    rows(paying.doc, "#users"),
    ["new-checkout through eu-customers"],
  );
  assertEquals([...paying.doc.querySelectorAll("#including a")].map(text), ["eu-customers"]);

  const eu = await w.page("/ui/t/acme/ns/web/segments/eu-customers", w.member);
  assertStringIncludes(text(eu.doc.querySelector(".facts")), "all: a context is in it");
  assertEquals(eu.doc.querySelectorAll("#predicates tbody tr").length, 2);
  assertStringIncludes(text(eu.doc.querySelector("#expanded")), 'account.plan in ["pro","team"]');
  assertEquals(
    rows(eu.doc, "#users"),
    ["new-checkout a rule names it"],
  );
  assertEquals(
    eu.doc.querySelector("#users a").getAttribute("href"),
    "/ui/t/acme/ns/web/flags/new-checkout",
  );
});

consoleTest("a person of another tenant is refused the flag and segment pages", async (w) => {
  const eve = await w.person("eve@other.test", "other");
  const flag = await w.page("/ui/t/acme/ns/web/flags/new-checkout?env=production", eve);
  assertEquals(flag.status, 403);
  assertStringIncludes(flag.text, "Not allowed");
  assert(!flag.text.includes("beta-testers"), "nothing of the flag leaks");
  const segment = await w.page("/ui/t/acme/ns/web/segments/paying", eve);
  assertEquals(segment.status, 403);
  assert(!segment.text.includes("account.plan"), "nothing of the segment leaks");
});
