/**
 * Test helper: the `theme` flag the relay tests and bench push and hold
 * (a string flag, variations `light` and `dark`, and whichever others a
 * test adds), as TOML and as a verified closure state.
 *
 * @module
 */
import { ClosureState } from "../../lib/client/closure_state.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { manifestFiles } from "../e2e/evaluation_fixture.ts";

/** Options of {@linkcode themeToml}. */
export interface ThemeOptions {
  /** Its description (default `Theme`). */
  description?: string;
  /** Its default variation (default `light`). */
  default?: string;
  /** Variations beyond `light` and `dark`. */
  more?: string[];
}

/**
 * `flags/theme.toml`.
 *
 * @example
 * ```ts
 * import { themeToml } from "./theme_fixture.ts";
 * import { assert } from "../assert.ts";
 * assert(themeToml({ default: "dark", more: ["sepia"] }).includes('sepia = "sepia"'));
 * ```
 */
export function themeToml(options: ThemeOptions = {}): string {
  const variations = ["light", "dark", ...(options.more ?? [])];
  return `schema_version = 1
description = "${options.description ?? "Theme"}"
type = "string"
default = "${options.default ?? "light"}"
[variations]
${variations.map((v) => `${v} = "${v}"\n`).join("")}`;
}

/**
 * The closure state of namespace `ns` at `version`: the evaluation
 * fixture's manifest with the theme flag described as `Theme <theme>`.
 *
 * @example
 * ```ts
 * import { themeState } from "./theme_fixture.ts";
 * import { assert } from "../assert.ts";
 * const s = await themeState(3, { ns: "api" });
 * assert(s.version === 3 && s.files.has("flags/theme.toml"));
 * ```
 */
export async function themeState(
  version: number,
  options: { ns?: string; theme?: string } = {},
): Promise<ClosureState> {
  const enc = new TextEncoder();
  const files = new Map(
    Object.entries(
      manifestFiles({
        "flags/theme.toml": themeToml({ description: `Theme ${options.theme ?? "light"}` }),
      }).files,
    ).map(([p, t]) => [p, enc.encode(t)]),
  );
  return await ClosureState.fromFiles(
    options.ns ?? "web",
    version,
    files,
    await closureHash(files),
  );
}
