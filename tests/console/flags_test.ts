/**
 * The flags of an environment (lib/console/flags.tsx): what a person
 * sees, filtering and search on the server, the fragment htmx swaps in
 * when a new version lands, and the door in front of it.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { PLAIN_FLAG } from "./fixture.ts";
import { consoleTest, FIXTURE } from "./world.ts";

// deno-lint-ignore no-explicit-any
function rows(doc: any): string[] {
  return [...doc.querySelectorAll("#flag-table tbody tr")].map((r) =>
    // deno-lint-ignore no-explicit-any
    [...r.querySelectorAll("td")].map((td: any) => td.textContent.trim()).join(" ")
      .replace(/\s+/g, " ")
  );
}

consoleTest("a page without a session goes to sign-in and comes back after", async (w) => {
  const res = await w.call("GET", "/ui/t/acme/ns/web/env/production?q=x");
  assertEquals(res.status, 303);
  assertEquals(
    res.headers.get("location"),
    "/auth/login?next=%2Fui%2Ft%2Facme%2Fns%2Fweb%2Fenv%2Fproduction%3Fq%3Dx",
  );
});

consoleTest("the flags of an environment show what that environment serves", async (w) => {
  const prod = await w.page("/ui/t/acme/ns/web/env/production", w.member);
  assertEquals(prod.status, 200, prod.text);
  assertEquals(rows(prod.doc).length, 3);
  const checkout = rows(prod.doc).find((r) => r.startsWith("new-checkout"))!;
  assertStringIncludes(checkout, "on off"); // enabled, serves "off" by default
  assertStringIncludes(checkout, "2 rules");
  assertStringIncludes(checkout, "rollout");
  const staging = await w.page("/ui/t/acme/ns/web/env/staging", w.member);
  const banner = rows(staging.doc).find((r) => r.startsWith("banner-text"))!;
  assertStringIncludes(banner, "off plain"); // disabled in staging
  const csp = prod.headers.get("content-security-policy")!;
  assertStringIncludes(csp, "script-src 'self'");
  assert(!csp.includes("unsafe-inline"), csp);
});

consoleTest("search and filter narrow the list on the server", async (w) => {
  const q = await w.page("/ui/t/acme/ns/web/env/staging?q=BANNER", w.member);
  assertEquals(rows(q.doc).map((r) => r.split(" ")[0]), ["banner-text"]);
  const off = await w.page("/ui/t/acme/ns/web/env/staging?state=off", w.member);
  assertEquals(rows(off.doc).map((r) => r.split(" ")[0]), ["banner-text"]);
  const rollout = await w.page("/ui/t/acme/ns/web/env/production?state=rollout", w.member);
  assertEquals(rollout.doc.querySelector("#flag-table p").textContent.includes("1 of 3"), true);
});

consoleTest("an htmx request gets the table alone, at the new version", async (w) => {
  const v = await w.push({
    ...FIXTURE,
    "flags/extra.toml": PLAIN_FLAG,
  });
  const frag = await w.page("/ui/t/acme/ns/web/env/production", w.member, { "hx-request": "true" });
  assert(!frag.text.startsWith("<!doctype"), frag.text.slice(0, 50));
  assertStringIncludes(frag.text, `Version <a href="/ui/t/acme/ns/web/versions/${v}">${v}</a>`);
  assertEquals(rows(frag.doc).length, 4);
});

consoleTest("a person of another tenant is refused the namespace", async (w) => {
  const outsider = await w.person("eve@other.test", "other");
  const res = await w.page("/ui/t/acme/ns/web/env/production", outsider);
  assertEquals(res.status, 403);
  assertStringIncludes(res.text, "Not allowed");
});
