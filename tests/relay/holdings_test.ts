/** lib/relay/holdings.ts: what a relay serves from, in memory. */
import { assert, assertEquals } from "../assert.ts";
import { Holdings, KEPT_VERSIONS, subscriptionClosure } from "../../lib/relay/holdings.ts";
import type { ClosureState } from "../../lib/client/closure_state.ts";
import { themeState } from "./theme_fixture.ts";

const state = (version: number, theme = "light", ns = "web"): Promise<ClosureState> =>
  themeState(version, { ns, theme });

Deno.test("the current state, the last versions, and the listeners", async () => {
  const h = new Holdings();
  const heard: (number | null)[] = [];
  h.onChange((c) => heard.push(c.previous?.version ?? null));
  for (let v = 1; v <= KEPT_VERSIONS + 3; v++) h.put("acme", await state(v, `t${v}`), "upstream");
  assertEquals(h.get("acme", "web")?.state.version, KEPT_VERSIONS + 3);
  assertEquals(heard[0], null);
  assertEquals(heard.at(-1), KEPT_VERSIONS + 2);
  assertEquals(h.at("acme", "web", KEPT_VERSIONS + 3)?.version, KEPT_VERSIONS + 3);
  assertEquals(h.at("acme", "web", 4)?.version, 4, "the last KEPT_VERSIONS are kept");
  assertEquals(h.at("acme", "web", 3), undefined, "older ones are dropped");
  assertEquals(h.at("acme", "api", 4), undefined);
});

Deno.test("the same version and hash again changes nothing but the source", async () => {
  const h = new Holdings();
  let heard = 0;
  h.onChange(() => heard++);
  assertEquals(h.put("acme", await state(1), "disk", new Date(0)), true);
  assertEquals(h.put("acme", await state(1), "upstream"), false);
  assertEquals(heard, 1);
  assertEquals(h.get("acme", "web")?.source, "upstream");
});

Deno.test("a lower version (a restored upstream) starts the history again", async () => {
  const h = new Holdings();
  for (const v of [1, 2, 3]) h.put("acme", await state(v, `t${v}`), "upstream");
  h.put("acme", await state(2, "restored"), "upstream");
  assertEquals(h.get("acme", "web")?.state.version, 2);
  assertEquals(h.at("acme", "web", 3), undefined);
  assertEquals(h.at("acme", "web", 1), undefined);
});

Deno.test("listing, tenants, removal and the public gate", async () => {
  const h = new Holdings();
  h.put("beta", await state(1, "light", "web"), "upstream");
  h.put("acme", await state(1, "light", "web"), "upstream");
  h.put("acme", await state(1, "light", "api"), "upstream");
  assertEquals(h.list().map((x) => `${x.tenant}/${x.namespace}`), [
    "acme/api",
    "acme/web",
    "beta/web",
  ]);
  assert(h.hasTenant("beta") && !h.hasTenant("gamma"));
  // manifestFiles' staging environment allows public evaluation; production does not
  assertEquals(h.isPublic("acme", "web", "staging"), true);
  assertEquals(h.isPublic("acme", "web", "production"), false);
  assertEquals(h.isPublic("acme", "web", "nope"), false);
  assertEquals(h.remove("beta", "web"), true);
  assertEquals(h.remove("beta", "web"), false);
  assertEquals(h.size, 2);
});

Deno.test("a namespace without a version yet is known until its first version", async () => {
  const h = new Holdings();
  h.put("acme", await state(1), "upstream");
  h.expect("acme", "web"); // held already: not awaited
  h.expect("acme", "fresh");
  assertEquals(h.awaiting(), [{ tenant: "acme", namespace: "fresh" }]);
  assert(h.knows("acme", "fresh") && h.knows("acme", "web") && !h.knows("acme", "x"));
  assertEquals(h.get("acme", "fresh"), undefined);
  h.put("acme", await state(1, "light", "fresh"), "upstream");
  assertEquals(h.awaiting(), []);
  h.expect("acme", "gone");
  assertEquals(h.remove("acme", "gone"), true);
  assertEquals(h.knows("acme", "gone"), false);
});

Deno.test("a subscription's closure is computed once per state and selection", async () => {
  const s = await state(1);
  const all = await subscriptionClosure(s, "*");
  assertEquals(all.hash, s.hash);
  const a = subscriptionClosure(s, ["theme"]);
  assert(a === subscriptionClosure(s, ["theme"]), "memoized");
  const theme = await a;
  assert(theme.hash !== s.hash && theme.files.has("flags/theme.toml"));
});
