/**
 * Where the server may send a request on a tenant's behalf (webhook
 * deliveries): only to public addresses. A destination whose host is, or
 * resolves (DNS A and AAAA) to, any of these is refused, naming why:
 *
 * | refused | ranges |
 * |---|---|
 * | loopback | `127.0.0.0/8`, `::1`, the name `localhost` and `*.localhost` |
 * | private | `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16` (RFC 1918), `fc00::/7` (unique local) |
 * | link-local | `169.254.0.0/16`, `fe80::/10` |
 * | unspecified | `0.0.0.0/8`, `::` |
 * | carrier-grade NAT | `100.64.0.0/10` |
 * | multicast, broadcast | `224.0.0.0/4`, `255.255.255.255`, `ff00::/8` |
 * | cloud metadata | `169.254.169.254`, `fd00:ec2::254` |
 * | reserved | documentation, benchmarking, `240.0.0.0/4`, Teredo, IPv4-compatible `::/96`, and every other IPv6 range that is not global unicast |
 *
 * An IPv6 address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-translated, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) is judged by
 * the IPv4 address it carries. Addresses are classified with `ipaddr.js`.
 *
 * A caller checks a destination once with {@linkcode checkDestination},
 * then connects to one of the addresses it checked (never resolving the
 * name again: a second answer could differ).
 *
 * @module
 */
import ipaddr from "ip-address";

/** Why a destination is refused, in words (`127.0.0.1 is a loopback address`). */
export class RefusedDestination extends Error {
  /**
   * @param message the refusal, naming the host or address and why
   */
  constructor(message: string) {
    super(message);
    this.name = "RefusedDestination";
  }
}

/** A destination that does not resolve (no A or AAAA record, or DNS fails). */
export class UnresolvedDestination extends Error {
  /**
   * @param message what did not resolve
   * @param options the cause
   */
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = "UnresolvedDestination";
  }
}

/** Looks up the addresses (A and AAAA) of a host name. */
export type Resolver = (hostname: string) => Promise<string[]>;

/** A checked destination: where to connect and how. */
export interface Destination {
  /** The host as the URL names it, without IPv6 brackets (for TLS and `Host`). */
  hostname: string;
  /** The port (the scheme's default when the URL has none). */
  port: number;
  /** HTTPS. */
  tls: boolean;
  /**
   * The addresses to connect to, each checked; when private destinations
   * are allowed, the host name itself (the system resolves it).
   */
  addresses: string[];
}

/** The cloud metadata services' addresses (AWS, GCP, Azure, …; AWS's IPv6 one). */
const METADATA_V4 = "169.254.169.254";
const METADATA_V6 = ipaddr.parse("fd00:ec2::254").toNormalizedString();

const IPV4_REASONS: Readonly<Record<string, string>> = {
  unspecified: "an unspecified address",
  broadcast: "a broadcast address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  carrierGradeNat: "a carrier-grade NAT (shared) address",
  private: "a private (RFC 1918) address",
};

const IPV6_REASONS: Readonly<Record<string, string>> = {
  unspecified: "an unspecified address",
  multicast: "a multicast address",
  linkLocal: "a link-local address",
  loopback: "a loopback address",
  uniqueLocal: "a unique local (private) address",
  teredo: "a Teredo tunnel address",
};

/**
 * Why an IP address is no public destination, or undefined when it is one.
 *
 * @param address an IPv4 or IPv6 address (no brackets, no zone)
 * @returns the reason (`a loopback address`), or undefined
 *
 * @example
 * ```ts
 * import { addressRefusal } from "./public_address.ts";
 * if (addressRefusal("10.1.2.3") !== "a private (RFC 1918) address") throw new Error();
 * if (addressRefusal("::ffff:127.0.0.1") !== "a loopback address (IPv4 127.0.0.1)") throw new Error();
 * if (addressRefusal("169.254.169.254") !== "a cloud metadata address") throw new Error();
 * if (addressRefusal("93.184.216.34") !== undefined) throw new Error();
 * ```
 */
export function addressRefusal(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return "not an IP address";
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return ipv4Refusal(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  if (v6.toNormalizedString() === METADATA_V6) return "a cloud metadata address";
  const carried = carriedIpv4(v6);
  if (carried !== undefined) {
    const why = ipv4Refusal(carried);
    return why === undefined ? undefined : `${why} (IPv4 ${carried.toString()})`;
  }
  const range = v6.range();
  if (range === "rfc6052") return "a reserved address (local-use NAT64)";
  if (range === "unicast") {
    // ::/96 besides :: and ::1: IPv4-compatible addresses, deprecated
    const parts: number[] = v6.parts;
    if (parts.slice(0, 6).every((x: number) => x === 0)) {
      return "a reserved address (IPv4-compatible)";
    }
    return undefined;
  }
  return IPV6_REASONS[range] ?? `a reserved address (${range})`;
}

function ipv4Refusal(v4: ipaddr.IPv4): string | undefined {
  if (v4.toString() === METADATA_V4) return "a cloud metadata address";
  const range = v4.range();
  if (range === "unicast") return undefined;
  return IPV4_REASONS[range] ?? `a reserved address (${range})`;
}

/** `64:ff9b::/96`, where the last 32 bits are the IPv4 address. */
function isWellKnownNat64(p: number[]): boolean {
  return p[0] === 0x64 && p[1] === 0xff9b && p.slice(2, 6).every((x: number) => x === 0);
}

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64 /96, 6to4), if any. */
function carriedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const p: number[] = v6.parts;
  const last = (hi: number, lo: number) =>
    new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  switch (v6.range()) {
    case "ipv4Mapped": // ::ffff:a.b.c.d
    case "rfc6145": // ::ffff:0:a.b.c.d
      return last(p[6]!, p[7]!);
    case "rfc6052": // 64:ff9b::a.b.c.d, the well-known /96 (local-use prefixes: see addressRefusal)
      return isWellKnownNat64(p) ? last(p[6]!, p[7]!) : undefined;
    case "6to4": // 2002:aabb:ccdd::
      return last(p[1]!, p[2]!);
    default:
      return undefined;
  }
}

/**
 * Why a host name is no public destination before any lookup
 * (`localhost` and its subdomains), or undefined.
 */
function nameRefusal(hostname: string): string | undefined {
  const name = hostname.replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") ? "a loopback name" : undefined;
}

/**
 * Whether a URL host (brackets removed) is an IP address rather than a name.
 *
 * @param host the host
 * @returns true for an IPv4 or IPv6 address
 *
 * @example
 * ```ts
 * import { isIpAddress } from "./public_address.ts";
 * if (!isIpAddress("127.0.0.1") || !isIpAddress("::1") || isIpAddress("example.com")) throw new Error();
 * ```
 */
export function isIpAddress(host: string): boolean {
  return ipaddr.IPv4.isValidFourPartDecimal(host) || ipaddr.IPv6.isValid(host);
}

/**
 * The system's DNS: the A and AAAA records of a name (5 s at most), IPv4
 * first. A name with neither is an {@linkcode UnresolvedDestination}.
 *
 * @param hostname the name
 * @returns its addresses
 *
 * @example
 * ```ts
 * import { systemResolver } from "./public_address.ts";
 * const addresses = await systemResolver("localhost").catch(() => ["127.0.0.1"]);
 * if (addresses.length === 0) throw new Error();
 * ```
 */
export async function systemResolver(hostname: string): Promise<string[]> {
  const signal = AbortSignal.timeout(5000);
  const lookups = await Promise.allSettled([
    Deno.resolveDns(hostname, "A", { signal }),
    Deno.resolveDns(hostname, "AAAA", { signal }),
  ]);
  const out: string[] = [];
  for (const l of lookups) if (l.status === "fulfilled") out.push(...l.value);
  if (out.length === 0) {
    const failed = lookups.find((l) => l.status === "rejected") as PromiseRejectedResult;
    throw new UnresolvedDestination(`${hostname} does not resolve (no A or AAAA record)`, {
      cause: failed?.reason,
    });
  }
  return out;
}

/** Options of {@linkcode checkDestination}. */
export interface DestinationOptions {
  /** Allow every address, private ones included (`serve --webhook-allow-private`). */
  allowPrivate: boolean;
  /** Where names are looked up (default: {@linkcode systemResolver}). */
  resolve?: Resolver;
}

/**
 * Checks where a request to `url` would go: an `http:` or `https:` URL
 * whose host is a public address, or a name whose every address is public
 * (one private address refuses the name: the answer could pick it). Throws
 * {@linkcode RefusedDestination} naming the address and why, or
 * {@linkcode UnresolvedDestination}. With `allowPrivate`, nothing is
 * looked up or refused.
 *
 * @param url the destination
 * @param options whether private destinations are allowed, and the resolver
 * @returns the host, port, scheme and the checked addresses to connect to
 *
 * @example
 * ```ts
 * import { checkDestination } from "./public_address.ts";
 * const ok = await checkDestination(new URL("https://hooks.example.com/x"), {
 *   allowPrivate: false,
 *   resolve: () => Promise.resolve(["93.184.216.34"]),
 * });
 * if (ok.addresses.join() !== "93.184.216.34" || ok.port !== 443 || !ok.tls) throw new Error();
 * const refused = await checkDestination(new URL("http://[::1]:8080/"), { allowPrivate: false })
 *   .catch((e: Error) => e.message);
 * if (refused !== "::1 is a loopback address") throw new Error(String(refused));
 * ```
 */
export async function checkDestination(
  url: URL,
  options: DestinationOptions,
): Promise<Destination> {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RefusedDestination(`${url.protocol} is not http: or https:`);
  }
  const tls = url.protocol === "https:";
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port);
  const base = { hostname, port, tls };
  if (options.allowPrivate) return { ...base, addresses: [hostname] };
  if (isIpAddress(hostname)) {
    const why = addressRefusal(hostname);
    if (why !== undefined) throw new RefusedDestination(`${hostname} is ${why}`);
    return { ...base, addresses: [hostname] };
  }
  const byName = nameRefusal(hostname);
  if (byName !== undefined) throw new RefusedDestination(`${hostname} is ${byName}`);
  const addresses = await (options.resolve ?? systemResolver)(hostname);
  if (addresses.length === 0) {
    throw new UnresolvedDestination(`${hostname} does not resolve (no A or AAAA record)`);
  }
  for (const address of addresses) {
    const why = addressRefusal(address);
    if (why !== undefined) {
      throw new RefusedDestination(`${hostname} resolves to ${address}, ${why}`);
    }
  }
  return { ...base, addresses };
}
