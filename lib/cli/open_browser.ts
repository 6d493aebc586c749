/**
 * Opening a URL in the person's browser: `$BROWSER` when set (the first
 * entry of a `:`-separated list; `%s` stands for the URL, else it is
 * appended), else `open` on macOS, `rundll32 url.dll,FileProtocolHandler`
 * on Windows (no shell, so the URL's `&` stays a character), `xdg-open`
 * elsewhere. The opener runs detached: cfgtool does not wait for the
 * browser.
 *
 * @module
 */

/**
 * The command that opens `url`: program and arguments.
 *
 * @param url the URL
 * @param env where to read `BROWSER`
 * @param os the operating system (default: this one)
 * @returns the argv
 *
 * @example
 * ```ts
 * import { browserCommand } from "./open_browser.ts";
 * const none = { get: () => undefined };
 * if (browserCommand("http://x/?a&b", none, "linux").join(" ") !== "xdg-open http://x/?a&b") throw new Error();
 * if (browserCommand("http://x/", none, "darwin")[0] !== "open") throw new Error();
 * const env = { get: (n: string) => n === "BROWSER" ? "firefox --new-tab %s:lynx" : undefined };
 * if (browserCommand("http://x/", env, "linux").join(" ") !== "firefox --new-tab http://x/") throw new Error();
 * ```
 */
export function browserCommand(
  url: string,
  env: { get(name: string): string | undefined } = Deno.env,
  os: typeof Deno.build.os = Deno.build.os,
): string[] {
  const browser = env.get("BROWSER")?.split(os === "windows" ? ";" : ":")
    .map((s) => s.trim()).find((s) => s !== "");
  if (browser !== undefined) {
    const words = browser.split(/\s+/);
    return words.includes("%s") ? words.map((w) => w === "%s" ? url : w) : [...words, url];
  }
  if (os === "darwin") return ["open", url];
  if (os === "windows") return ["rundll32", "url.dll,FileProtocolHandler", url];
  return ["xdg-open", url];
}

/**
 * Starts the browser on `url` without waiting for it. False when the
 * opener cannot be started (not installed, not allowed): the caller then
 * relies on the URL it printed.
 *
 * @param url the URL
 * @param env where to read `BROWSER`
 * @returns whether an opener was started
 *
 * @example
 * ```ts
 * import { openBrowser } from "./open_browser.ts";
 * const missing = { get: (n: string) => n === "BROWSER" ? "/nonexistent/browser" : undefined };
 * if (openBrowser("http://127.0.0.1:1/", missing)) throw new Error("no such program");
 * ```
 */
export function openBrowser(
  url: string,
  env: { get(name: string): string | undefined } = Deno.env,
): boolean {
  const [program, ...args] = browserCommand(url, env);
  try {
    const child = new Deno.Command(program!, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.status.catch(() => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
