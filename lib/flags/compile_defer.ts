/**
 * Whether the `matches` pattern engine may wait to be loaded until a
 * workspace or manifest needs it (see lib/flags/compile_pattern.ts). A
 * module of its own, without imports, so that a command line can ask for it
 * before anything that compiles predicates is loaded.
 *
 * @module
 */

let deferred = false;

/**
 * Asks for the pattern engine to be loaded only when something needs it:
 * the workspace reader (lib/workspace/files.ts) then loads it when a file
 * holds a `matches` predicate. Call it before lib/flags/compile_pattern.ts is
 * first loaded (it has no effect later); `cfgtool resolve` does, so a
 * workspace without `matches` never loads the engine. Everything that
 * compiles a `matches` predicate must then have awaited
 * `loadPatternEngine()` first.
 *
 * @example
 * ```ts
 * // In a process of its own: deferring is for the whole process.
 * const defer = new URL("./compile_defer.ts", import.meta.url).href;
 * const engine = new URL("./compile_pattern.ts", import.meta.url).href;
 * const code = `
 *   const { deferPatternEngine } = await import("${defer}");
 *   deferPatternEngine();
 *   const p = await import("${engine}");
 *   if (p.patternEngineLoaded()) Deno.exit(1);
 *   await p.loadPatternEngine();
 *   if (!("regex" in p.compilePattern("^a+$"))) Deno.exit(2);
 * `;
 * const { code: status } = await new Deno.Command(Deno.execPath(), {
 *   args: ["eval", code],
 * }).output();
 * if (status !== 0) throw new Error(`exit ${status}`);
 * ```
 */
export function deferPatternEngine(): void {
  deferred = true;
}

/**
 * Whether {@linkcode deferPatternEngine} was called in this process.
 *
 * @example
 * ```ts
 * import { patternEngineDeferred } from "./compile_defer.ts";
 * if (patternEngineDeferred()) throw new Error("eager unless asked");
 * ```
 */
export function patternEngineDeferred(): boolean {
  return deferred;
}
