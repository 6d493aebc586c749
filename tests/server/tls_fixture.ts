/**
 * Test helper: throwaway certificate authorities and server certificates
 * made with the `openssl` command (P-256 keys, valid for two days), for the
 * HTTPS tests of `cfgtool serve`. Tests that need it are skipped where
 * `openssl` is not installed ({@linkcode HAVE_OPENSSL}).
 *
 * @module
 */

/** Is the `openssl` command available? */
export const HAVE_OPENSSL: boolean = (() => {
  try {
    return new Deno.Command("openssl", { args: ["version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
})();

/** A certificate authority: its certificate (PEM text) and the files it signs with. */
export interface TestCa {
  /** Its certificate, PEM (what a client trusts). */
  pem: string;
  certFile: string;
  keyFile: string;
}

/** A server certificate and key, as files and texts. */
export interface TestPair {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * Makes a self-signed CA named `name` in `dir`.
 *
 * @example
 * ```ts ignore
 * const ca = await makeCa(dir, "a");
 * ```
 */
export async function makeCa(dir: string, name: string): Promise<TestCa> {
  const certFile = `${dir}/ca-${name}.pem`;
  const keyFile = `${dir}/ca-${name}.key`;
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "2",
    "-subj",
    `/CN=cfgtool test CA ${name}`,
  ], dir);
  return { pem: await Deno.readTextFile(certFile), certFile, keyFile };
}

/**
 * Makes a server certificate for `localhost` and `127.0.0.1` signed by
 * `ca`, with its key, in `dir`.
 *
 * @example
 * ```ts ignore
 * const pair = await makeServerPair(dir, ca, "a");
 * ```
 */
export async function makeServerPair(dir: string, ca: TestCa, name: string): Promise<TestPair> {
  const keyFile = `${dir}/server-${name}.key`;
  const csr = `${dir}/server-${name}.csr`;
  const certFile = `${dir}/server-${name}.pem`;
  const ext = `${dir}/server-${name}.ext`;
  await Deno.writeTextFile(
    ext,
    "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
  );
  await openssl([
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    csr,
    "-subj",
    `/CN=localhost ${name}`,
  ], dir);
  await openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    ca.certFile,
    "-CAkey",
    ca.keyFile,
    "-CAcreateserial",
    "-out",
    certFile,
    "-days",
    "2",
    "-extfile",
    ext,
  ], dir);
  return {
    certFile,
    keyFile,
    cert: await Deno.readTextFile(certFile),
    key: await Deno.readTextFile(keyFile),
  };
}

/**
 * Puts `cert` and `key` at the paths the server reads, each by an atomic
 * rename (as a certificate manager's deploy step would), readable by the
 * owner only.
 *
 * @example
 * ```ts ignore
 * await installPair({ cert: pair.cert, key: pair.key }, "/tmp/x/cert.pem", "/tmp/x/key.pem");
 * ```
 */
export async function installPair(
  pair: { cert: string; key: string },
  certFile: string,
  keyFile: string,
): Promise<void> {
  for (const [text, path] of [[pair.cert, certFile], [pair.key, keyFile]] as const) {
    // owner-only, as a key should be (the server warns about a key others can read)
    await Deno.writeTextFile(`${path}.new`, text, { mode: 0o600 });
    await Deno.rename(`${path}.new`, path);
  }
}
