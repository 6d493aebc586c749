/**
 * The service-provider metadata an identity provider's administrator
 * loads (lib/login/saml_sp_metadata.ts), read back with an XML
 * parser as the identity provider reads it.
 */
import { X509Certificate } from "node:crypto";
import { DOMParser } from "@xmldom/xmldom";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { spMetadataXml } from "../../lib/login/saml_sp_metadata.ts";
import { samlEndpoints } from "../../lib/login/saml_flow.ts";
import { makeCertificate } from "./saml_fixtures.ts";

const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
const DS = "http://www.w3.org/2000/09/xmldsig#";

const sp = await makeCertificate("cfgtool SAML service provider");

/** Parses `xml` strictly: any parser error fails the test. */
function parse(xml: string): Document {
  const problems: string[] = [];
  const doc = new DOMParser({
    errorHandler: {
      warning: (m: string) => problems.push(m),
      error: (m: string) => problems.push(m),
      fatalError: (m: string) => problems.push(m),
    },
  }).parseFromString(xml, "text/xml") as unknown as Document;
  assertEquals(problems, [], "the document is well-formed XML");
  return doc;
}

/** The one element `local` of the metadata namespace under `doc`. */
function one(doc: Document, ns: string, local: string): Element {
  const found = doc.getElementsByTagNameNS(ns, local);
  assertEquals(found.length, 1, local);
  return found[0]!;
}

Deno.test("the SP metadata names the entity id, the POST consumer service, signed requests and assertions, and the certificate", () => {
  const endpoints = samlEndpoints("https://flags.acme.test", "acme");
  const doc = parse(spMetadataXml(endpoints, sp.certificate));
  const entity = doc.documentElement!;
  assertEquals([entity.namespaceURI, entity.localName], [MD, "EntityDescriptor"]);
  assertEquals(
    entity.getAttribute("entityID"),
    "https://flags.acme.test/auth/saml/metadata?tenant=acme",
  );
  const descriptor = one(doc, MD, "SPSSODescriptor");
  assertEquals(descriptor.getAttribute("AuthnRequestsSigned"), "true");
  assertEquals(descriptor.getAttribute("WantAssertionsSigned"), "true");
  assertStringIncludes(
    descriptor.getAttribute("protocolSupportEnumeration") ?? "",
    "urn:oasis:names:tc:SAML:2.0:protocol",
  );
  const acs = one(doc, MD, "AssertionConsumerService");
  assertEquals(acs.getAttribute("Binding"), "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
  assertEquals(acs.getAttribute("Location"), "https://flags.acme.test/auth/saml/acs");
  assertEquals(
    one(doc, MD, "NameIDFormat").textContent,
    "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  );
  assertEquals(one(doc, MD, "KeyDescriptor").getAttribute("use"), "signing");
  const text = one(doc, DS, "X509Certificate").textContent ?? "";
  const published = new X509Certificate(
    `-----BEGIN CERTIFICATE-----\n${text.trim()}\n-----END CERTIFICATE-----\n`,
  );
  assert(published.raw.equals(new X509Certificate(sp.certificate).raw), "the given certificate");
});

Deno.test("URLs with & and other markup characters are escaped and read back as given", () => {
  const endpoints = {
    entityId: "https://flags.acme.test/auth/saml/metadata?tenant=acme&v=1",
    acsUrl: 'https://flags.acme.test/auth/saml/acs?a=<b>&c="d"',
  };
  const xml = spMetadataXml(endpoints, sp.certificate);
  assertStringIncludes(xml, "tenant=acme&amp;v=1");
  const doc = parse(xml);
  assertEquals(doc.documentElement!.getAttribute("entityID"), endpoints.entityId);
  assertEquals(one(doc, MD, "AssertionConsumerService").getAttribute("Location"), endpoints.acsUrl);
});
