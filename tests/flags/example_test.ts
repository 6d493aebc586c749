import { assertEquals } from "../assert.ts";
import { readManifestDir } from "../../lib/flags/files.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { environmentsOf } from "../../lib/flags/model.ts";
import { orphanSegments, reachableSegments } from "../../lib/flags/reach.ts";

const EXAMPLE = new URL("../../examples/flags/", import.meta.url).pathname;

Deno.test("examples/flags validates clean", async () => {
  const files = await readManifestDir(EXAMPLE);
  const { problems, manifest } = validateManifest(files);
  assertEquals(problems, []);
  const m = manifest!;
  assertEquals(environmentsOf(m), {
    production: { public_evaluate: false },
    staging: { public_evaluate: true },
  });
  const types = Object.values(m.flags).map((f) => f.type).sort();
  assertEquals([...new Set(types)], ["boolean", "number", "object", "string"]);
  // a rollout, an override and a nested segment reference are all present
  assertEquals(m.flags["new-checkout"]!.rules[1]!.rollout, [
    { variation: "on", weight: 25000 },
    { variation: "off", weight: 75000 },
  ]);
  assertEquals(reachableSegments(m, ["new-checkout"]), [
    "beta-testers",
    "eu-customers",
    "internal-staff",
    "legacy-browsers",
    "paying-customers",
  ]);
  assertEquals(orphanSegments(m), ["holiday-shoppers"]);
});
