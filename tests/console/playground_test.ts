/**
 * The evaluation playground (lib/console/playground.tsx): it starts
 * from the namespace's context skeleton, evaluates every flag with the
 * service's engine, says why each value was served, keeps the person's
 * text when it is not JSON, and has the evaluation API's door.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { consoleTest, type LoadedPage } from "./world.ts";

const PROD = "/ui/t/acme/ns/web/env/production/playground";
const STAGING = "/ui/t/acme/ns/web/env/staging/playground";

/** A parsed page (linkedom), as the world gives it. */
type Doc = LoadedPage["doc"];

const text = (el: Doc): string => (el?.textContent ?? "").replace(/\s+/g, " ").trim();

/**
 * The text in the context box. linkedom leaves character references in a
 * textarea undecoded (a browser decodes them), so they are decoded here.
 */
function box(doc: Doc): string {
  const raw: string = doc.querySelector("textarea#playground-context").textContent;
  const named: Record<string, string> = { quot: '"', amp: "&", lt: "<", gt: ">" };
  return raw.replace(/&(quot|amp|lt|gt|#39);/g, (_, n: string) => named[n] ?? "'");
}

/** One row of the results table. */
interface Row {
  value: string;
  variation: string;
  reason: string;
  why: string;
}

/** The results table: flag key → its row's cells. */
function results(doc: Doc): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const row of doc.querySelectorAll("#results tbody tr")) {
    const cells: string[] = [...row.querySelectorAll("th, td")].map((c: Doc) => text(c));
    const [flag, value, variation, reason, why] = cells as [string, string, string, string, string];
    out.set(flag, { value, variation, reason, why });
  }
  return out;
}

consoleTest("the playground starts from a skeleton of what the namespace reads", async (w) => {
  const res = await w.page(PROD, w.member);
  assertEquals(res.status, 200, res.text);
  assertEquals(text(res.doc.querySelector('label[for="playground-context"]')), "Context (JSON)");
  assertEquals(JSON.parse(box(res.doc)), {
    targeting_key: "user-1",
    user: { beta: true },
    account: { country: "DE", plan: "pro" },
  });
  assertEquals(res.doc.querySelector("main form").getAttribute("action"), PROD);
  assert(res.doc.querySelector('main form input[name="_csrf"]'), "the form carries the CSRF field");
  assertEquals(res.doc.querySelector("#results"), null);
});

consoleTest("a context in the beta segment gets the new checkout by rule 1", async (w) => {
  const context = '{ "targeting_key": "u-1", "user": { "beta": true } }';
  const res = await w.post(PROD, w.member, { context });
  assertEquals(res.status, 200, res.text);
  const checkout = results(res.doc).get("new-checkout")!;
  assertEquals(checkout.value, "true");
  assertEquals(checkout.variation, "on");
  assertEquals(checkout.reason, "TARGETING_MATCH");
  assertEquals(checkout.why, "rule 1: segment beta-testers, serves on");
  const link = res.doc.querySelector("#results tbody tr a[href*='segments']");
  assertEquals(link.getAttribute("href"), "/ui/t/acme/ns/web/segments/beta-testers");
  assertEquals(box(res.doc), context); // kept
  assertEquals(results(res.doc).size, 3);
});

consoleTest("a context in the EU segment gets a split and says which rule split it", async (w) => {
  const context = JSON.stringify({
    targeting_key: "u-7",
    account: { country: "FR", plan: "team" },
  });
  const res = await w.post(PROD, w.member, { context });
  const checkout = results(res.doc).get("new-checkout")!;
  assertEquals(checkout.reason, "SPLIT");
  assertStringIncludes(
    checkout.why,
    "rule 2: segment eu-customers, split on 25% / off 75% by targeting_key: this context's bucket got",
  );
  assertStringIncludes(checkout.why, checkout.variation);
  // the same answer as the evaluation API
  const api = await w.json(
    "POST",
    "/api/v1/tenants/acme/namespaces/web/environments/production/evaluate",
    {
      bearer: w.admin,
      json: { flag: "new-checkout", context: JSON.parse(context) },
    },
  );
  assertEquals(api.body.variation, checkout.variation);
  assertEquals(api.body.rule_index, 1);
});

consoleTest("a context that matches nothing gets the defaults", async (w) => {
  const res = await w.post(PROD, w.member, { context: '{"targeting_key": "nobody"}' });
  const r = results(res.doc);
  assertEquals(r.get("new-checkout")!.reason, "DEFAULT");
  assertEquals(r.get("new-checkout")!.value, "false");
  assertEquals(r.get("new-checkout")!.why, "none of 2 rules matched: the default off");
  assertEquals(r.get("max-items")!.value, "10");
  assertEquals(r.get("max-items")!.why, "no rules: the default ten");
  assertEquals(r.get("banner-text")!.value, '"Welcome"');
});

consoleTest("in staging the banner text says it is disabled", async (w) => {
  const res = await w.post(STAGING, w.member, { context: "{}" });
  assertEquals(res.status, 200, res.text);
  const banner = results(res.doc).get("banner-text")!;
  assertEquals(banner.reason, "DISABLED");
  assertEquals(banner.value, '"Welcome"');
  assertEquals(banner.why, "disabled in staging: every context gets the default plain");
});

consoleTest("the flag filter narrows the results", async (w) => {
  const res = await w.post(PROD, w.member, { context: "{}", flag: "BANNER" });
  assertEquals([...results(res.doc).keys()], ["banner-text"]);
  assertEquals(res.doc.querySelector("#playground-flag").getAttribute("value"), "BANNER");
});

consoleTest("text that is not JSON comes back in the box with the problem", async (w) => {
  const context = '{"user": {"beta": tru}';
  const res = await w.post(PROD, w.member, { context, flag: "new" });
  assertEquals(res.status, 400);
  assertStringIncludes(text(res.doc.querySelector("[role=alert]")), "not valid JSON");
  assertEquals(box(res.doc), context);
  assertEquals(res.doc.querySelector("#playground-context").getAttribute("aria-invalid"), "true");
  assertEquals(res.doc.querySelector("#playground-flag").getAttribute("value"), "new");
  assertEquals(res.doc.querySelector("#results"), null);
  const array = await w.post(PROD, w.member, { context: "[1, 2]" });
  assertEquals(array.status, 400);
  assertStringIncludes(text(array.doc.querySelector("[role=alert]")), "must be a JSON object");
  assertEquals(box(array.doc), "[1, 2]");
});

consoleTest("an undeclared environment is a 404 and a post without CSRF is refused", async (w) => {
  const qa = await w.page("/ui/t/acme/ns/web/env/qa/playground", w.member);
  assertEquals(qa.status, 404);
  assertStringIncludes(qa.text, "no environment qa");
  const forged = await w.call("POST", PROD, {
    cookie: w.member.cookie,
    form: { context: "{}" },
    headers: { origin: "http://localhost" },
  });
  assertEquals(forged.status, 403);
  await forged.body?.cancel();
});

consoleTest("a person of another tenant is refused the playground", async (w) => {
  const eve = await w.person("eve@other.test", "other");
  const page = await w.page(PROD, eve);
  assertEquals(page.status, 403);
  assertStringIncludes(page.text, "Not allowed");
  assert(!page.text.includes("account"), "nothing of the namespace leaks");
  const post = await w.post(PROD, eve, { context: '{"user": {"beta": true}}' });
  assertEquals(post.status, 403);
  assertEquals(post.doc.querySelector("#results"), null);
});
