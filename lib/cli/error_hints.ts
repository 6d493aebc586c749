/**
 * What to check after a failure the command line cannot fix by itself: a
 * credential the server rejected (401) or a server that could not be
 * reached. The advice names the CLI's own options and commands, so it lives
 * here rather than in the client's error messages (which the SDK shares).
 * lib/cli/exit.ts prints these lines after the error.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";

/**
 * Lines of advice for an error, each starting with `  - `, under a `check:`
 * heading; empty when there is nothing to add.
 *
 * @param err the error
 * @returns the lines to print after `error: <message>`
 *
 * @example
 * ```ts
 * import { hintsFor } from "./error_hints.ts";
 * import { UnauthorizedError } from "../errors.ts";
 * const lines = hintsFor(new UnauthorizedError("x", { details: { reason: "Unknown credential" } }));
 * if (!lines.some((l) => l.includes("admin rekey"))) throw new Error(lines.join("\n"));
 * ```
 */
export function hintsFor(err: unknown): string[] {
  if (!(err instanceof CfgtoolError)) return [];
  if (err.code === "unauthorized" && err.status === 401) return listed(unauthorizedHints(err));
  if (err.code === "unreachable") return listed(unreachableHints(err));
  return [];
}

function listed(items: string[]): string[] {
  return items.length === 0 ? [] : ["check:", ...items.map((i) => `  - ${i}`)];
}

const SAME_STORE = "a token printed on the server host (`cfgtool admin bootstrap`, " +
  "`admin session create`) was made in the store `cfgtool serve` uses: the same --kv or CFGTOOL_KV";
const SAME_SERVER = "--server / CFGTOOL_SERVER names the server that issued the token: " +
  "a token from another server, or from another KV store, is unknown here";
const REKEY = "no `cfgtool admin rekey` ran on that server since the token was issued: " +
  "a rekey makes every earlier token unknown, so a new one must be issued";
const LIFETIME = "the token is neither expired nor revoked (`cfgtool token show <id>` with " +
  "another credential shows its status); if it is, issue a new one with `cfgtool token create`";

function unauthorizedHints(err: CfgtoolError): string[] {
  const reason = typeof err.details?.reason === "string" ? err.details.reason : err.message;
  if (/^Unknown credential/i.test(reason)) return [SAME_SERVER, REKEY, SAME_STORE];
  if (/revoked/i.test(reason)) {
    return [
      "the token was revoked: use another one, or issue a new one with `cfgtool token create`",
    ];
  }
  if (/session/i.test(reason)) {
    return [
      "sessions expire or are ended: sign in again with `cfgtool login --server <url>` (or, on " +
      "the server host, `cfgtool admin session create`)",
      SAME_SERVER,
    ];
  }
  if (/expired/i.test(reason)) {
    return [
      "the token passed its expires_at: issue a new one with `cfgtool token create` " +
      "(`cfgtool token rotate` before expiry keeps the name and grants)",
    ];
  }
  if (/^Malformed credential/i.test(reason)) {
    return [
      "--token / CFGTOOL_TOKEN holds the whole token as it was printed " +
      "(svc_<type>_<payload> or ses_<payload>), with nothing cut off or added",
    ];
  }
  if (/^Missing credential|Malformed Authorization/i.test(reason)) {
    return ["pass --token <token> or set CFGTOOL_TOKEN; a proxy in between may drop the header"];
  }
  return [SAME_SERVER, REKEY, SAME_STORE, LIFETIME];
}

function unreachableHints(err: CfgtoolError): string[] {
  switch (err.details?.reason) {
    case "connection_refused":
      return [
        "`cfgtool serve` is running there, and --server / CFGTOOL_SERVER names its host and port",
      ];
    case "name_not_resolved":
      return [
        "the host name in --server / CFGTOOL_SERVER is spelled right, and this machine can " +
        "resolve names (its DNS settings)",
      ];
    case "network_unreachable":
      return ["this machine has a network route to the host in --server / CFGTOOL_SERVER"];
    case "tls":
      return [
        "an https:// URL needs a server that speaks TLS: `cfgtool serve --tls-cert … --tls-key …`, " +
        "or a proxy in front of it (a plain `cfgtool serve` speaks http://)",
        "for a certificate from a private authority, point DENO_CERT at that authority's " +
        "certificate (PEM)",
      ];
    case "timeout":
      return ["the host is up and no firewall drops traffic to that port"];
    default:
      return [];
  }
}
