/**
 * `--trusted-proxy <cidr>`, an option of `serve` and `relay`: the load
 * balancers and reverse proxies in front of the process, whose
 * `X-Forwarded-For` names the client (lib/net/trusted_proxies.ts). The
 * flag repeats; a value may also list several ranges separated by commas
 * or spaces (the configuration file's one string, `trusted-proxy =
 * "10.0.0.0/8 127.0.0.1"`, and the command line a worker of a group gets).
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/**
 * The option's commander arguments: flags, help, and the collector that
 * keeps every value.
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { TRUSTED_PROXY_OPTION } from "./trusted_proxy_option.ts";
 * const cmd = new Command("serve").option(...TRUSTED_PROXY_OPTION).action(() => {});
 * cmd.parse(["--trusted-proxy", "10.0.0.0/8", "--trusted-proxy", "::1"], { from: "user" });
 * if (String(cmd.opts()["trustedProxy"]) !== "10.0.0.0/8,::1") throw new Error();
 * ```
 */
export const TRUSTED_PROXY_OPTION: [
  string,
  string,
  (value: string, previous: string[] | undefined) => string[],
] = [
  "--trusted-proxy <cidr>",
  "a load balancer or reverse proxy in front of this process (CIDR range or address; repeat " +
  "it, or list several separated by commas) whose X-Forwarded-For names the client for the " +
  "per-IP limits and the log; without it the connection's address is the client, whatever " +
  "the headers say",
  (value, previous) => [...(previous ?? []), value],
];

/**
 * The option's values, checked: a value that is not a CIDR range or an
 * address is a usage error (exit 2) naming it.
 *
 * @param raw the option's value: a string (the configuration file), a list (the flags), or nothing
 * @returns the ranges, one per entry
 * @throws {UsageError} for a bad range
 *
 * @example
 * ```ts
 * import { trustedProxyValues } from "./trusted_proxy_option.ts";
 * const got = await trustedProxyValues(["10.0.0.0/8,127.0.0.1", "fd00::/8"]);
 * if (got.join(" ") !== "10.0.0.0/8 127.0.0.1 fd00::/8") throw new Error(got.join(" "));
 * const bad = await trustedProxyValues("10.0.0.0/99").then(() => "", (e) => e.name);
 * if (bad !== "UsageError") throw new Error(bad);
 * ```
 */
export async function trustedProxyValues(raw: unknown): Promise<string[]> {
  if (raw === undefined || raw === false || raw === "") return [];
  // lazy: ipaddr.js loads only when proxies are named
  const { splitProxyList, TrustedProxies, TrustedProxyError } = await import(
    "../net/trusted_proxies.ts"
  );
  const values = splitProxyList(Array.isArray(raw) ? raw.map(String) : String(raw));
  try {
    TrustedProxies.parse(values);
  } catch (err) {
    throw err instanceof TrustedProxyError ? new UsageError(err.message) : err;
  }
  return values;
}
