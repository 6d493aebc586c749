/**
 * The semantic versions of the `semver_*` operators (lib/flags/semver.ts)
 * read and order exactly as the npm `semver` package does in strict mode:
 * the same texts are versions, with the same normal form, in the same order.
 */
import fc from "fast-check";
import semver from "semver";
import { assertEquals } from "../assert.ts";
import { compareSemver, parseSemver } from "../../lib/flags/semver.ts";

/** A piece of version text: near-valid more often than not. */
const piece = fc.oneof(
  fc.constantFrom("0", "1", "2", "9", "10", "01", "00", "007"),
  fc.constantFrom(
    ".",
    "-",
    "+",
    "v",
    "V",
    "=",
    " ",
    "\t",
    "\u00a0",
    "a",
    "Z",
    "rc",
    "beta",
    "x",
    "*",
  ),
  fc.constantFrom("9007199254740991", "9007199254740992", "99999999999999999999"),
  fc.nat({ max: 30 }).map(String),
  fc.string({ maxLength: 3 }),
);

/** Texts shaped like versions, often with faults. */
const text = fc.oneof(
  fc.array(piece, { maxLength: 12 }).map((xs) => xs.join("")),
  fc.tuple(
    fc.constantFrom("", "v", " ", "=", "V"),
    fc.array(fc.nat({ max: 12 }).map(String), { minLength: 3, maxLength: 3 }),
    fc.array(
      fc.oneof(
        fc.constantFrom("rc", "alpha", "beta", "0", "1", "01", "-", "x-1", ""),
        fc.nat({ max: 20 }).map(String),
      ),
      { maxLength: 4 },
    ),
    fc.array(fc.constantFrom("b", "001", "sha.5", "", "x-y"), { maxLength: 2 }),
    fc.constantFrom("", " ", "\n"),
  ).map(([pre, main, rel, build, post]) =>
    `${pre}${main.join(".")}${rel.length ? `-${rel.join(".")}` : ""}${
      build.length ? `+${build.join(".")}` : ""
    }${post}`
  ),
  fc.string({ maxLength: 20 }),
);

Deno.test("a text is a version, with the same normal form, exactly when npm semver says so", () => {
  fc.assert(
    fc.property(text, (s) => {
      assertEquals(parseSemver(s)?.version ?? null, semver.valid(s), JSON.stringify(s));
    }),
    { numRuns: 5000 },
  );
  for (
    const s of [
      "1.2.3",
      "v1.2.3",
      " 1.2.3 ",
      "=1.2.3",
      "1.2.3-",
      "1.2.3-a..b",
      "1.2.3+",
      "1.2.3-0a",
      "1.2.3-01",
    ]
  ) {
    assertEquals(parseSemver(s)?.version ?? null, semver.valid(s), s);
  }
  const long = `1.2.3-${"a".repeat(250)}`;
  assertEquals(parseSemver(long)?.version ?? null, semver.valid(long));
  assertEquals(parseSemver(`${long}a`)?.version ?? null, semver.valid(`${long}a`));
});

Deno.test("versions are ordered as npm semver orders them", () => {
  const version = text.filter((s) => semver.valid(s) !== null);
  fc.assert(
    fc.property(version, version, (a, b) => {
      assertEquals(
        compareSemver(parseSemver(a)!, parseSemver(b)!),
        semver.compare(a, b),
        `${a} ${b}`,
      );
    }),
    { numRuns: 3000 },
  );
  const ordered = [
    "1.0.0-1",
    "1.0.0-2",
    "1.0.0-10",
    "1.0.0-a",
    "1.0.0-a.1",
    "1.0.0-b",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
  ];
  for (let i = 0; i + 1 < ordered.length; i++) {
    assertEquals(
      compareSemver(parseSemver(ordered[i])!, parseSemver(ordered[i + 1])!),
      -1,
      ordered[i],
    );
  }
});
