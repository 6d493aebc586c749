import { assertEquals } from "../assert.ts";
import {
  EvaluationSeries,
  NO_VARIATION,
  OTHER,
  UNKNOWN_FLAG,
} from "../../lib/metrics/evaluation_series.ts";

const keyOf = (c: { labels: Record<string, string> }) =>
  ["api", "tenant", "namespace", "flag", "variation", "reason"].map((k) => c.labels[k]).join(" ");
const listed = (s: EvaluationSeries) => s.counts().map((c) => [keyOf(c), c.value]);

Deno.test("each (api, tenant, namespace, flag, variation, reason) is one series with its count", () => {
  const s = new EvaluationSeries();
  const web = s.of("cfgtool", "acme", "web");
  web.add("a", "on", "DEFAULT");
  web.add("a", "on", "DEFAULT");
  s.of("ofrep", "acme", "web").add("a", "on", "DEFAULT");
  s.of("cfgtool", "acme", "web").add("b", "off", "TARGETING_MATCH", false, 5);
  assertEquals(listed(s), [
    ["cfgtool acme web a on DEFAULT", 2],
    ["ofrep acme web a on DEFAULT", 1],
    ["cfgtool acme web b off TARGETING_MATCH", 5],
  ]);
});

Deno.test("a million made-up flag keys are one _unknown series", () => {
  const s = new EvaluationSeries();
  const web = s.of("cfgtool", "acme", "web");
  for (let i = 0; i < 1_000_000; i++) web.add(`nope-${i}`, null, "ERROR", true);
  assertEquals(s.size, 1);
  assertEquals(listed(s), [
    [`cfgtool acme web ${UNKNOWN_FLAG} ${NO_VARIATION} ERROR`, 1_000_000],
  ]);
});

Deno.test("series over a namespace's bound count under _other of that namespace", () => {
  const s = new EvaluationSeries({ maxSeriesPerNamespace: 3 });
  const web = s.of("cfgtool", "acme", "web");
  for (let i = 0; i < 10; i++) web.add(`f${i}`, "on", "DEFAULT");
  web.add("f0", "on", "DEFAULT"); // an admitted series keeps counting
  s.of("ofrep", "acme", "web").add("f9", "on", "DEFAULT"); // the bound is the namespace's
  assertEquals(listed(s), [
    ["cfgtool acme web f0 on DEFAULT", 2],
    ["cfgtool acme web f1 on DEFAULT", 1],
    ["cfgtool acme web f2 on DEFAULT", 1],
    [`cfgtool acme web ${OTHER} ${OTHER} ${OTHER}`, 7],
    [`ofrep acme web ${OTHER} ${OTHER} ${OTHER}`, 1],
  ]);
});

Deno.test("namespaces over the bound share one _other series per api", () => {
  const s = new EvaluationSeries({ maxNamespaces: 2, maxSeriesPerNamespace: 10 });
  for (let i = 0; i < 50; i++) s.of("cfgtool", "acme", `ns${i}`).add("a", "on", "DEFAULT");
  assertEquals(listed(s), [
    ["cfgtool acme ns0 a on DEFAULT", 1],
    ["cfgtool acme ns1 a on DEFAULT", 1],
    [`cfgtool ${OTHER} ${OTHER} ${OTHER} ${OTHER} ${OTHER}`, 48],
  ]);
});

Deno.test("the number of series never exceeds maxNamespaces × (maxSeriesPerNamespace + 2) + 2", () => {
  const bounds = { maxNamespaces: 5, maxSeriesPerNamespace: 7 };
  const s = new EvaluationSeries(bounds);
  for (let i = 0; i < 20_000; i++) {
    s.of(i % 2 === 0 ? "cfgtool" : "ofrep", `t${i % 13}`, `n${i % 11}`).add(
      `f${i % 97}`,
      `v${i % 5}`,
      ["DEFAULT", "SPLIT", "made-up"][i % 3]!,
    );
  }
  const limit = bounds.maxNamespaces * (bounds.maxSeriesPerNamespace + 2) + 2;
  assertEquals(s.size <= limit, true, `${s.size} series`);
  assertEquals(s.counts().reduce((n, c) => n + c.value, 0), 20_000, "every evaluation is counted");
});

Deno.test("a reason outside OpenFeature's set is _other", () => {
  const s = new EvaluationSeries();
  s.of("cfgtool", "acme", "web").add("a", "on", "SOMETHING");
  assertEquals(s.counts()[0]!.labels.reason, OTHER);
});
