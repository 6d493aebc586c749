/**
 * Whether the full TOML reader (lib/toml.ts, on smol-toml) may wait to be
 * loaded until a file needs it (see lib/workspace/toml_reader.ts). A module
 * of its own, without imports, so that a command line can ask for it before
 * anything that reads TOML is loaded (as lib/flags/compile_defer.ts does for
 * the `matches` engine).
 *
 * @module
 */

let deferred = false;

/**
 * Asks for the full TOML reader to be loaded only when a file is not plain
 * TOML (lib/workspace/plain_toml.ts). Call it before
 * lib/workspace/toml_reader.ts is first loaded (it has no effect later);
 * `cfgtool resolve` does, so a workspace of plain files never loads
 * smol-toml. Everything that reads workspace TOML must then be ready for
 * `FullTomlNeededError` (lib/workspace/toml_reader.ts), as
 * lib/workspace/open.ts is.
 *
 * @example
 * ```ts
 * // In a process of its own: deferring is for the whole process.
 * const defer = new URL("./toml_defer.ts", import.meta.url).href;
 * const reader = new URL("./toml_reader.ts", import.meta.url).href;
 * const code = `
 *   const { deferFullToml } = await import("${defer}");
 *   deferFullToml();
 *   const r = await import("${reader}");
 *   if (r.fullTomlLoaded()) Deno.exit(1);
 *   if (!r.readTomlText("a = 1\\n", "x.toml").ok) Deno.exit(2);
 *   try {
 *     r.readTomlText("a = 2026-12-02\\n", "x.toml");
 *     Deno.exit(3);
 *   } catch (e) {
 *     if (!(e instanceof r.FullTomlNeededError)) Deno.exit(5);
 *   }
 *   await r.loadFullToml();
 *   if (!r.readTomlText("a = 2026-12-02\\n", "x.toml").ok) Deno.exit(4);
 * `;
 * const { code: status } = await new Deno.Command(Deno.execPath(), {
 *   args: ["eval", code],
 * }).output();
 * if (status !== 0) throw new Error(`exit ${status}`);
 * ```
 */
export function deferFullToml(): void {
  deferred = true;
}

/**
 * Whether {@linkcode deferFullToml} was called in this process.
 *
 * @example
 * ```ts
 * import { fullTomlDeferred } from "./toml_defer.ts";
 * if (fullTomlDeferred()) throw new Error("eager unless asked");
 * ```
 */
export function fullTomlDeferred(): boolean {
  return deferred;
}
