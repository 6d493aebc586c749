/**
 * Random flagd flag definitions, valid or not in their parts: the
 * imported manifest always passes the validator, and every flag of the
 * source is in the report, with why when it was not written.
 */
import fc from "fast-check";
import { assert, assertEquals } from "../assert.ts";
import { filesOf } from "../../lib/flags/authoring/texts.ts";
import { validateManifest } from "../../lib/flags/validate.ts";
import { importFlagd } from "../../lib/import/flagd.ts";

const name = fc.oneof(
  fc.constantFrom("on", "off", "true", "false", "red", "a", "#FF0000", "1", "x y"),
  fc.string({ minLength: 1, maxLength: 8 }),
);
const attr = fc.oneof(
  fc.constantFrom(
    "email",
    "user.plan",
    "targetingKey",
    "$flagd.flagKey",
    "$flagd.timestamp",
    "a b",
    "",
  ),
  fc.string({ maxLength: 6 }),
);
const scalar = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer({ min: -5, max: 100 }),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom("1.2.3", "2.0.0-rc.1", "v3.1.0", "abc"),
);
const variable = fc.oneof(
  attr.map((a) => ({ var: a })),
  fc.tuple(attr, scalar).map(([a, d]) => ({ var: [a, d] })),
);
const operand = fc.oneof(variable, scalar);

const { cond } = fc.letrec<{ cond: unknown }>((tie) => ({
  cond: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(
      fc.constantFrom(
        "==",
        "===",
        "!=",
        "!==",
        "<",
        "<=",
        ">",
        ">=",
        "in",
        "starts_with",
        "ends_with",
      ),
      operand,
      operand,
    )
      .map(([op, l, r]) => ({ [op]: [l, r] })),
    fc.tuple(variable, fc.array(scalar, { maxLength: 4 })).map(([v, xs]) => ({ in: [v, xs] })),
    fc.tuple(variable, fc.constantFrom("=", "!=", ">", "<", ">=", "<=", "~", "^", "?"), scalar)
      .map(([v, op, x]) => ({ sem_ver: [v, op, x] })),
    fc.array(tie("cond"), { maxLength: 3 }).map((xs) => ({ and: xs })),
    fc.array(tie("cond"), { maxLength: 3 }).map((xs) => ({ or: xs })),
    tie("cond").map((x) => ({ "!": x })),
    fc.constantFrom("shared", "missing").map((r) => ({ $ref: r })),
    fc.tuple(
      fc.constantFrom("+", "cat", "substr", "missing", "if", "var"),
      fc.array(operand, { maxLength: 3 }),
    )
      .map(([op, xs]) => ({ [op]: xs })),
    scalar,
  ),
}));

const { expr } = fc.letrec<{ expr: unknown }>((tie) => ({
  expr: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    name,
    fc.constantFrom(null, true, false),
    fc.tuple(cond, tie("expr"), fc.option(tie("expr"), { nil: undefined }))
      .map(([c, t, e]) => ({ if: e === undefined ? [c, t] : [c, t, e] })),
    fc.tuple(
      fc.option(variable, { nil: undefined }),
      fc.array(
        fc.tuple(name, fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constant({ var: "w" }))),
        {
          minLength: 1,
          maxLength: 4,
        },
      ),
    ).map(([v, es]) => ({ fractional: v === undefined ? es : [v, ...es] })),
    cond,
  ),
}));

const variants = fc.oneof(
  fc.dictionary(name, fc.boolean(), { minKeys: 1, maxKeys: 4 }),
  fc.dictionary(name, fc.string({ maxLength: 5 }), { minKeys: 1, maxKeys: 4 }),
  fc.dictionary(name, fc.double({ noNaN: true, min: -1e6, max: 1e6 }), { minKeys: 1, maxKeys: 4 }),
  fc.dictionary(
    name,
    fc.dictionary(
      fc.string({ maxLength: 4 }),
      fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
    ),
    {
      minKeys: 1,
      maxKeys: 3,
    },
  ),
  fc.dictionary(name, scalar, { minKeys: 0, maxKeys: 3 }),
);

const flag = fc.record({
  state: fc.constantFrom("ENABLED", "DISABLED", "OFF"),
  variants,
  defaultVariant: fc.oneof(name, fc.constant(null)),
  targeting: fc.oneof(expr, fc.constant({})),
}, { requiredKeys: ["variants"] });

const definition = fc.record({
  flags: fc.dictionary(fc.string({ minLength: 1, maxLength: 70 }), flag, { maxKeys: 5 }),
  $evaluators: fc.record({ shared: cond }),
});

Deno.test("an imported flagd definition always lints, or the report says why each part is not there", () => {
  fc.assert(
    fc.property(definition, (def) => {
      const r = importFlagd(JSON.stringify(def), { file: "f.json", envMap: new Map() });
      const { problems } = validateManifest(filesOf(r.files));
      assertEquals(problems, []);
      const reported = r.items.filter((i) => i.kind === "flag").map((i) => i.sourceKey ?? i.key);
      assertEquals(reported, Object.keys(def.flags));
      for (const i of r.items) {
        if (!i.written) assert(i.unmapped.length + i.notes.length > 0, JSON.stringify(i));
        if (i.written) {
          assert(r.files.has(`${i.kind === "flag" ? "flags" : "segments"}/${i.key}.toml`));
        }
      }
    }),
    { numRuns: 150 },
  );
});
