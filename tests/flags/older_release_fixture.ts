/**
 * Test fixture: a manifest the release before the stricter `matches`,
 * nesting and environment rules accepted, and the current push refuses.
 * It has a `matches` pattern only JavaScript understands (`^\u0041`), a
 * 40-deep chain of segment references and 101 environments.
 *
 * - `flags/by-name` is `on` for segment `js` (the JS-only pattern on `name`),
 *   which never holds now.
 * - `flags/deep` is `on` for segment `s0`, the top of the chain; the bottom,
 *   `s39`, holds for `plan = "pro"`.
 *
 * @module
 */

/** Environments declared: `production` and `env-1` … `env-100`. */
export const OLDER_ENVIRONMENTS = 101;

/** Segments in the reference chain `s0 -> … -> s39`. */
export const OLDER_CHAIN = 40;

const onFor = (segment: string) =>
  `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n` +
  `[[rule]]\nsegment = "${segment}"\nvariation = "on"\n`;

/** The manifest, path → text. */
export function olderReleaseFiles(): Record<string, string> {
  const envs = [
    "production",
    ...Array.from({ length: OLDER_ENVIRONMENTS - 1 }, (_, i) => `env-${i + 1}`),
  ];
  const files: Record<string, string> = {
    "namespace.toml": "schema_version = 1\n" +
      envs.map((e) => `[namespace.environments.${e}]\n`).join(""),
    "segments/js.toml":
      'schema_version = 1\n[[predicate]]\nattribute = "name"\nop = "matches"\nvalue = \'^\\u0041\'\n',
    "flags/by-name.toml": onFor("js"),
    "flags/deep.toml": onFor("s0"),
  };
  for (let i = 0; i < OLDER_CHAIN; i++) {
    files[`segments/s${i}.toml`] = "schema_version = 1\n[[predicate]]\n" +
      (i === OLDER_CHAIN - 1
        ? 'attribute = "plan"\nop = "eq"\nvalue = "pro"\n'
        : `attribute = "segment.s${i + 1}"\nop = "eq"\nvalue = true\n`);
  }
  return files;
}

/** The manifest as file bytes. */
export function olderReleaseFileSet(): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  return new Map(Object.entries(olderReleaseFiles()).map(([p, t]) => [p, enc.encode(t)]));
}
