/**
 * The process's open-file-descriptor limit (RLIMIT_NOFILE): read it, and
 * raise the soft limit toward the hard one. Deno has no API for this, so the
 * raise goes through libc's `getrlimit`/`setrlimit` over FFI; without the
 * FFI permission the limit is only read (from /proc on Linux) and left as is.
 *
 * @module
 */

/** What {@linkcode raiseDescriptorLimit} found and did. */
export interface DescriptorLimit {
  /** Soft limit now in force (null when it could not be read). */
  soft: number | null;
  /** Hard limit (null when it could not be read). */
  hard: number | null;
  /** Soft limit before the raise, when it was raised. */
  raisedFrom?: number;
  /** Why the soft limit was not raised, when it could have been. */
  note?: string;
}

/** macOS refuses a soft limit above OPEN_MAX even when the hard limit is unlimited. */
const DARWIN_OPEN_MAX = 10_240;

/**
 * Raises the soft RLIMIT_NOFILE of this process to its hard limit (on macOS
 * to at most 10,240) and reports the figures. Never throws: a limit that
 * cannot be read or raised is reported with a `note`.
 *
 * @example
 * ```ts
 * import { raiseDescriptorLimit } from "./fd_limit.ts";
 * const limit = raiseDescriptorLimit();
 * if (limit.soft !== null && limit.hard !== null && limit.soft > limit.hard) throw new Error();
 * ```
 */
export function raiseDescriptorLimit(): DescriptorLimit {
  if (!ffiGranted()) {
    const read = readProcLimits();
    if (read === null) {
      return { soft: null, hard: null, note: "unknown: run with --allow-ffi to read and raise it" };
    }
    return read.soft < read.hard
      ? { ...read, note: "not raised: run with --allow-ffi to raise it" }
      : read;
  }
  const os = Deno.build.os;
  const libName = os === "darwin" ? "libSystem.dylib" : os === "linux" ? "libc.so.6" : null;
  if (libName === null) return { ...(readProcLimits() ?? { soft: null, hard: null }) };
  const resource = os === "darwin" ? 8 : 7; // RLIMIT_NOFILE
  let lib;
  try {
    lib = Deno.dlopen(libName, {
      getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
      setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
    });
  } catch (err) {
    return {
      ...(readProcLimits() ?? { soft: null, hard: null }),
      note: `not raised: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  try {
    const buf = new BigUint64Array(2);
    if (lib.symbols.getrlimit(resource, buf) !== 0) {
      return { soft: null, hard: null, note: "getrlimit failed" };
    }
    const soft = buf[0]!;
    const hard = buf[1]!;
    let target = hard;
    if (os === "darwin" && target > BigInt(DARWIN_OPEN_MAX)) target = BigInt(DARWIN_OPEN_MAX);
    if (soft >= target) return { soft: toNumber(soft), hard: toNumber(hard) };
    buf[0] = target;
    if (lib.symbols.setrlimit(resource, buf) !== 0) {
      return { soft: toNumber(soft), hard: toNumber(hard), note: "not raised: setrlimit failed" };
    }
    return { soft: toNumber(target), hard: toNumber(hard), raisedFrom: toNumber(soft) };
  } finally {
    lib.close();
  }
}

function ffiGranted(): boolean {
  try {
    return Deno.permissions.querySync({ name: "ffi" }).state === "granted";
  } catch {
    return false;
  }
}

function toNumber(n: bigint): number {
  return n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
}

function readProcLimits(): { soft: number; hard: number } | null {
  if (Deno.build.os !== "linux") return null;
  try {
    const text = Deno.readTextFileSync("/proc/self/limits");
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
    if (!m) return null;
    const parse = (s: string) => (s === "unlimited" ? Number.MAX_SAFE_INTEGER : Number(s));
    return { soft: parse(m[1]!), hard: parse(m[2]!) };
  } catch {
    return null;
  }
}
