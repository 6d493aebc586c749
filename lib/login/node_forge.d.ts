/**
 * The part of `node-forge`'s API that lib/login/saml_sp_key.ts uses
 * (a self-signed certificate for a WebCrypto-made key), typed here rather
 * than through `@types/node-forge`, which depends on the newest
 * `@types/node` (see nodemailer.d.ts for why that breaks type-checking).
 *
 * @module
 */

/** An RSA private key. */
export interface RsaPrivateKey {
  n: unknown;
  e: unknown;
}

/** An X.509 certificate being built. */
export interface Certificate {
  publicKey: unknown;
  serialNumber: string;
  validity: { notBefore: Date; notAfter: Date };
  setSubject(attrs: { name: string; value: string }[]): void;
  setIssuer(attrs: { name: string; value: string }[]): void;
  sign(key: RsaPrivateKey, md: unknown): void;
}

declare const forge: {
  pki: {
    privateKeyFromPem(pem: string): RsaPrivateKey;
    setRsaPublicKey(n: unknown, e: unknown): unknown;
    createCertificate(): Certificate;
    certificateToPem(cert: Certificate): string;
  };
  md: { sha256: { create(): unknown } };
};
export default forge;
