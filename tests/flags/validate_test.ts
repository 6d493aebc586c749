import { assert, assertEquals, assertThrows } from "../assert.ts";
import { formatProblem, type Problem, ProblemsError } from "../../lib/errors.ts";
import { MAX_ENVIRONMENTS, MAX_SEGMENT_DEPTH } from "../../lib/flags/model.ts";
import { parseManifest, validateManifest } from "../../lib/flags/validate.ts";

const enc = new TextEncoder();

const NS = `schema_version = 1
[namespace]
description = "Checkout"
[namespace.environments.production]
public_evaluate = false
[namespace.environments.staging]
public_evaluate = true
`;

const FLAG = `schema_version = 1
description = "New checkout"
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;

const SEGMENT = `schema_version = 1
description = "Beta"
[[predicate]]
attribute = "user.beta"
op = "eq"
value = true
`;

/** Builds a file set; `namespace.toml` is added unless given (or null). */
function fileSet(files: Record<string, string | Uint8Array | null>): Map<string, Uint8Array> {
  const all: Record<string, string | Uint8Array | null> = { "namespace.toml": NS, ...files };
  const out = new Map<string, Uint8Array>();
  for (const [p, c] of Object.entries(all)) {
    if (c !== null) out.set(p, typeof c === "string" ? enc.encode(c) : c);
  }
  return out;
}

/** The formatted problem lines of a file set. */
function lint(files: Record<string, string | Uint8Array | null>): string[] {
  return validateManifest(fileSet(files)).problems.map(formatProblem);
}

function problemsOf(files: Record<string, string | Uint8Array | null>): Problem[] {
  return validateManifest(fileSet(files)).problems;
}

Deno.test("validateManifest() accepts the empty file set as the empty manifest", () => {
  const r = validateManifest(new Map());
  assertEquals(r.problems, []);
  assertEquals(r.manifest, {
    namespace: { description: "", environments: {} },
    flags: {},
    segments: {},
  });
});

Deno.test("validateManifest() builds the model of a valid manifest", () => {
  const r = validateManifest(fileSet({
    "flags/new-checkout.toml": FLAG + `
[[rule]]
segment = "beta"
variation = "on"
[[rule]]
bucket_by = "user.id"
rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 75 } ]
[environments.production]
enabled = false
default = "off"
[environments.staging]
rule = []
`,
    "segments/beta.toml": SEGMENT,
  }));
  assertEquals(r.problems, []);
  assertEquals(r.manifest, {
    namespace: {
      description: "Checkout",
      environments: { production: { public_evaluate: false }, staging: { public_evaluate: true } },
    },
    flags: {
      "new-checkout": {
        key: "new-checkout",
        description: "New checkout",
        type: "boolean",
        default: "off",
        variations: { on: true, off: false },
        rules: [
          { segment: "beta", bucket_by: "targeting_key", variation: "on" },
          {
            bucket_by: "user.id",
            rollout: [{ variation: "on", weight: 25000 }, { variation: "off", weight: 75000 }],
          },
        ],
        environments: {
          production: { enabled: false, default: "off" },
          staging: { enabled: true, rules: [] },
        },
      },
    },
    segments: {
      beta: {
        key: "beta",
        description: "Beta",
        match: "all",
        predicates: [{ attribute: "user.beta", op: "eq", value: true }],
      },
    },
  });
});

Deno.test("validateManifest() keeps variations in file order", () => {
  const r = validateManifest(fileSet({
    "flags/theme.toml": `schema_version = 1
type = "string"
default = "zeta"
[variations]
zeta = "z"
alpha = "a"
mid = "m"
`,
  }));
  assertEquals(Object.keys(r.manifest!.flags.theme!.variations), ["zeta", "alpha", "mid"]);
});

Deno.test("validateManifest() accepts string, number and object flags", () => {
  const r = validateManifest(fileSet({
    "flags/s.toml": `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\na = "x"\n`,
    "flags/n.toml":
      `schema_version = 1\ntype = "number"\ndefault = "a"\n[variations]\na = 1.5\nb = -2\n`,
    "flags/o.toml": `schema_version = 1\ntype = "object"\ndefault = "a"
[variations.a]
color = "red"
sizes = [1, 2]
nested = { deep = true }
`,
  }));
  assertEquals(r.problems, []);
  assertEquals(r.manifest!.flags.o!.variations.a, {
    color: "red",
    sizes: [1, 2],
    nested: { deep: true },
  });
});

// --- files -----------------------------------------------------------------

Deno.test("validateManifest() reports unknown files", () => {
  assertEquals(
    lint({
      "README.md": "hi",
      "flags/Bad_Key.toml": FLAG,
      "flags/sub/x.toml": FLAG,
      "flags/x.json": "{}",
      "../namespace.toml": NS,
      "/flags/x.toml": FLAG,
      "segments\\x.toml": SEGMENT,
      "./namespace.toml": NS,
    }),
    [
      "../namespace.toml: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "./namespace.toml: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "/flags/x.toml: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "README.md: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      'flags/Bad_Key.toml: unknown file: "Bad_Key" is not a valid key (keys match ^[a-z0-9][a-z0-9._-]{0,62}$)',
      "flags/sub/x.toml: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "flags/x.json: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
      "segments\\x.toml: unknown file: a manifest holds only namespace.toml, flags/<key>.toml and segments/<key>.toml",
    ],
  );
});

Deno.test("validateManifest() checks the key length limit of 63 characters", () => {
  const ok = "a".repeat(63);
  const long = "a".repeat(64);
  const problems = problemsOf({ [`flags/${ok}.toml`]: FLAG, [`flags/${long}.toml`]: FLAG });
  assertEquals(problems.map((p) => p.path), [`flags/${long}.toml`]);
});

Deno.test("validateManifest() requires namespace.toml when any other file exists", () => {
  assertEquals(lint({ "namespace.toml": null, "flags/a.toml": FLAG }), [
    "namespace.toml: file is missing: a manifest with any file needs namespace.toml",
  ]);
});

Deno.test("validateManifest() accepts namespace.toml alone", () => {
  assertEquals(lint({}), []);
  assertEquals(lint({ "namespace.toml": "schema_version = 1\n" }), []);
});

Deno.test("validateManifest() reports files that are not UTF-8", () => {
  assertEquals(lint({ "flags/a.toml": new Uint8Array([0x61, 0x20, 0x3d, 0x20, 0xff]) }), [
    "flags/a.toml: file is not valid UTF-8",
  ]);
});

Deno.test("validateManifest() reports files over 1 MiB", () => {
  const big = enc.encode(FLAG + "#".repeat(1024 * 1024));
  assertEquals(lint({ "flags/a.toml": big }), [
    `flags/a.toml: file is ${big.length} bytes; the limit is 1048576 bytes (1 MiB)`,
  ]);
  const exact = new Uint8Array(1024 * 1024).fill(0x23); // "#": a 1 MiB comment
  assertEquals(
    problemsOf({ "flags/a.toml": exact }).map((p) => p.key),
    ["schema_version", "type", "variations", "default"].sort(),
  );
});

Deno.test("validateManifest() reports TOML syntax errors with line and column", () => {
  const problems = problemsOf({ "flags/a.toml": 'schema_version = 1\ntype = = "x"\n' });
  assertEquals(problems.length, 1);
  assertEquals(problems[0]!.path, "flags/a.toml");
  assertEquals(problems[0]!.line, 2);
  assert(problems[0]!.column !== undefined);
  assert(problems[0]!.message.startsWith("invalid TOML: "));
  assertEquals(problems[0]!.key, undefined);
});

// --- schema_version, unknown keys, types --------------------------------------

Deno.test("validateManifest() checks schema_version in every file", () => {
  assertEquals(
    lint({
      "namespace.toml": "schema_version = 2\n",
      "flags/a.toml": FLAG.replace("schema_version = 1\n", ""),
      "segments/b.toml": SEGMENT.replace("schema_version = 1", 'schema_version = "1"'),
    }),
    [
      "flags/a.toml: schema_version: required field is missing (use schema_version = 1)",
      "namespace.toml: schema_version: unsupported schema_version 2 (this cfgtool reads schema_version 1)",
      'segments/b.toml: schema_version: expected an integer, found the string "1"',
    ],
  );
});

Deno.test("validateManifest() reports unknown keys at every level", () => {
  assertEquals(
    lint({
      "namespace.toml": 'owner = "x"\n' + NS + `[namespace.extra]
[namespace.environments.production.colour]
`,
      "flags/a.toml": "tags = []\n" + FLAG + `[[rule]]
variation = "on"
weight = 1
[[rule]]
rollout = [ { variation = "on", weight = 100, share = 1 } ]
[environments.production]
enabled = true
note = "x"
`,
      "segments/b.toml": 'kind = "x"\n' + SEGMENT + `[[predicate]]
attribute = "a"
op = "eq"
value = 1
negate = true
`,
    }),
    [
      'flags/a.toml: environments.production.note: unknown key "note" (allowed: enabled, default, rule)',
      'flags/a.toml: rule[0].weight: unknown key "weight" (allowed: segment, variation, rollout, bucket_by)',
      'flags/a.toml: rule[1].rollout[0].share: unknown key "share" (allowed: variation, weight)',
      'flags/a.toml: tags: unknown key "tags" (allowed: schema_version, description, type, default, variations, rule, environments)',
      'namespace.toml: namespace.environments.production.colour: unknown key "colour" (allowed: public_evaluate)',
      'namespace.toml: namespace.extra: unknown key "extra" (allowed: description, environments)',
      'namespace.toml: owner: unknown key "owner" (allowed: schema_version, namespace)',
      'segments/b.toml: kind: unknown key "kind" (allowed: schema_version, description, match, predicate)',
      'segments/b.toml: predicate[1].negate: unknown key "negate"',
    ],
  );
});

Deno.test("validateManifest() reports missing required flag keys", () => {
  assertEquals(lint({ "flags/a.toml": "schema_version = 1\n" }), [
    "flags/a.toml: default: required field is missing",
    "flags/a.toml: type: required field is missing",
    "flags/a.toml: variations: required table is missing",
  ]);
});

Deno.test("validateManifest() reports wrong types", () => {
  assertEquals(
    lint({
      "namespace.toml": `schema_version = 1
[namespace]
description = 3
[namespace.environments.production]
public_evaluate = "yes"
[namespace.environments]
staging = 1
`,
      "flags/a.toml": `schema_version = 1
description = true
type = "boolean"
default = 1
variations = [1]
rule = { variation = "on" }
environments = "production"
`,
      "flags/b.toml": FLAG + `[environments.production]
enabled = "yes"
default = false
rule = "x"
`,
    }),
    [
      "flags/a.toml: default: expected a variation name, found the integer 1",
      "flags/a.toml: description: expected a string, found the boolean true",
      'flags/a.toml: environments: expected a table, found the string "production"',
      "flags/a.toml: rule: expected an array of tables ([[rule]]), found a table",
      "flags/a.toml: variations: expected a table, found an array",
      "flags/b.toml: environments.production.default: expected a variation name, found the boolean false",
      'flags/b.toml: environments.production.enabled: expected a boolean, found the string "yes"',
      'flags/b.toml: environments.production.rule: expected an array of tables ([[environments.production.rule]]), found the string "x"',
      "namespace.toml: namespace.description: expected a string, found the integer 3",
      'namespace.toml: namespace.environments.production.public_evaluate: expected a boolean, found the string "yes"',
      "namespace.toml: namespace.environments.staging: expected a table, found the integer 1",
    ],
  );
});

// --- namespace.toml --------------------------------------------------------

Deno.test("validateManifest() defaults public_evaluate to false", () => {
  const r = validateManifest(fileSet({
    "namespace.toml": "schema_version = 1\n[namespace.environments.dev]\n",
  }));
  assertEquals(r.manifest!.namespace.environments, { dev: { public_evaluate: false } });
});

Deno.test("validateManifest() checks environment keys", () => {
  assertEquals(
    lint({ "namespace.toml": 'schema_version = 1\n[namespace.environments."Prod Env"]\n' }),
    [
      'namespace.toml: namespace.environments."Prod Env": invalid environment key "Prod Env" (keys match ^[a-z0-9][a-z0-9._-]{0,62}$)',
    ],
  );
});

// --- flags -------------------------------------------------------------------

Deno.test("validateManifest() checks the flag type", () => {
  assertEquals(lint({ "flags/a.toml": FLAG.replace('"boolean"', '"json"') }), [
    'flags/a.toml: type: unknown type "json" (one of boolean, string, number, object)',
  ]);
  assertEquals(lint({ "flags/a.toml": FLAG.replace('"boolean"', "true") }), [
    "flags/a.toml: type: expected a string (one of boolean, string, number, object), found the boolean true",
  ]);
});

Deno.test("validateManifest() checks every variation value against the type", () => {
  assertEquals(
    lint({
      "flags/b.toml":
        `schema_version = 1\ntype = "boolean"\ndefault = "on"\n[variations]\non = "true"\n`,
      "flags/s.toml":
        `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\na = 1\nb = "x"\n`,
      "flags/n.toml":
        `schema_version = 1\ntype = "number"\ndefault = "a"\n[variations]\na = "1"\nb = nan\nc = inf\n`,
      "flags/o.toml": `schema_version = 1\ntype = "object"\ndefault = "a"
[variations]
a = [1, 2]
b = { x = { y = [1, nan] } }
c = "text"
`,
    }),
    [
      'flags/b.toml: variations.on: expected a boolean (the flag\'s type is boolean), found the string "true"',
      'flags/n.toml: variations.a: expected a finite number (the flag\'s type is number), found the string "1"',
      "flags/n.toml: variations.b: expected a finite number (the flag's type is number), found nan",
      "flags/n.toml: variations.c: expected a finite number (the flag's type is number), found inf",
      "flags/o.toml: variations.a: expected a table (the flag's type is object), found an array",
      "flags/o.toml: variations.b: x.y[1]: nan and inf are not JSON values",
      'flags/o.toml: variations.c: expected a table (the flag\'s type is object), found the string "text"',
      "flags/s.toml: variations.a: expected a string (the flag's type is string), found the integer 1",
    ],
  );
});

Deno.test("validateManifest() checks variation names and requires one variation", () => {
  assertEquals(
    lint({
      "flags/a.toml":
        `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\na = "x"\n1 = "y"\n"b c" = "z"\n`,
      "flags/b.toml": `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\n`,
    }),
    [
      'flags/a.toml: variations.1: invalid variation name "1" (names match ^[A-Za-z][A-Za-z0-9._-]{0,62}$)',
      'flags/a.toml: variations."b c": invalid variation name "b c" (names match ^[A-Za-z][A-Za-z0-9._-]{0,62}$)',
      'flags/b.toml: default: unknown variation "a" (variations: none)',
      "flags/b.toml: variations: a flag needs at least one variation",
    ],
  );
});

Deno.test("validateManifest() checks that default and rule variations exist", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG.replace('default = "off"', 'default = "of"') + `
[[rule]]
variation = "yes"
[environments.production]
default = "no"
[[environments.production.rule]]
variation = "maybe"
`,
    }),
    [
      'flags/a.toml: default: unknown variation "of" (variations: on, off)',
      'flags/a.toml: environments.production.default: unknown variation "no" (variations: on, off)',
      'flags/a.toml: environments.production.rule[0].variation: unknown variation "maybe" (variations: on, off)',
      'flags/a.toml: rule[0].variation: unknown variation "yes" (variations: on, off)',
    ],
  );
});

Deno.test("validateManifest() requires exactly one of variation or rollout in a rule", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[[rule]]
segment = "s"
[[rule]]
variation = "on"
rollout = [ { variation = "on", weight = 100 } ]
`,
      "segments/s.toml": SEGMENT,
    }),
    [
      "flags/a.toml: rule[0]: a rule needs exactly one of variation or rollout",
      "flags/a.toml: rule[1]: a rule has exactly one of variation or rollout, not both",
    ],
  );
});

Deno.test("validateManifest() scales rollout weights summing to 100", () => {
  const r = validateManifest(fileSet({
    "flags/a.toml": FLAG + `
[[rule]]
rollout = [ { variation = "on", weight = 0 }, { variation = "off", weight = 100 } ]
[[rule]]
rollout = [ { variation = "on", weight = 99999 }, { variation = "off", weight = 1 } ]
`,
  }));
  assertEquals(r.problems, []);
  assertEquals(r.manifest!.flags.a!.rules.map((x) => x.rollout), [
    [{ variation: "on", weight: 0 }, { variation: "off", weight: 100000 }],
    [{ variation: "on", weight: 99999 }, { variation: "off", weight: 1 }],
  ]);
});

Deno.test("validateManifest() checks rollout weights", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[[rule]]
rollout = [ { variation = "on", weight = 25 }, { variation = "off", weight = 70 } ]
[[rule]]
rollout = [ { variation = "on", weight = -5 }, { variation = "off", weight = 2.5 } ]
[[rule]]
rollout = [ { variation = "on", weight = "50" }, { variation = "off" } ]
[[rule]]
rollout = []
[[rule]]
rollout = [ { variation = "on", weight = 100001 } ]
[[rule]]
rollout = "on"
`,
    }),
    [
      "flags/a.toml: rule[0].rollout: weights sum to 95; they must sum to 100000 or to 100",
      "flags/a.toml: rule[1].rollout[0].weight: expected an integer from 0 to 100000, found the integer -5",
      "flags/a.toml: rule[1].rollout[1].weight: expected an integer from 0 to 100000, found the number 2.5",
      'flags/a.toml: rule[2].rollout[0].weight: expected an integer from 0 to 100000, found the string "50"',
      "flags/a.toml: rule[2].rollout[1].weight: required field is missing",
      "flags/a.toml: rule[3].rollout: a rollout needs at least one {variation, weight} entry",
      "flags/a.toml: rule[4].rollout[0].weight: expected an integer from 0 to 100000, found the integer 100001",
      'flags/a.toml: rule[5].rollout: expected an array of {variation, weight} tables, found the string "on"',
    ],
  );
});

Deno.test("validateManifest() checks rollout variations", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[[rule]]
rollout = [ { variation = "onn", weight = 50 }, { weight = 50 } ]
[[rule]]
rollout = [ { variation = "on", weight = 50 }, { variation = "on", weight = 50 } ]
`,
    }),
    [
      'flags/a.toml: rule[0].rollout[0].variation: unknown variation "onn" (variations: on, off)',
      "flags/a.toml: rule[0].rollout[1].variation: required field is missing",
      'flags/a.toml: rule[1].rollout[1].variation: variation "on" appears twice in the rollout',
    ],
  );
});

Deno.test("validateManifest() checks bucket_by and defaults it to targeting_key", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[[rule]]
bucket_by = "user..id"
rollout = [ { variation = "on", weight = 100 } ]
[[rule]]
bucket_by = 7
rollout = [ { variation = "on", weight = 100 } ]
[[rule]]
bucket_by = "user.id"
variation = "on"
`,
    }),
    [
      'flags/a.toml: rule[0].bucket_by: "user..id" is not a dotted context path',
      "flags/a.toml: rule[1].bucket_by: expected a dotted context path, found the integer 7",
      "flags/a.toml: rule[2].bucket_by: bucket_by applies only to a rule with a rollout",
    ],
  );
  const r = validateManifest(fileSet({
    "flags/a.toml": FLAG + '[[rule]]\nrollout = [ { variation = "on", weight = 100 } ]\n',
  }));
  assertEquals(r.manifest!.flags.a!.rules[0]!.bucket_by, "targeting_key");
});

Deno.test("validateManifest() reports unknown segments in rules", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[[rule]]
segment = "beta"
variation = "on"
[[rule]]
segment = "gamma"
variation = "on"
[[rule]]
segment = 1
variation = "on"
[[environments.staging.rule]]
segment = "delta"
variation = "on"
`,
      "segments/beta.toml": SEGMENT,
    }),
    [
      'flags/a.toml: environments.staging.rule[0].segment: unknown segment "delta"',
      'flags/a.toml: rule[1].segment: unknown segment "gamma"',
      "flags/a.toml: rule[2].segment: expected a segment key, found the integer 1",
    ],
  );
});

Deno.test("validateManifest() quotes at most 80 characters of an unknown name", () => {
  const long = "beta" + "x".repeat(200_000);
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `[[rule]]\nsegment = "${long}"\nvariation = "on"\n`,
      "segments/beta.toml": SEGMENT,
    }),
    [`flags/a.toml: rule[0].segment: unknown segment "${long.slice(0, 80)}…"`],
  );
});

Deno.test("validateManifest() counts a segment whose file has problems as existing", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + '[[rule]]\nsegment = "beta"\nvariation = "on"\n',
      "segments/beta.toml": "schema_version = = 1\n",
    }).map((l) => l.split(":")[0]),
    ["segments/beta.toml"],
  );
});

// --- environments ------------------------------------------------------------

Deno.test("validateManifest() reports overrides for undeclared environments", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[environments.prod]
enabled = false
[environments.staging]
enabled = false
`,
    }),
    ['flags/a.toml: environments.prod: unknown environment "prod" (namespace.toml declares production, staging)'],
  );
  assertEquals(
    lint({
      "namespace.toml": "schema_version = 1\n",
      "flags/a.toml": FLAG + "[environments.qa]\n",
    }),
    ['flags/a.toml: environments.qa: unknown environment "qa" (namespace.toml declares none)'],
  );
});

Deno.test("validateManifest() does not check environments when namespace.toml is unreadable", () => {
  assertEquals(
    lint({
      "namespace.toml": "schema_version = \n",
      "flags/a.toml": FLAG + "[environments.qa]\n",
    }).map((l) => l.split(":")[0]),
    ["namespace.toml"],
  );
});

Deno.test("validateManifest() limits override keys to enabled, default and rule", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + `
[environments.production]
variations = { on = false }
type = "string"
`,
    }),
    [
      'flags/a.toml: environments.production.type: unknown key "type" (allowed: enabled, default, rule)',
      'flags/a.toml: environments.production.variations: unknown key "variations" (allowed: enabled, default, rule)',
    ],
  );
});

// --- segments ----------------------------------------------------------------

Deno.test("validateManifest() checks segment match", () => {
  assertEquals(
    lint({
      "segments/a.toml": 'match = "some"\n' + SEGMENT,
      "segments/b.toml": SEGMENT.replace("[[predicate]]", "match = true\n[[predicate]]"),
    }),
    [
      'segments/a.toml: match: unknown match "some" (one of all, any)',
      "segments/b.toml: match: expected a string (all or any), found the boolean true",
    ],
  );
  const r = validateManifest(fileSet({
    "segments/a.toml": SEGMENT.replace("[[predicate]]", 'match = "any"\n[[predicate]]'),
  }));
  assertEquals(r.manifest!.segments.a!.match, "any");
});

Deno.test("validateManifest() requires at least one predicate per segment", () => {
  assertEquals(
    lint({
      "segments/a.toml": "schema_version = 1\n",
      "segments/b.toml": "schema_version = 1\npredicate = []\n",
      "segments/c.toml": 'schema_version = 1\npredicate = "x"\n',
    }),
    [
      "segments/a.toml: predicate: required field is missing (add at least one [[predicate]])",
      "segments/b.toml: predicate: a segment needs at least one predicate",
      'segments/c.toml: predicate: expected an array of tables ([[predicate]]), found the string "x"',
    ],
  );
});

Deno.test("validateManifest() checks predicates with the shared engine", () => {
  assertEquals(
    lint({
      "segments/a.toml": `schema_version = 1
[[predicate]]
attribute = "account.plan"
op = "like"
value = "pro"
[[predicate]]
attribute = "age"
op = "gt"
value = "18"
[[predicate]]
op = "eq"
value = 1
[[predicate]]
attribute = "segment.a"
op = "in"
value = [true]
predicate = 3
`,
    }).filter((l) => !l.includes("cycle")),
    [
      'segments/a.toml: predicate[0].op: unknown operator "like" (one of eq, neq, in, not_in, lt, lte, gt, gte, starts_with, ends_with, contains, matches, exists, semver_eq, semver_lt, semver_gt, before, after)',
      "segments/a.toml: predicate[1].value: gt compares with a number",
      "segments/a.toml: predicate[2].attribute: attribute is required and must be a string",
      'segments/a.toml: predicate[3].op: a segment reference takes op "eq"',
      'segments/a.toml: predicate[3].predicate: unknown key "predicate"',
      "segments/a.toml: predicate[3].value: a segment reference compares with true or false",
    ],
  );
});

Deno.test("validateManifest() checks before and after values: RFC 3339 with a zone, or a date", () => {
  const pred = (op: string, value: string) =>
    `[[predicate]]\nattribute = "user.created_at"\nop = "${op}"\nvalue = ${value}\n`;
  const files = {
    "segments/ok.toml": "schema_version = 1\n" +
      pred("after", '"2026-01-01T00:00:00Z"') +
      pred("before", '"2026-06-30T12:00:00.250+02:00"') +
      pred("after", '"2026-01-01"') +
      // unquoted TOML dates read as the same RFC 3339 text
      pred("before", "2027-01-01T00:00:00Z") +
      pred("before", "2027-01-01"),
    "segments/bad.toml": "schema_version = 1\n" +
      pred("after", '"2026-01-01T00:00:00"') +
      pred("after", "2026-01-01T00:00:00") + // a TOML local date-time: no zone
      pred("before", '"2026-02-30"') +
      pred("before", '"next monday"') +
      pred("before", "1767225600000") +
      pred("after", '["2026-01-01"]'),
  };
  const why = (op: string) =>
    `${op} takes an RFC 3339 date-time with its zone, such as "2026-01-01T00:00:00Z", ` +
    `or a date such as "2026-01-01" (midnight UTC)`;
  assertEquals(lint(files), [
    `segments/bad.toml: predicate[0].value: ${why("after")}`,
    `segments/bad.toml: predicate[1].value: ${why("after")}`,
    `segments/bad.toml: predicate[2].value: ${why("before")}`,
    `segments/bad.toml: predicate[3].value: ${why("before")}`,
    `segments/bad.toml: predicate[4].value: ${why("before")}`,
    `segments/bad.toml: predicate[5].value: ${why("after")}`,
  ]);
  const r = validateManifest(fileSet({ "segments/ok.toml": files["segments/ok.toml"] }));
  assertEquals(r.problems, []);
  assertEquals(r.manifest!.segments.ok!.predicates.map((p) => [p.op, p.value]), [
    ["after", "2026-01-01T00:00:00Z"],
    ["before", "2026-06-30T12:00:00.250+02:00"],
    ["after", "2026-01-01"],
    ["before", "2027-01-01T00:00:00.000Z"],
    ["before", "2027-01-01"],
  ]);
});

Deno.test("validateManifest() reports unknown segments in segment predicates", () => {
  assertEquals(
    lint({
      "segments/a.toml": `schema_version = 1
[[predicate]]
attribute = "segment.b"
op = "eq"
value = true
[[predicate]]
attribute = "segment.nope"
op = "eq"
value = false
`,
      "segments/b.toml": SEGMENT,
    }),
    ['segments/a.toml: predicate[1].attribute: unknown segment "nope"'],
  );
});

Deno.test("validateManifest() suggests the nearest segment for a misspelt one", () => {
  assertEquals(
    lint({
      "flags/a.toml": FLAG + '[[rule]]\nsegment = "eu-customer"\nvariation = "on"\n',
      "segments/eu-customers.toml": SEGMENT,
      "segments/b.toml": SEGMENT.replace(
        "[[predicate]]",
        '[[predicate]]\nattribute = "segment.eu-custmers"\nop = "eq"\nvalue = true\n[[predicate]]',
      ),
    }),
    [
      'flags/a.toml: rule[0].segment: unknown segment "eu-customer"; did you mean "eu-customers"?',
      'segments/b.toml: predicate[0].attribute: unknown segment "eu-custmers"; did you mean ' +
      '"eu-customers"?',
    ],
  );
});

function refSegment(...targets: string[]): string {
  return 'schema_version = 1\nmatch = "any"\n' +
    targets.map((t) => `[[predicate]]\nattribute = "segment.${t}"\nop = "eq"\nvalue = true\n`)
      .join("");
}

Deno.test("validateManifest() reports segment reference cycles, naming the cycle", () => {
  assertEquals(
    lint({
      "segments/a.toml": refSegment("b"),
      "segments/b.toml": refSegment("c"),
      "segments/c.toml": refSegment("a"),
      "segments/self.toml": refSegment("self"),
      "segments/x.toml": refSegment("ok", "y"),
      "segments/y.toml": refSegment("x"),
      "segments/ok.toml": SEGMENT,
    }),
    [
      "segments/a.toml: predicate[0].attribute: segment reference cycle: a -> b -> c -> a",
      "segments/self.toml: predicate[0].attribute: segment reference cycle: self -> self",
      "segments/x.toml: predicate[1].attribute: segment reference cycle: x -> y -> x",
    ],
  );
});

Deno.test("validateManifest() accepts diamond-shaped segment references", () => {
  assertEquals(
    lint({
      "segments/top.toml": refSegment("left", "right"),
      "segments/left.toml": refSegment("bottom"),
      "segments/right.toml": refSegment("bottom"),
      "segments/bottom.toml": SEGMENT,
    }),
    [],
  );
});

Deno.test("validateManifest() survives a long segment reference chain", () => {
  const files: Record<string, string> = {};
  const n = 5000;
  for (let i = 0; i < n; i++) files[`segments/s${i}.toml`] = refSegment(`s${(i + 1) % n}`);
  const lines = lint(files);
  assertEquals(lines.length, 1);
  assert(
    lines[0]!.startsWith(
      "segments/s0.toml: predicate[0].attribute: segment reference cycle: s0 -> s1 -> ",
    ),
  );
  assert(lines[0]!.endsWith(" -> s4999 -> s0"));
});

function chain(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n - 1; i++) files[`segments/s${i}.toml`] = refSegment(`s${i + 1}`);
  files[`segments/s${n - 1}.toml`] = SEGMENT;
  return files;
}

Deno.test("validateManifest() refuses a 5,000-deep segment chain, naming the chain once", () => {
  assertEquals(lint(chain(5000)), [
    "segments/s0.toml: predicate[0].attribute: segment references nest 5000 deep " +
    "(s0 -> s1 -> s2 -> s3 -> … (4995 more) -> s4999); the limit is 32 segments in a chain",
  ]);
});

Deno.test("validateManifest() accepts segment chains of up to 32 segments", () => {
  assertEquals(MAX_SEGMENT_DEPTH, 32);
  assertEquals(lint(chain(32)), []);
  assertEquals(lint(chain(33)), [
    "segments/s0.toml: predicate[0].attribute: segment references nest 33 deep " +
    "(s0 -> s1 -> s2 -> s3 -> … (28 more) -> s32); the limit is 32 segments in a chain",
  ]);
});

Deno.test("validateManifest() reports each over-deep chain at the segment that starts it", () => {
  const files = chain(40);
  files["segments/top.toml"] = refSegment("short", "s5");
  files["segments/short.toml"] = SEGMENT;
  assertEquals(lint(files), [
    "segments/s0.toml: predicate[0].attribute: segment references nest 40 deep " +
    "(s0 -> s1 -> s2 -> s3 -> … (35 more) -> s39); the limit is 32 segments in a chain",
    "segments/top.toml: predicate[1].attribute: segment references nest 36 deep " +
    "(top -> s5 -> s6 -> s7 -> … (31 more) -> s39); the limit is 32 segments in a chain",
  ]);
});

// --- all at once, order ------------------------------------------------------

Deno.test("validateManifest() reports several problems at once in a stable order", () => {
  const files = {
    "notes.txt": "x",
    "segments/s.toml": 'schema_version = 1\nmatch = "most"\n',
    "flags/b.toml": 'type = = "x"',
    "flags/a.toml": FLAG + `
[[rule]]
variation = "x"
[[rule]]
variation = "y"
[[rule]]
variation = "z"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "on"
[[rule]]
variation = "w"
[environments.qa]
`,
  };
  const problems = problemsOf(files);
  assertEquals(problems.map((p) => [p.path, p.key ?? null]), [
    ["flags/a.toml", "environments.qa"],
    ["flags/a.toml", "rule[0].variation"],
    ["flags/a.toml", "rule[1].variation"],
    ["flags/a.toml", "rule[2].variation"],
    ["flags/a.toml", "rule[10].variation"],
    ["flags/b.toml", null],
    ["notes.txt", null],
    ["segments/s.toml", "match"],
    ["segments/s.toml", "predicate"],
  ]);
  // the same input in another order gives the same problems
  const reversed = Object.fromEntries(Object.entries(files).reverse());
  assertEquals(problemsOf(reversed), problems);
});

Deno.test("parseManifest() throws ProblemsError with every problem", () => {
  const err = assertThrows(
    () => parseManifest(fileSet({ "flags/a.toml": "schema_version = 1\n" })),
    ProblemsError,
  );
  assertEquals(err.problems.length, 3);
  assertEquals(err.code, "invalid_manifest");
});

Deno.test("validateManifest() refuses more environments than the limit, and accepts the limit", () => {
  const ns = (count: number) =>
    "schema_version = 1\n" +
    Array.from({ length: count }, (_, i) => `[namespace.environments.env-${i}]\n`).join("");
  assertEquals(lint({ "namespace.toml": ns(MAX_ENVIRONMENTS) }), []);
  assertEquals(lint({ "namespace.toml": ns(MAX_ENVIRONMENTS + 1) }), [
    `namespace.toml: namespace.environments: declares ${
      MAX_ENVIRONMENTS + 1
    } environments; the limit is ${MAX_ENVIRONMENTS}`,
  ]);
});

/** A manifest an earlier release accepted: a JS-only pattern, a 40-deep chain, 101 environments. */
function olderReleaseManifest(): Record<string, string | null> {
  const files: Record<string, string | null> = {
    "namespace.toml": "schema_version = 1\n" +
      Array.from({ length: MAX_ENVIRONMENTS + 1 }, (_, i) => `[namespace.environments.env-${i}]\n`)
        .join(""),
    "segments/js.toml":
      'schema_version = 1\n[[predicate]]\nattribute = "name"\nop = "matches"\nvalue = \'^\\u0041\'\n',
    ...chain(40),
  };
  return files;
}

Deno.test("validateManifest() refuses an older release's manifest when checking a push", () => {
  const lines = lint(olderReleaseManifest());
  assertEquals(lines, [
    `namespace.toml: namespace.environments: declares ${
      MAX_ENVIRONMENTS + 1
    } environments; the limit is ${MAX_ENVIRONMENTS}`,
    "segments/js.toml: predicate[0].value: invalid regular expression (RE2 syntax): " +
    "invalid escape sequence: `\\u`",
    "segments/s0.toml: predicate[0].attribute: segment references nest 40 deep " +
    "(s0 -> s1 -> s2 -> s3 -> … (35 more) -> s39); the limit is 32 segments in a chain",
  ]);
});

Deno.test("validateManifest({stored}) loads an older release's manifest, warning about the pattern it cannot run", () => {
  const r = validateManifest(fileSet(olderReleaseManifest()), { stored: true });
  assertEquals(r.problems, []);
  assertEquals(Object.keys(r.manifest!.namespace.environments).length, MAX_ENVIRONMENTS + 1);
  assertEquals(Object.keys(r.manifest!.segments).length, 41);
  assertEquals(r.manifest!.segments.js!.predicates, [
    { attribute: "name", op: "matches", value: "^\\u0041" },
  ]);
  assertEquals(r.warnings.map(formatProblem), [
    "segments/js.toml: predicate[0].value: invalid regular expression (RE2 syntax): " +
    "invalid escape sequence: `\\u`; this predicate never holds",
  ]);
  // strict mode never warns: what it cannot accept is a problem
  assertEquals(validateManifest(fileSet(olderReleaseManifest())).warnings, []);
});

Deno.test("validateManifest({stored}) still refuses what cannot be compiled or evaluated", () => {
  assertEquals(
    validateManifest(
      fileSet({
        "segments/a.toml": refSegment("b"),
        "segments/b.toml": refSegment("a"),
        "segments/c.toml":
          'schema_version = 1\n[[predicate]]\nattribute = "n"\nop = "matches"\nvalue = 3\n',
        "flags/x.toml": "schema_version = 1\ntype = 3\n",
      }),
      { stored: true },
    ).problems.map(formatProblem),
    [
      "flags/x.toml: default: required field is missing",
      "flags/x.toml: type: expected a string (one of boolean, string, number, object), " +
      "found the integer 3",
      "flags/x.toml: variations: required table is missing",
      "segments/a.toml: predicate[0].attribute: segment reference cycle: a -> b -> a",
      "segments/c.toml: predicate[0].value: matches takes a regular expression string",
    ],
  );
});

Deno.test("parseManifest({stored}) gives the model an older release's manifest needs", () => {
  const files = fileSet(olderReleaseManifest());
  assertThrows(() => parseManifest(files), ProblemsError);
  assertEquals(Object.keys(parseManifest(files, { stored: true }).segments).length, 41);
});
