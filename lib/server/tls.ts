/**
 * The TLS pair of `cfgtool serve --tls-cert/--tls-key`: reading and checking
 * a PEM certificate chain and its private key, describing the certificate
 * for the log, and binding an HTTPS listener with it. Every failure is a
 * {@linkcode TlsError} that names the file and what is wrong with it, found
 * before the server listens (or, on a reload, before the new pair replaces
 * the old one).
 *
 * @module
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { CfgtoolError } from "../errors.ts";
import { readFailure } from "../file_failure.ts";

/** Where the pair lives: the PEM certificate chain (leaf first) and its PEM private key. */
export interface TlsPaths {
  /** The certificate chain file (`--tls-cert`). */
  certFile: string;
  /** The private key file (`--tls-key`). */
  keyFile: string;
}

/** What the log says about a certificate. */
export interface CertificateInfo {
  /** The leaf's subject (`CN=flags.example.com`). */
  subject: string;
  /** Its issuer. */
  issuer: string;
  /** The end of its validity, RFC 3339. */
  notAfter: string;
  /** SHA-256 fingerprint of the leaf, colon-separated hex. */
  sha256: string;
}

/** A pair read from disk and checked: the PEM texts and what the leaf says. */
export interface TlsPair {
  /** The paths it was read from. */
  paths: TlsPaths;
  /** The certificate chain, PEM. */
  cert: string;
  /** The private key, PEM. */
  key: string;
  /** The leaf certificate, for the log. */
  info: CertificateInfo;
  /** True when the leaf's validity has ended (or not begun) at the time it was read. */
  expired: boolean;
}

/**
 * A TLS pair that cannot be used: a file missing or unreadable, no PEM
 * certificate in the certificate file, no usable key in the key file, a key
 * that does not belong to the certificate. Code `tls_invalid`; the CLI exits 1.
 *
 * @example
 * ```ts
 * import { TlsError } from "./tls.ts";
 * const err = new TlsError("no certificate in cert.pem");
 * if (err.code !== "tls_invalid" || err.name !== "TlsError") throw new Error();
 * ```
 */
export class TlsError extends CfgtoolError {
  /**
   * Creates the error.
   *
   * @param message what is wrong, naming the file
   * @param cause the underlying error
   */
  constructor(message: string, cause?: unknown) {
    super("tls_invalid", message, cause === undefined ? {} : { cause });
    this.name = "TlsError";
  }
}

/** The protocols an HTTPS listener offers by ALPN: HTTP/2 first, then HTTP/1.1. */
export const ALPN_PROTOCOLS: readonly string[] = ["h2", "http/1.1"];

/**
 * Reads the pair at `paths` and checks it: the certificate file holds a
 * PEM certificate, the key file a PEM private key (PKCS#8, PKCS#1 or SEC1;
 * not encrypted), and the key belongs to the certificate's public key.
 *
 * @param paths the two files
 * @param now the time to judge expiry at (default: now)
 * @returns the checked pair
 * @throws {TlsError} naming the file and the problem
 *
 * @example
 * ```ts
 * import { readTlsPair, TlsError } from "./tls.ts";
 * try {
 *   await readTlsPair({ certFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem" });
 *   throw new Error("read a missing file");
 * } catch (err) {
 *   if (!(err instanceof TlsError) || !err.message.includes("/nonexistent/cert.pem")) throw err;
 * }
 * ```
 */
export async function readTlsPair(paths: TlsPaths, now: Date = new Date()): Promise<TlsPair> {
  const cert = await readPem(paths.certFile, "certificate (--tls-cert)");
  const key = await readPem(paths.keyFile, "private key (--tls-key)");
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new TlsError(
      `${paths.certFile} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
      err,
    );
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    const encrypted = /ENCRYPTED/.test(key) || /passphrase/i.test(String(err));
    throw new TlsError(
      encrypted
        ? `${paths.keyFile} holds an encrypted private key: give the key without a passphrase ` +
          "(openssl pkey -in <file> -out <new file>)"
        : `${paths.keyFile} holds no PEM private key (-----BEGIN PRIVATE KEY-----)`,
      err,
    );
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new TlsError(
      `the private key in ${paths.keyFile} does not belong to the certificate in ` +
        `${paths.certFile}`,
    );
  }
  const info = describeCertificate(leaf);
  const expired = now < leaf.validFromDate || now > leaf.validToDate;
  return { paths, cert, key, info, expired };
}

/**
 * The log's facts about a PEM certificate (its first certificate, the leaf).
 *
 * @param cert a PEM certificate, or a parsed one
 * @returns subject, issuer, end of validity and SHA-256 fingerprint
 *
 * @example
 * ```ts
 * import { describeCertificate } from "./tls.ts";
 * const pem = [
 *   "-----BEGIN CERTIFICATE-----",
 *   "MIIBezCCASCgAwIBAgITDQPV+FQkWACtjpw9x0n66eJRZDAKBggqhkjOPQQDAjAS",
 *   "MRAwDgYDVQQDDAdleGFtcGxlMCAXDTI2MTEyNDA5MjA0MloYDzIxMjYxMDMxMDky",
 *   "MDQyWjASMRAwDgYDVQQDDAdleGFtcGxlMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD",
 *   "QgAEUTjn5+PZ8vb3/ti0N68heUYvxKuJ60hoxPtuWrKp/ukSYIXuQC/sFMq6lzoZ",
 *   "U8JhOTmctTQcvXS/Em4+Ee0tUaNTMFEwHQYDVR0OBBYEFO4o9nQ1uDKByvVc4YiB",
 *   "FZlNuv0zMB8GA1UdIwQYMBaAFO4o9nQ1uDKByvVc4YiBFZlNuv0zMA8GA1UdEwEB",
 *   "/wQFMAMBAf8wCgYIKoZIzj0EAwIDSQAwRgIhAIn8Tpm25q8nJ0Vgzsmm+I9vz6xg",
 *   "pMMeuL0ELsSJtPJRAiEA0PV5zIC2wtfzI0z3hxZwf7/+qHrc7rq/gCFxfQf6UBE=",
 *   "-----END CERTIFICATE-----",
 * ].join("\n");
 * const info = describeCertificate(pem);
 * if (info.subject !== "CN=example" || info.notAfter !== "2126-10-31T09:20:42.000Z") {
 *   throw new Error(JSON.stringify(info));
 * }
 * if (!info.sha256.startsWith("48:1A:6A:44")) throw new Error(info.sha256);
 * ```
 */
export function describeCertificate(cert: string | X509Certificate): CertificateInfo {
  const leaf = typeof cert === "string" ? new X509Certificate(cert) : cert;
  return {
    subject: oneLine(leaf.subject),
    issuer: oneLine(leaf.issuer),
    notAfter: leaf.validToDate.toISOString(),
    sha256: leaf.fingerprint256,
  };
}

/** Options of {@linkcode listenTls}. */
export interface ListenTlsOptions {
  /** Listening address. */
  hostname: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Set `SO_REUSEPORT` (needs `--unstable-net`), so that a second listener can take over the port. */
  reusePort: boolean;
  /** Pending connections the kernel may queue before accept. */
  backlog: number;
}

/**
 * Binds an HTTPS listener with `pair`, offering HTTP/2 and HTTP/1.1 by ALPN.
 * A port in use is a `CfgtoolError` `address_in_use`; a pair Deno's TLS
 * library refuses is a {@linkcode TlsError}.
 *
 * @param pair the checked pair
 * @param options address, port and socket options
 * @returns the listener
 *
 * @example
 * ```ts
 * import { listenTls, TlsError } from "./tls.ts";
 * const pair = {
 *   paths: { certFile: "cert.pem", keyFile: "key.pem" },
 *   cert: "not a certificate",
 *   key: "not a key",
 *   info: { subject: "", issuer: "", notAfter: "", sha256: "" },
 *   expired: false,
 * };
 * const options = { hostname: "127.0.0.1", port: 0, reusePort: false, backlog: 511 };
 * try {
 *   listenTls(pair, options).close();
 *   throw new Error("listened with no certificate");
 * } catch (err) {
 *   if (!(err instanceof TlsError) || !err.message.startsWith("cannot serve TLS with cert.pem")) {
 *     throw err;
 *   }
 * }
 * ```
 */
export function listenTls(pair: TlsPair, options: ListenTlsOptions): Deno.TlsListener {
  try {
    return Deno.listenTls({
      hostname: options.hostname,
      port: options.port,
      cert: pair.cert,
      key: pair.key,
      alpnProtocols: [...ALPN_PROTOCOLS],
      tcpBacklog: options.backlog,
      ...(options.reusePort ? { reusePort: true } : {}),
    });
  } catch (err) {
    if (err instanceof Deno.errors.AddrInUse) {
      throw new CfgtoolError(
        "address_in_use",
        `Port ${options.port} on ${options.hostname} is already in use`,
      );
    }
    if (err instanceof Deno.errors.PermissionDenied || err instanceof Deno.errors.NotCapable) {
      throw err;
    }
    throw new TlsError(
      `cannot serve TLS with ${pair.paths.certFile} and ${pair.paths.keyFile}: ` +
        (err instanceof Error ? err.message : String(err)),
      err,
    );
  }
}

async function readPem(path: string, what: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (err) {
    const why = readFailure(err);
    throw new TlsError(`cannot read the TLS ${what} ${path}: ${why}`, err);
  }
}

/** X.509 names come one attribute a line from node:crypto; the log wants one line. */
function oneLine(name: string): string {
  return name.split("\n").filter((p) => p !== "").join(", ");
}

/**
 * Is the file at `path` readable by its group or by everyone (mode bits
 * 0o044)? A private key or a file with secrets should be readable by its
 * owner only; false where the mode is unknown (Windows) or the file cannot
 * be examined.
 *
 * @param path the file
 * @returns whether its group or the world may read it
 *
 * @example
 * ```ts
 * import { readableByOthers } from "./tls.ts";
 * const file = await Deno.makeTempFile();
 * await Deno.chmod(file, 0o600);
 * if (readableByOthers(file)) throw new Error("0600 is private");
 * await Deno.chmod(file, 0o644);
 * if (!readableByOthers(file)) throw new Error("0644 is world-readable");
 * await Deno.remove(file);
 * ```
 */
export function readableByOthers(path: string): boolean {
  try {
    const mode = Deno.statSync(path).mode;
    return mode !== null && (mode & 0o044) !== 0;
  } catch {
    return false;
  }
}
