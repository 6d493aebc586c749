/**
 * Segment nesting and `matches` patterns through a real server: what
 * validation refuses is refused by the manifest upload (422), and what it
 * accepts evaluates through every evaluation endpoint.
 */
import { assert, assertEquals } from "../assert.ts";
import { withReadableNamespace } from "./installation.ts";

const BASE = "/api/v1/tenants/acme/namespaces/web";
const NS = "schema_version = 1\n[namespace.environments.production]\n";
const FLAG = `schema_version = 1
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;

function segment(attribute: string, op: string, value: string): string {
  return `schema_version = 1\n[[predicate]]\nattribute = "${attribute}"\nop = "${op}"\nvalue = ${value}\n`;
}

/** A manifest whose flag `deep` uses a chain of `n` segments s0 → s1 → … ending at `user.beta`. */
function chain(n: number): Record<string, string> {
  const files: Record<string, string> = {
    "namespace.toml": NS,
    "flags/deep.toml": FLAG + `[[rule]]\nsegment = "s0"\nvariation = "on"\n`,
  };
  for (let i = 0; i < n - 1; i++) {
    files[`segments/s${i}.toml`] = segment(`segment.s${i + 1}`, "eq", "true");
  }
  files[`segments/s${n - 1}.toml`] = segment("user.beta", "eq", "true");
  return files;
}

Deno.test("segment nesting limit and linear-time patterns through a real server", async (t) => {
  await withReadableNamespace(async (inst, read) => {
    await t.step("a 5,000-deep segment chain is refused with 422, naming the chain", async () => {
      const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, { files: chain(5000) });
      assertEquals(res.status, 422, JSON.stringify(res.body).slice(0, 500));
      assertEquals(res.body.code, "invalid_manifest");
      assertEquals(res.body.details.problems, [{
        path: "segments/s0.toml",
        key: "predicate[0].attribute",
        message: "segment references nest 5000 deep (s0 -> s1 -> s2 -> s3 -> … (4995 more) " +
          "-> s4999); the limit is 32 segments in a chain",
      }]);
    });

    await t.step("a pattern RE2 cannot compile is refused with 422", async () => {
      const res = await inst.api("PUT", `${BASE}/manifest`, inst.admin, {
        files: {
          "namespace.toml": NS,
          "segments/look.toml": segment("name", "matches", '"a(?=b)"'),
        },
      });
      assertEquals(res.status, 422);
      assertEquals(
        res.body.details.problems[0].message,
        "matches accepts the RE2-safe subset: no backreferences or lookaround",
      );
    });

    await t.step("a 32-deep chain and a nested quantifier evaluate everywhere", async () => {
      const files = {
        ...chain(32),
        "segments/hostile.toml": segment("name", "matches", '"^(a+)+$"'),
        "flags/hostile.toml": FLAG + `[[rule]]\nsegment = "hostile"\nvariation = "on"\n`,
      };
      const put = await inst.api("PUT", `${BASE}/manifest`, inst.admin, { files });
      assert(put.status === 200 || put.status === 201, JSON.stringify(put.body));
      const context = { user: { beta: true }, name: "a".repeat(5000) + "b" };
      const one = await inst.api(
        "POST",
        `${BASE}/environments/production/evaluate`,
        read,
        { flag: "deep", context },
      );
      assertEquals([one.status, one.body.value, one.body.reason], [200, true, "TARGETING_MATCH"]);
      const all = await inst.api("POST", `${BASE}/environments/production/evaluate/all`, read, {
        context,
      });
      assertEquals(all.status, 200, JSON.stringify(all.body));
      assertEquals([all.body.flags.deep.value, all.body.flags.hostile.value], [true, false]);
      const ofrep = await inst.api("POST", "/ofrep/v1/evaluate/flags", read, { context }, {
        "x-cfgtool-tenant": "acme",
        "x-cfgtool-namespace": "web",
        "x-cfgtool-environment": "production",
      });
      assertEquals(ofrep.status, 200, JSON.stringify(ofrep.body));
      const byKey = Object.fromEntries(
        ofrep.body.flags.map((f: { key: string; value: unknown }) => [f.key, f.value]),
      );
      assertEquals(byKey, { deep: true, hostile: false });
    });
  });
});
