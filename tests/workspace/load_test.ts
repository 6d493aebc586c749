import { assert, assertEquals } from "../assert.ts";
import { formatProblem } from "../../lib/errors.ts";
import { loadModel } from "../../lib/workspace/load.ts";
import { encodeFiles, exampleFiles } from "../fixtures/workspace/build.ts";

const V = "variables/notification-delivery-policy.toml";
const CAT = "catalogs/notification-delivery-policy.toml";
const ENTRY = "catalogs/notification-delivery-policy-entries/default.toml";
const SCHEMA = "schemas/notification-delivery-policy.schema.json";

/** The problem lines of the example with `changes` applied (null deletes). */
async function lines(changes: Record<string, string | null>): Promise<string[]> {
  const files = await exampleFiles();
  for (const [p, t] of Object.entries(changes)) {
    if (t === null) delete files[p];
    else files[p] = t;
  }
  return loadModel(encodeFiles(files)).problems.map(formatProblem);
}

const q = (body: string) => `schema_version = 1\n${body}`;
const pred = (attribute: string, op: string, value: string) =>
  `[[predicate]]\nattribute = "${attribute}"\nop = "${op}"\nvalue = ${value}\n`;

Deno.test("loadModel() reads the example without problems", async () => {
  const { model, problems } = loadModel(encodeFiles(await exampleFiles()));
  assertEquals(problems, []);
  assertEquals([...model.variables.keys()], ["notification-delivery-policy"]);
  const c = model.catalogs.get("notification-delivery-policy")!;
  assertEquals([...c.entries.keys()], ["default", "immediate-incident", "immediate-security"]);
  assertEquals(c.schemaPath, SCHEMA);
  assertEquals(model.qualifiers.size, 5);
  assertEquals(model.qualifiers.get("enterprise-incident-updates")!.refs.map((r) => r.name), [
    "enterprise-accounts",
    "active-incidents",
    "incident-updates",
  ]);
});

Deno.test("loadModel() reports TOML syntax errors as path:line:col", async () => {
  const [line] = await lines({ [ENTRY]: "delivery = \n" });
  assert(line!.startsWith(`${ENTRY}:1:`), line);
  assert(line!.includes(": invalid TOML: "), line);
});

Deno.test("loadModel() reports wrong schema_version, unknown keys, missing fields, wrong types", async () => {
  assertEquals(
    await lines({
      [V]: 'schema_version = 2\ndescription = 3\ntypo = 1\n[resolve]\nrule = "x"\nextra = 1\n',
    }),
    [
      `${V}: typo: unknown key "typo" (allowed: schema_version, description, type, resolve)`,
      `${V}: schema_version: unsupported schema_version 2 (this cfgtool reads schema_version 1)`,
      `${V}: description: expected a string, found the integer 3`,
      `${V}: type: required field is missing`,
      `${V}: resolve.extra: unknown key "extra" (allowed: default, rule)`,
      `${V}: resolve.default: required field is missing`,
      `${V}: resolve.rule: expected an array of tables ([[resolve.rule]]), found the string "x"`,
    ],
  );
  assertEquals(await lines({ [CAT]: 'schema_version = "1"\nschema = 5\n' }), [
    `${CAT}: schema_version: expected an integer, found the string "1"`,
    `${CAT}: schema: expected a string, found the integer 5`,
  ]);
  assertEquals(await lines({ "qualifiers/security-alerts.toml": "description = 'x'\n" }), [
    "qualifiers/security-alerts.toml: schema_version: required field is missing (use schema_version = 1)",
    "qualifiers/security-alerts.toml: predicate: required field is missing (add at least one [[predicate]])",
  ]);
});

Deno.test("loadModel() reports rule and default values naming no entry", async () => {
  const text = (await exampleFiles())[V]!.replace('value = "immediate-incident"', 'value = "fast"')
    .replace('default = "default"', 'default = "slow"');
  assertEquals(await lines({ [V]: text }), [
    `${V}: resolve.default: no entry "slow" in catalog "notification-delivery-policy"`,
    `${V}: resolve.rule[1].value: no entry "fast" in catalog "notification-delivery-policy"`,
  ]);
});

Deno.test("loadModel() reports unknown qualifiers in rules", async () => {
  const text = (await exampleFiles())[V]!.replace('"security-alerts"', '"security"');
  assertEquals(await lines({ [V]: text }), [
    `${V}: resolve.rule[0].qualifier: no qualifier "security"`,
  ]);
});

Deno.test("loadModel() reports variable types other than catalog:<name> and unknown catalogs", async () => {
  const text = (await exampleFiles())[V]!;
  assertEquals(await lines({ [V]: text.replace(/type = ".*"/, 'type = "string"') }), [
    `${V}: type: unsupported type "string" (a variable's type is "catalog:<catalog_name>")`,
  ]);
  assertEquals(await lines({ [V]: text.replace(/type = ".*"/, 'type = "catalog:delivery"') }), [
    `${V}: type: no catalog "delivery" (catalogs/delivery.toml does not exist)`,
  ]);
});

Deno.test("loadModel() reports entries that violate the catalog schema", async () => {
  assertEquals(
    await lines({
      [ENTRY]:
        'delivery = "digest"\nchannels = ["fax"]\nrespect_quiet_hours = true\nfallback_channel = "email"\n',
    }),
    [
      `${ENTRY}: digest_interval_hours: required field is missing`,
      `${ENTRY}: channels[0]: must be one of "email", "in_app", "slack"`,
    ],
  );
});

Deno.test("loadModel() reports a missing, invalid JSON or invalid schema file", async () => {
  assertEquals(await lines({ [SCHEMA]: null }), [
    `${CAT}: schema: schema file ${SCHEMA} does not exist; entries cannot be checked`,
  ]);
  assertEquals(await lines({ [SCHEMA]: '{"type": "object",}' }), [
    `${SCHEMA}:1:19: invalid JSON: Expected double-quoted property name in JSON`,
    `${CAT}: schema: ${SCHEMA} is not a valid JSON Schema; entries cannot be checked`,
  ]);
  assertEquals(await lines({ [SCHEMA]: '{"type": 5}' }), [
    `${SCHEMA}: type: not a valid JSON Schema: must be equal to one of the allowed values`,
    `${CAT}: schema: ${SCHEMA} is not a valid JSON Schema; entries cannot be checked`,
  ]);
  assertEquals(await lines({ [CAT]: 'schema_version = 1\nschema = "../../x.schema.json"\n' }), [
    `${CAT}: schema: "../../x.schema.json" must point to a file schemas/<name>.schema.json inside ` +
    'the workspace (for instance "../schemas/notification-delivery-policy.schema.json")',
  ]);
});

Deno.test("loadModel() reports files in unexpected places and bad names", async () => {
  const out = await lines({ "NOTES.txt": "hi", "qualifiers/Upper.toml": q(pred("a", "eq", "1")) });
  assertEquals(out.length, 2);
  assert(out[0]!.startsWith("NOTES.txt: unexpected file: a workspace holds only"), out[0]);
  assert(
    out[1]!.startsWith('qualifiers/Upper.toml: "Upper" is not a valid qualifier name'),
    out[1],
  );
});

Deno.test("loadModel() reports entries of a catalog that does not exist", async () => {
  assertEquals(await lines({ "catalogs/other-entries/a.toml": "x = 1\n" }), [
    'catalogs/other-entries/a.toml: no catalog "other" (catalogs/other.toml does not exist)',
  ]);
});

Deno.test("loadModel() reports invalid predicates, dangling references and cycles", async () => {
  assertEquals(
    await lines({
      "qualifiers/a.toml": q(pred("qualifier.b", "eq", "true")),
      "qualifiers/b.toml": q(
        pred("qualifier.a", "eq", "true") + pred("qualifier.zz", "eq", "true"),
      ),
      "qualifiers/c.toml": q(pred("x", "matches", '"(a)\\\\1"') + pred("v", "semver_gt", '"1.x"')),
    }),
    [
      "qualifiers/c.toml: predicate[0].value: matches accepts the RE2-safe subset: no backreferences or lookaround",
      'qualifiers/c.toml: predicate[1].value: semver_gt takes a semantic version string such as "1.2.3"',
      'qualifiers/b.toml: predicate[1].attribute: no qualifier "zz"',
      "qualifiers/b.toml: predicate[0].attribute: qualifier cycle: a -> b -> a",
    ],
  );
});

Deno.test("loadModel() reports before and after values that are not RFC 3339 instants", async () => {
  assertEquals(
    await lines({
      "qualifiers/new-accounts.toml": q(
        pred("account.created_at", "after", '"2026-01-01T00:00:00Z"') +
          pred("account.created_at", "before", "2027-01-01") +
          pred("account.created_at", "after", '"2026-01-01 00:00"') +
          pred("account.created_at", "before", "2027-01-01T00:00:00"),
      ),
    }),
    [
      'qualifiers/new-accounts.toml: predicate[2].value: after takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", or a date such as "2026-01-01" (midnight UTC)',
      'qualifiers/new-accounts.toml: predicate[3].value: before takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", or a date such as "2026-01-01" (midnight UTC)',
    ],
  );
});

Deno.test("loadModel() does not pile reference problems on a file that fails to parse", async () => {
  assertEquals(
    (await lines({ "qualifiers/security-alerts.toml": "[[predicate]\n" })).length,
    1,
  );
  assertEquals(
    (await lines({
      "catalogs/notification-delivery-policy-entries/immediate-security.toml": "x = \n",
    }))
      .length,
    1,
  );
});

Deno.test("loadModel() reports text that is not UTF-8", () => {
  const files = new Map([["variables/x.toml", new Uint8Array([0xff, 0xfe])]]);
  assertEquals(loadModel(files).problems.map(formatProblem), [
    "variables/x.toml: not valid UTF-8 text",
  ]);
});
