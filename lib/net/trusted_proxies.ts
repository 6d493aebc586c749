/**
 * Whose word counts on a client's address: `--trusted-proxy CIDR` (of
 * `serve` and `relay`) names the load balancers and reverse proxies in
 * front of a process. A request whose peer is one of them may say who
 * its client is in `X-Forwarded-For`; anyone else's header is ignored, since
 * any client can write one.
 *
 * The header is read from the right, the end a trusted proxy appended
 * to: each address that is itself a trusted proxy is skipped, and the
 * first that is not is the client. When every address is trusted, the
 * leftmost one is the client. An entry that is not an IP address (or
 * more than {@linkcode MAX_HOPS} hops) stops the walk: the client is then
 * the last address reached, a trusted proxy, so that garbage never picks
 * someone else's address. Without any trusted proxy the peer address is
 * the client, whatever the request says.
 *
 * Entries may carry a port (`192.0.2.7:5123`, `[2001:db8::1]:443`), as some
 * load balancers write them; the port is dropped. IPv4-mapped IPv6
 * addresses (`::ffff:192.0.2.7`) are read as the IPv4 address they carry,
 * for the peer and the entries alike. Addresses are parsed with
 * `ipaddr.js`; the header is split by plain string code, in one pass.
 *
 * @module
 */
import ipaddr from "ip-address";

/** The most `X-Forwarded-For` entries read, from the right. */
export const MAX_HOPS = 32;

/** Longer entries are not addresses (the longest IPv6 text with a port is 47). */
const MAX_ENTRY = 64;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * A `--trusted-proxy` value that is not a CIDR range or an address.
 *
 * @example
 * ```ts
 * import { TrustedProxies, TrustedProxyError } from "./trusted_proxies.ts";
 * let caught: unknown;
 * try { TrustedProxies.parse(["10.0.0.0/33"]); } catch (err) { caught = err; }
 * if (!(caught instanceof TrustedProxyError)) throw new Error();
 * ```
 */
export class TrustedProxyError extends Error {
  /** @param value the value given */
  constructor(readonly value: string) {
    super(
      `--trusted-proxy ${JSON.stringify(value)} is not an IP address or CIDR range ` +
        "(such as 10.0.0.0/8, 192.0.2.10 or fd00::/8)",
    );
    this.name = "TrustedProxyError";
  }
}

/**
 * Splits `--trusted-proxy` values: each may hold several ranges separated
 * by commas or white space (the config file's one string, a worker's
 * command line).
 *
 * @param values the values as given (a string, or one string per flag)
 * @returns the ranges, in order, without empty ones
 *
 * @example
 * ```ts
 * import { splitProxyList } from "./trusted_proxies.ts";
 * const got = splitProxyList(["10.0.0.0/8, 127.0.0.1/32", " fd00::/8\t"]);
 * if (got.join("|") !== "10.0.0.0/8|127.0.0.1/32|fd00::/8") throw new Error(got.join("|"));
 * ```
 */
export function splitProxyList(values: string | readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const value of typeof values === "string" ? [values] : values ?? []) {
    let start = 0;
    for (let i = 0; i <= value.length; i++) {
      const c = i < value.length ? value.charCodeAt(i) : 0x2c;
      if (c === 0x2c || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) {
        if (i > start) out.push(value.slice(start, i));
        start = i + 1;
      }
    }
  }
  return out;
}

/**
 * The trusted proxies of a process, and the client address of a request
 * by them.
 *
 * @example
 * ```ts
 * import { TrustedProxies } from "./trusted_proxies.ts";
 * const proxies = TrustedProxies.parse(["10.0.0.0/8", "127.0.0.1"]);
 * // a trusted load balancer: the address it appended is the client
 * if (proxies.clientAddress("10.1.2.3", "198.51.100.4, 203.0.113.9") !== "203.0.113.9") throw new Error();
 * // through two trusted hops
 * if (proxies.clientAddress("127.0.0.1", "203.0.113.9, 10.0.0.5") !== "203.0.113.9") throw new Error();
 * // anyone else: its own address, whatever it says
 * if (proxies.clientAddress("192.0.2.7", "203.0.113.9") !== "192.0.2.7") throw new Error();
 * // garbage stops the walk at the last trusted hop
 * if (proxies.clientAddress("10.1.2.3", "not-an-ip") !== "10.1.2.3") throw new Error();
 * ```
 */
export class TrustedProxies {
  readonly #v4: Range[];
  readonly #v6: Range[];

  private constructor(v4: Range[], v6: Range[]) {
    this.#v4 = v4;
    this.#v6 = v6;
  }

  /** No trusted proxy: the peer is always the client. */
  static readonly NONE: TrustedProxies = new TrustedProxies([], []);

  /**
   * Reads CIDR ranges and single addresses (`10.0.0.0/8`, `192.0.2.10`,
   * `fd00::/8`, `::1`).
   *
   * @param values the ranges (see {@linkcode splitProxyList} for lists)
   * @returns the trusted proxies
   * @throws {TrustedProxyError} for a value that is neither
   */
  static parse(values: readonly string[]): TrustedProxies {
    const v4: Range[] = [];
    const v6: Range[] = [];
    for (const value of values) {
      const range = parseRange(value);
      if (range === null) throw new TrustedProxyError(value);
      (range[0].kind() === "ipv4" ? v4 : v6).push(range);
    }
    return new TrustedProxies(v4, v6);
  }

  /** Whether any proxy is trusted. */
  get any(): boolean {
    return this.#v4.length + this.#v6.length > 0;
  }

  /**
   * Whether an address is a trusted proxy's.
   *
   * @param address an IP address (an IPv4-mapped IPv6 one counts as its IPv4 address)
   * @returns true or false (false for what is not an address)
   */
  trusts(address: string): boolean {
    const a = parseAddress(address);
    return a !== null && this.#trusts(a);
  }

  /**
   * The client of a request: the peer, or, when the peer is a trusted
   * proxy, the first address in `X-Forwarded-For` from the right that is
   * not (see the module documentation).
   *
   * @param peer the address of the connection
   * @param forwardedFor the request's `X-Forwarded-For` (all of them, comma-joined), or null
   * @returns the client's address
   */
  clientAddress(peer: string, forwardedFor: string | null): string {
    if (!this.any || forwardedFor === null) return peer;
    const p = parseAddress(peer);
    if (p === null || !this.#trusts(p)) return peer;
    let client = p;
    let end = forwardedFor.length;
    for (let hops = 0; hops < MAX_HOPS && end > 0; hops++) {
      const comma = forwardedFor.lastIndexOf(",", end - 1);
      const entry = trimSpaces(forwardedFor.slice(comma + 1, end));
      end = comma < 0 ? 0 : comma;
      if (entry === "") continue;
      const a = parseAddress(withoutPort(entry));
      if (a === null) break; // garbage: the last hop reached is the client
      client = a;
      if (!this.#trusts(a)) break;
    }
    return client === p ? peer : client.toString();
  }

  #trusts(a: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    const ranges = a.kind() === "ipv4" ? this.#v4 : this.#v6;
    for (const r of ranges) if (a.match(r as never)) return true;
    return false;
  }
}

function parseRange(value: string): Range | null {
  const slash = value.indexOf("/");
  const address = parseAddress(slash < 0 ? value : value.slice(0, slash));
  if (address === null) return null;
  const max = address.kind() === "ipv4" ? 32 : 128;
  if (slash < 0) return [address, max];
  const bitsText = value.slice(slash + 1);
  if (bitsText === "" || bitsText.length > 3) return null;
  for (let i = 0; i < bitsText.length; i++) {
    const c = bitsText.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return null;
  }
  const bits = Number(bitsText);
  // a mapped IPv6 range (::ffff:10.0.0.0/104) reads as the IPv4 range it covers
  if (address.kind() === "ipv4" && value.slice(0, slash).includes(":")) {
    return bits >= 96 && bits <= 128 ? [address, bits - 96] : null;
  }
  return bits <= max ? [address, bits] : null;
}

/** An IPv4 address (four decimal parts only) or an IPv6 one; a mapped one as IPv4. */
function parseAddress(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (text.length === 0 || text.length > MAX_ENTRY) return null;
  if (text.includes(":")) {
    if (!ipaddr.IPv6.isValid(text) || text.includes("%")) return null;
    const v6 = ipaddr.IPv6.parse(text);
    return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
  }
  return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
}

/** `192.0.2.7:5123` → `192.0.2.7`; `[2001:db8::1]:443` and `[::1]` → the address. */
function withoutPort(entry: string): string {
  if (entry.startsWith("[")) {
    const close = entry.indexOf("]");
    return close < 0 ? "" : entry.slice(1, close);
  }
  const colon = entry.indexOf(":");
  // one colon: an IPv4 address with a port; more: an IPv6 address without brackets
  return colon >= 0 && entry.indexOf(":", colon + 1) < 0 ? entry.slice(0, colon) : entry;
}

function trimSpaces(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && (s.charCodeAt(a) === 0x20 || s.charCodeAt(a) === 0x09)) a++;
  while (b > a && (s.charCodeAt(b - 1) === 0x20 || s.charCodeAt(b - 1) === 0x09)) b--;
  return s.slice(a, b);
}
