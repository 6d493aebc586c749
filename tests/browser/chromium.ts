/**
 * Test helper: real Chromium (Debian's `chromium`, driven by
 * `playwright-core`) for the browser tests, or the reason it cannot run
 * here (the test is then skipped, saying so; .ci/run installs chromium).
 *
 * @module
 */
import { type Browser, chromium } from "npm:playwright-core@^1.65.1";

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The Chromium binary of this machine (`CHROMIUM_PATH` wins), or null. */
export function chromiumPath(): string | null {
  const env = Deno.env.get("CHROMIUM_PATH");
  for (const p of env ? [env, ...CANDIDATES] : CANDIDATES) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Starts headless Chromium; `await using` closes it.
 *
 * @param path the binary
 * @returns the browser
 */
export async function launchChromium(path: string): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({
    executablePath: path,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}
