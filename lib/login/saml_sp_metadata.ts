/**
 * The service-provider metadata of a tenant: the document an identity
 * provider's administrator loads to register cfgtool. It names the SP
 * entity id (the metadata URL itself), the assertion consumer service
 * (HTTP-POST), the NameID format cfgtool asks for (email address), that
 * authentication requests are signed and assertions must be, and the
 * certificate of the request-signing key.
 *
 * @module
 */
import type { SamlEndpoints } from "./saml_check.ts";

/** Escapes text for an XML attribute or element. */
function xmlText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

/**
 * The SP metadata document of `endpoints`, with `certificate` (PEM) as the
 * signing key's certificate.
 *
 * @param endpoints the tenant's SP entity id and consumer URL
 * @param certificate the signing certificate, PEM
 * @returns the XML document
 *
 * @example
 * ```ts
 * import { spMetadataXml } from "./saml_sp_metadata.ts";
 * const xml = spMetadataXml({
 *   entityId: "https://f.example.com/auth/saml/metadata?tenant=acme",
 *   acsUrl: "https://f.example.com/auth/saml/acs",
 * }, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
 * if (!xml.includes('entityID="https://f.example.com/auth/saml/metadata?tenant=acme"')) throw new Error();
 * if (!xml.includes("<ds:X509Certificate>MIIB</ds:X509Certificate>")) throw new Error();
 * ```
 */
export function spMetadataXml(endpoints: SamlEndpoints, certificate: string): string {
  const der = certificate.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  return `<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" entityID="${
    xmlText(endpoints.entityId)
  }">
  <md:SPSSODescriptor AuthnRequestsSigned="true" WantAssertionsSigned="true" protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:KeyDescriptor use="signing">
      <ds:KeyInfo>
        <ds:X509Data>
          <ds:X509Certificate>${der}</ds:X509Certificate>
        </ds:X509Data>
      </ds:KeyInfo>
    </md:KeyDescriptor>
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="${
    xmlText(endpoints.acsUrl)
  }" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
`;
}
