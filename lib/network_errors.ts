/**
 * Plain words for a failed connection. `fetch` rejects with a bare
 * `TypeError: fetch failed` whose cause chain holds the real reason, in
 * Deno's wording (`tcp connect error: Connection refused`, `dns error`,
 * `received corrupt message`, `invalid peer certificate`) or Node's codes
 * (`ECONNREFUSED`, `ENOTFOUND`, `EPROTO`, `UND_ERR_CONNECT_TIMEOUT`); this
 * module walks that chain and says which failure it was. Web APIs only.
 *
 * A leaf: the SDK (lib/client/) explains a failed request with it and the
 * store (lib/store/kv.ts) a KV Connect URL it cannot open; it imports
 * nothing of the project.
 *
 * @module
 */

/** Which kind of network failure an error was. */
export type NetworkFailureKind =
  | "connection_refused"
  | "name_not_resolved"
  | "tls"
  | "timeout"
  | "connection_reset"
  | "network_unreachable"
  | "network";

/** A network failure explained: its kind and a phrase for a message. */
export interface NetworkFailure {
  /** The kind, stable (it goes to an error's `details.reason`). */
  kind: NetworkFailureKind;
  /** What happened, in plain words, without the URL's credentials or a stack. */
  text: string;
}

/**
 * Explains why a request to `url` failed, from the error `fetch` threw (or
 * the error a response body's reader threw). Unknown causes are `network`,
 * with the innermost message stripped of Deno's `error sending request for
 * url (…)` prefix.
 *
 * @param err what `fetch` (or a body read) threw
 * @param url the URL requested, to name its host and port
 * @returns the kind and a phrase such as `connection refused (nothing listens on 127.0.0.1:9)`
 *
 * @example
 * ```ts
 * import { describeNetworkFailure } from "./network_errors.ts";
 * const err = new TypeError("fetch failed", {
 *   cause: new Error("client error (Connect): tcp connect error: Connection refused (os error 111)"),
 * });
 * const f = describeNetworkFailure(err, "http://127.0.0.1:9");
 * if (f.kind !== "connection_refused" || !f.text.includes("127.0.0.1:9")) throw new Error(f.text);
 * ```
 */
export function describeNetworkFailure(err: unknown, url: string): NetworkFailure {
  const chain = causeChain(err);
  const all = chain.map((e) => `${e.code} ${e.name} ${e.message}`).join("\n");
  const { host, hostPort, https } = endpoint(url);
  if (/ECONNREFUSED|connection refused|os error 111\b|os error 61\b/i.test(all)) {
    return {
      kind: "connection_refused",
      text: `connection refused (nothing listens on ${hostPort})`,
    };
  }
  if (
    /ENOTFOUND|EAI_AGAIN|EAI_NONAME|dns error|failed to lookup address|name or service not known|name resolution|nodename nor servname|no address associated/i
      .test(all)
  ) {
    return {
      kind: "name_not_resolved",
      text: `the host name ${host} cannot be resolved (DNS lookup failed)`,
    };
  }
  const certificate =
    /certificate|UnknownIssuer|CERT_|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_CERT|NotValidForName|Expired\b/i
      .test(all);
  if (certificate) {
    return {
      kind: "tls",
      text: `TLS failed: the certificate of ${hostPort} is not trusted (${
        certificateReason(all)
      }; if it is signed by a private authority, make that authority trusted)`,
    };
  }
  if (
    /corrupt message|InvalidContentType|wrong version number|WRONG_VERSION|EPROTO|tls handshake|HandshakeFailure|peer is incompatible|AlertReceived|\btls\b|\bssl\b/i
      .test(all)
  ) {
    return {
      kind: "tls",
      text: https
        ? `TLS handshake failed (${hostPort} does not answer with TLS; if it serves plain ` +
          `HTTP, use an http:// URL)`
        : `TLS handshake failed with ${hostPort}`,
    };
  }
  if (
    /TimeoutError|ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|timed out|os error 110\b/i
      .test(all)
  ) {
    return {
      kind: "timeout",
      text: `the connection to ${hostPort} timed out (the host may be down, or a firewall ` +
        `drops the packets)`,
    };
  }
  if (/ENETUNREACH|EHOSTUNREACH|network is unreachable|no route to host/i.test(all)) {
    return {
      kind: "network_unreachable",
      text: `no network route to ${hostPort}`,
    };
  }
  if (
    /ECONNRESET|EPIPE|UND_ERR_SOCKET|connection reset|broken pipe|reading a body|connection closed|unexpected eof|other side closed|terminated|connection error|os error 104\b/i
      .test(all)
  ) {
    return {
      kind: "connection_reset",
      text: `the connection to ${hostPort} was cut before the answer was complete`,
    };
  }
  const inner = chain.at(-1)?.message ?? String(err);
  return { kind: "network", text: stripRequestPrefix(inner) };
}

interface ChainLink {
  name: string;
  message: string;
  code: string;
}

function causeChain(err: unknown): ChainLink[] {
  const out: ChainLink[] = [];
  let current: unknown = err;
  for (let depth = 0; depth < 10 && current !== undefined && current !== null; depth++) {
    if (current instanceof Error || (typeof current === "object" && "message" in current)) {
      const e = current as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown };
      out.push({
        name: typeof e.name === "string" ? e.name : "",
        message: typeof e.message === "string" ? e.message : "",
        code: typeof e.code === "string" ? e.code : "",
      });
      current = e.cause;
    } else {
      out.push({ name: "", message: String(current), code: "" });
      break;
    }
  }
  return out;
}

function endpoint(url: string): { host: string; hostPort: string; https: boolean } {
  try {
    const u = new URL(url);
    const https = u.protocol === "https:";
    const port = u.port !== "" ? u.port : https ? "443" : "80";
    return { host: u.hostname, hostPort: `${u.hostname}:${port}`, https };
  } catch {
    return { host: url, hostPort: url, https: false };
  }
}

function certificateReason(all: string): string {
  if (/UnknownIssuer|SELF_SIGNED|UNABLE_TO_VERIFY|unable to get local issuer/i.test(all)) {
    return "issued by an unknown authority";
  }
  if (/Expired|CERT_HAS_EXPIRED/i.test(all)) return "expired";
  if (/NotValidForName|ALTNAME|not valid for name/i.test(all)) {
    return "not issued for this host name";
  }
  return "rejected";
}

function stripRequestPrefix(message: string): string {
  const m = /^error sending request for url \([^)]*\): (.*)$/s.exec(message);
  return (m ? m[1]! : message).trim();
}
