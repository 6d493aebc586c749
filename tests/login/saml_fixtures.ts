/**
 * Test helper: what the SAML tests need of an identity provider without
 * running one: a self-signed certificate (RSA-2048 made with WebCrypto,
 * signed with node-forge) and an identity provider's metadata document
 * shaped like the ones real providers publish (signing and encryption
 * keys, a POST and a Redirect single sign-on service, logout, NameID
 * formats).
 *
 * @module
 */
import { makeSelfSignedPair } from "../../lib/login/self_signed.ts";

/** A certificate and its key, PEM. */
export interface TestCertificate {
  /** The self-signed certificate, PEM. */
  certificate: string;
  /** Its PKCS#8 private key, PEM. */
  privateKey: string;
  /** The certificate's DER as base64 on one line (the `ds:X509Certificate` text). */
  der: string;
}

/** Makes an RSA-2048 key and a self-signed certificate (one year) for `commonName`. */
export async function makeCertificate(commonName = "idp.acme.test"): Promise<TestCertificate> {
  const pair = await makeSelfSignedPair(commonName, 365 * 24 * 60 * 60_000);
  return { ...pair, der: derOf(pair.certificate) };
}

/** The base64 DER of a PEM certificate, on one line. */
export function derOf(pem: string): string {
  return pem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
}

/** A key of an identity provider's metadata. */
export interface MetadataKey {
  /** The `use` attribute; absent: no attribute (the key serves both purposes). */
  use?: "signing" | "encryption";
  /** The certificate, PEM (or any text, to put in `ds:X509Certificate` as is). */
  certificate: string;
}

/** What {@linkcode idpMetadataXml} writes. */
export interface IdpMetadataOptions {
  /** The entity id (default `https://idp.acme.test/realms/acme`). */
  entityId?: string;
  /** The HTTP-Redirect single sign-on URL (default `<entityId>/protocol/saml/redirect`); null: none. */
  redirectUrl?: string | null;
  /** The HTTP-POST single sign-on URL (default `<entityId>/protocol/saml/post`). */
  postUrl?: string;
  /** The keys, in order. */
  keys: MetadataKey[];
}

/** The default entity id of the test identity provider. */
export const IDP_ENTITY_ID = "https://idp.acme.test/realms/acme";

/**
 * An identity provider's metadata document, as Keycloak, Okta or Entra ID
 * publish one: the certificate text wrapped at 64 columns, the POST
 * binding listed before the Redirect binding, logout and NameID formats.
 */
export function idpMetadataXml(options: IdpMetadataOptions): string {
  const entityId = options.entityId ?? IDP_ENTITY_ID;
  const redirect = options.redirectUrl === undefined
    ? `${entityId}/protocol/saml/redirect`
    : options.redirectUrl;
  const post = options.postUrl ?? `${entityId}/protocol/saml/post`;
  const keys = options.keys.map((k) => {
    const text = k.certificate.includes("-----BEGIN CERTIFICATE-----")
      ? derOf(k.certificate).match(/.{1,64}/g)!.join("\n            ")
      : k.certificate;
    return `    <md:KeyDescriptor${k.use === undefined ? "" : ` use="${k.use}"`}>
      <ds:KeyInfo>
        <ds:KeyName>key-1</ds:KeyName>
        <ds:X509Data>
          <ds:X509Certificate>
            ${text}
          </ds:X509Certificate>
        </ds:X509Data>
      </ds:KeyInfo>
    </md:KeyDescriptor>`;
  }).join("\n");
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${entityId}">
  <md:IDPSSODescriptor WantAuthnRequestsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
${keys}
    <md:SingleLogoutService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${entityId}/protocol/saml/logout"/>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:2.0:nameid-format:persistent</md:NameIDFormat>
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${post}"/>${
    redirect === null ? "" : `
    <md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="${redirect}"/>`
  }
  </md:IDPSSODescriptor>
  <md:Organization>
    <md:OrganizationName xml:lang="en">Acme</md:OrganizationName>
    <md:OrganizationDisplayName xml:lang="en">Acme</md:OrganizationDisplayName>
    <md:OrganizationURL xml:lang="en">https://acme.test</md:OrganizationURL>
  </md:Organization>
</md:EntityDescriptor>
`;
}
