/**
 * The console's static assets (htmx, its own script and stylesheet), part
 * of the module graph through text imports, so `deno compile` carries them
 * and nothing is read from the source tree at run time. Each is served
 * under a name holding a digest of its bytes, cached for a year: a new
 * build changes the name, never the bytes behind a name.
 *
 * @module
 */
import { sha256 } from "@noble/hashes/sha2";
import htmx from "htmx.org/dist/htmx.min.js" with { type: "text" };
import script from "./assets/console.js" with { type: "text" };
import stylesheet from "./assets/console.css" with { type: "text" };

/** One served asset. */
export interface Asset {
  /** The name it is served under (`console-1a2b3c4d.css`). */
  name: string;
  /** Its bytes. */
  body: Uint8Array;
  /** Its media type. */
  type: string;
}

function asset(base: string, ext: string, text: string, type: string): Asset {
  const body = new TextEncoder().encode(text);
  const digest = Array.from(sha256(body).slice(0, 5), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  return { name: `${base}-${digest}.${ext}`, body, type };
}

/**
 * The console's assets by role.
 *
 * @example
 * ```ts
 * import { ASSETS } from "./assets.ts";
 * if (!/^htmx-[0-9a-f]{10}\.js$/.test(ASSETS.htmx.name)) throw new Error(ASSETS.htmx.name);
 * ```
 */
export const ASSETS: Readonly<Record<"htmx" | "script" | "stylesheet", Asset>> = Object.freeze({
  htmx: asset("htmx", "js", htmx, "text/javascript; charset=utf-8"),
  script: asset("console", "js", script, "text/javascript; charset=utf-8"),
  stylesheet: asset("console", "css", stylesheet, "text/css; charset=utf-8"),
});

const BY_NAME = new Map(Object.values(ASSETS).map((a) => [a.name, a]));

/**
 * The asset served under `name`, or undefined.
 *
 * @param name the requested name
 * @returns the asset
 *
 * @example
 * ```ts
 * import { ASSETS, assetNamed } from "./assets.ts";
 * if (assetNamed(ASSETS.script.name) !== ASSETS.script || assetNamed("x.js")) throw new Error();
 * ```
 */
export function assetNamed(name: string): Asset | undefined {
  return BY_NAME.get(name);
}
