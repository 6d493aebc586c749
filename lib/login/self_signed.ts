/**
 * A key pair with a self-signed certificate, as SAML uses them: an
 * RSA-2048 key made with WebCrypto and an X.509 certificate for it (SHA-256,
 * serial random, valid from a minute ago), signed with node-forge. SAML
 * parties trust the certificate their peer's metadata carries, not a CA.
 *
 * @module
 */
// @ts-types="./node_forge.d.ts"
import forge from "node-forge";
import { base64 } from "base";
import { toHex } from "../bytes.ts";

/** A certificate and its private key, PEM. */
export interface SelfSignedPair {
  /** The self-signed certificate, PEM. */
  certificate: string;
  /** The PKCS#8 private key, PEM. */
  privateKey: string;
}

/**
 * Makes an RSA-2048 key and a self-signed certificate for `commonName`,
 * valid for `lifetimeMs`.
 *
 * @param commonName the certificate's subject and issuer common name
 * @param lifetimeMs how long the certificate is valid, ms
 * @returns the certificate and the private key
 *
 * @example
 * ```ts
 * import { X509Certificate } from "node:crypto";
 * import { makeSelfSignedPair } from "./self_signed.ts";
 * const pair = await makeSelfSignedPair("idp.example.com", 86_400_000);
 * if (!new X509Certificate(pair.certificate).subject.includes("idp.example.com")) throw new Error();
 * ```
 */
export async function makeSelfSignedPair(
  commonName: string,
  lifetimeMs: number,
): Promise<SelfSignedPair> {
  const keys = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  const privateKey = `-----BEGIN PRIVATE KEY-----\n${
    base64.encode(pkcs8).match(/.{1,64}/g)!.join("\n")
  }\n-----END PRIVATE KEY-----\n`;
  const priv = forge.pki.privateKeyFromPem(privateKey);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(priv.n, priv.e);
  // Positive (first byte below 0x80), 16 bytes.
  cert.serialNumber = "01" + toHex(crypto.getRandomValues(new Uint8Array(15)));
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + lifetimeMs);
  const name = [{ name: "commonName", value: commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.sign(priv, forge.md.sha256.create());
  return { certificate: forge.pki.certificateToPem(cert), privateKey };
}
