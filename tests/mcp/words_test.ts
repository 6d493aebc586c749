import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { manifestOfFiles } from "../../lib/flags/impact.ts";
import { flagWords, predicateWords, ruleWords } from "../../lib/mcp/words.ts";
import { proposedFiles } from "../../lib/mcp/propose.ts";
import { CfgtoolError } from "../../lib/errors.ts";

const NS = "schema_version = 1\n[namespace.environments.production]\n" +
  "[namespace.environments.staging]\n";
const FLAG = 'schema_version = 1\ntype = "string"\ndefault = "light"\n' +
  '[variations]\nlight = "#fff"\ndark = "#000"\n' +
  '[[rule]]\nsegment = "eu"\nvariation = "dark"\n' +
  '[[rule]]\nbucket_by = "account.id"\n' +
  'rollout = [ { variation = "dark", weight = 10 }, { variation = "light", weight = 90 } ]\n' +
  '[environments.staging]\ndefault = "dark"\nrule = []\n';
const EU = 'schema_version = 1\nmatch = "any"\n' +
  '[[predicate]]\nattribute = "country"\nop = "in"\nvalue = ["DE", "FR"]\n' +
  '[[predicate]]\nattribute = "segment.internal"\nop = "eq"\nvalue = false\n';
const INTERNAL = 'schema_version = 1\n[[predicate]]\nattribute = "user.email"\nop = "ends_with"\n' +
  'value = "@acme.test"\n[[predicate]]\nattribute = "app.version"\nop = "semver_gt"\n' +
  'value = "2.0.0"\n';
const FILES = {
  "namespace.toml": NS,
  "flags/theme.toml": FLAG,
  "segments/eu.toml": EU,
  "segments/internal.toml": INTERNAL,
};

Deno.test("rules in words open nested segments, negated ones too", () => {
  const m = manifestOfFiles(FILES);
  assertEquals(
    ruleWords(m, m.flags.theme!.rules[0]!, 0),
    'rule 1: if the context is in segment eu (any of: country is one of ["DE","FR"]; ' +
      'not in segment internal (all of: user.email ends with "@acme.test"; ' +
      'app.version is a version above "2.0.0")), serves dark',
  );
  assertEquals(
    ruleWords(m, m.flags.theme!.rules[1]!, 1),
    "rule 2: every context, split dark 10% / light 90% by account.id",
  );
});

Deno.test("each environment says its own rules and default", () => {
  const m = manifestOfFiles(FILES);
  const [production, staging] = flagWords(m, m.flags.theme!);
  assertEquals(production!.rules.length, 2);
  assertStringIncludes(production!.summary, "Otherwise the default light.");
  assertEquals(staging, {
    environment: "staging",
    enabled: true,
    default: "dark",
    rules_overridden: true,
    rules: [],
    summary:
      "In staging: no rules (it removes the flag's rules): every context gets the default dark.",
  });
});

Deno.test("predicates in words", () => {
  assertEquals(
    predicateWords({ attribute: "seats", op: "gte", value: 10 }),
    "seats is at least 10",
  );
  assertEquals(
    predicateWords({ attribute: "trial", op: "exists", value: true }),
    "trial is present",
  );
  assertEquals(
    predicateWords({ attribute: "plan", op: "neq", value: "free" }),
    'plan is present and not "free"',
  );
});

Deno.test("a proposal replaces, removes and edits files; rules count from 1", () => {
  const out = proposedFiles(FILES, { "segments/internal.toml": null, "segments/eu.toml": EU }, [
    { kind: "weights", flag: "theme", rule: 2, weights: { dark: 50, light: 50 } },
  ]);
  assertEquals(Object.keys(out).sort(), ["flags/theme.toml", "namespace.toml", "segments/eu.toml"]);
  assertStringIncludes(out["flags/theme.toml"]!, "weight = 50");
  const code = (f: () => unknown) => (assertThrows(f, CfgtoolError) as CfgtoolError).code;
  assertEquals(code(() => proposedFiles(FILES, { "flags/nope.toml": null }, [])), "not_found");
  assertEquals(
    code(() => proposedFiles(FILES, {}, [{ kind: "default", flag: "nope", variation: "x" }])),
    "flag_not_found",
  );
  assertEquals(
    code(() =>
      proposedFiles(FILES, {}, [{
        kind: "weights",
        flag: "theme",
        rule: 1,
        weights: { dark: 100 },
      }])
    ),
    "invalid_request",
  );
  assertEquals(code(() => proposedFiles(FILES, { "namespace.toml": NS }, [])), "invalid_request");
});
