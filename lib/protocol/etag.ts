/**
 * ETags and conditional requests of the service (docs/api.md,
 * docs/events.md): a manifest version is named `"v<version>-<closure hash>"`
 * by the manifest and closure endpoints and by OFREP's configuration
 * events; an upload is guarded by `If-Match: "v<version>"`; `If-None-Match`
 * is compared weakly (RFC 9110, section 13.1.2) against a list of ETags or
 * `*`. The server's handlers and the SDK both format and read them here.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** What a version ETag names: a manifest version and its closure hash. */
export interface VersionTag {
  /** The manifest version. */
  version: number;
  /** The closure hash of that version (`sha256:<hex>`). */
  closure_hash: string;
}

const VERSION_ETAG_RE = /^(?:W\/)?"v(\d+)-([^"]+)"$/;
const IF_MATCH_RE = /^\s*(?:W\/)?"v(\d{1,15})(?:-[^"]*)?"\s*$/;

/**
 * The ETag of a manifest version, `"v<version>-<closure hash>"` (quotes
 * included), as the manifest and closure endpoints send it.
 *
 * @param version the manifest version
 * @param closureHash its closure hash
 * @returns the quoted ETag
 *
 * @example
 * ```ts
 * import { versionEtag } from "./etag.ts";
 * if (versionEtag(3, "sha256:ab") !== '"v3-sha256:ab"') throw new Error(versionEtag(3, "sha256:ab"));
 * ```
 */
export function versionEtag(version: number, closureHash: string): string {
  return `"v${version}-${closureHash}"`;
}

/**
 * Reads a version ETag (weak or strong) back into its version and closure
 * hash; anything else, or no header, is null.
 *
 * @param etag an `ETag` header value
 * @returns the version and closure hash, or null
 *
 * @example
 * ```ts
 * import { parseVersionEtag } from "./etag.ts";
 * const tag = parseVersionEtag('W/"v7-sha256:ab"');
 * if (tag?.version !== 7 || tag.closure_hash !== "sha256:ab") throw new Error();
 * if (parseVersionEtag('"abc"') !== null || parseVersionEtag(null) !== null) throw new Error();
 * ```
 */
export function parseVersionEtag(etag: string | null | undefined): VersionTag | null {
  const m = etag === null || etag === undefined ? null : VERSION_ETAG_RE.exec(etag);
  return m ? { version: Number(m[1]), closure_hash: m[2]! } : null;
}

/**
 * The `If-Match` value that makes an upload succeed only while the head is
 * at `version`: `"v<version>"`.
 *
 * @param version the expected head version
 * @returns the header value
 *
 * @example
 * ```ts
 * import { ifMatchHeader, parseIfMatch } from "./etag.ts";
 * if (ifMatchHeader(4) !== '"v4"' || parseIfMatch(ifMatchHeader(4)) !== 4) throw new Error();
 * ```
 */
export function ifMatchHeader(version: number): string {
  return `"v${version}"`;
}

/**
 * The head version an `If-Match` header expects: `"v<version>"`, or a whole
 * version ETag `"v<version>-<hash>"` (weak or strong). No header is
 * undefined; any other value throws {@linkcode UsageError} (400).
 *
 * @param header the `If-Match` header, if sent
 * @returns the expected version, or undefined
 *
 * @example
 * ```ts
 * import { parseIfMatch } from "./etag.ts";
 * if (parseIfMatch('"v3-sha256:ab"') !== 3 || parseIfMatch(undefined) !== undefined) {
 *   throw new Error();
 * }
 * try {
 *   parseIfMatch("3");
 *   throw new Error("accepted 3");
 * } catch (err) {
 *   if ((err as { status?: number }).status !== 400) throw err;
 * }
 * ```
 */
export function parseIfMatch(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const m = IF_MATCH_RE.exec(header);
  if (!m) throw new UsageError(`If-Match must be "v<version>", not ${header}`);
  return Number(m[1]);
}

/**
 * Whether an `If-None-Match` header names `etag`: one of its comma-separated
 * entries is `*` or equals `etag` under the weak comparison (a `W/` prefix
 * on either side is ignored), as RFC 9110 asks for `If-None-Match`.
 *
 * @param header the header value, if sent
 * @param etag the current ETag, quoted
 * @returns true when the caller's copy is current (answer 304)
 *
 * @example
 * ```ts
 * import { etagMatches } from "./etag.ts";
 * if (!etagMatches('W/"ab", "cd"', '"cd"') || !etagMatches("*", '"cd"')) throw new Error();
 * if (etagMatches('"abc"', '"ab"') || etagMatches(undefined, '"ab"')) throw new Error();
 * ```
 */
export function etagMatches(header: string | null | undefined, etag: string): boolean {
  if (header === null || header === undefined) return false;
  const current = opaque(etag);
  for (const part of header.split(",")) {
    const t = part.trim();
    if (t === "*" || opaque(t) === current) return true;
  }
  return false;
}

/** An ETag without its weakness indicator. */
function opaque(etag: string): string {
  return etag.startsWith("W/") ? etag.slice(2) : etag;
}
