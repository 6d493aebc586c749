/**
 * The installation's SAML request-signing pair
 * (lib/login/saml_sp_key.ts, stored by lib/store/saml_sp.ts): one
 * pair per store whichever process asks first, the private key stored only
 * sealed under the token key, and a process with another key file refused.
 */
import { createSign, createVerify, X509Certificate } from "node:crypto";
import { assert, assertEquals, assertNotEquals, assertRejects } from "../assert.ts";
import { randomTokenKey } from "../../lib/auth/hmac_key.ts";
import { samlSigningPair } from "../../lib/login/saml_sp_key.ts";
import { deleteSamlSp, findSamlSp } from "../../lib/store/saml_sp.ts";
import { openKv } from "../../lib/store/kv.ts";
import { UnavailableError } from "../../lib/errors.ts";

/**
 * A KV file in a temporary directory; `open` gives another handle on it,
 * opened as a server process opens its store.
 */
async function kvFile() {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-saml-sp-" });
  const handles: Deno.Kv[] = [];
  return {
    async open() {
      const kv = await openKv(`${dir}/kv.sqlite3`);
      handles.push(kv);
      return kv;
    },
    async [Symbol.asyncDispose]() {
      for (const kv of handles) kv.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("two handles on one store asking at once get the same pair", async () => {
  await using file = await kvFile();
  const key = await randomTokenKey();
  const [a, b] = await Promise.all([
    samlSigningPair({ kv: await file.open(), key }),
    samlSigningPair({ kv: await file.open(), key }),
  ]);
  assertEquals(b.certificate, a.certificate);
  assertEquals(b.privateKey, a.privateKey);
  const later = await samlSigningPair({ kv: await file.open(), key });
  assertEquals(later.certificate, a.certificate);
  assert(a.certificate.startsWith("-----BEGIN CERTIFICATE-----"));
  assert(a.privateKey.startsWith("-----BEGIN PRIVATE KEY-----"));
});

Deno.test("the certificate is for the private key: a request signed with the key verifies with it", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const pair = await samlSigningPair({ kv, key: await randomTokenKey() });
    const data = "SAMLRequest=abc&RelayState=def&SigAlg=rsa-sha256";
    const signature = createSign("RSA-SHA256").update(data).sign(pair.privateKey);
    assert(createVerify("RSA-SHA256").update(data).verify(pair.certificate, signature));
    const cert = new X509Certificate(pair.certificate);
    assertEquals(cert.publicKey.asymmetricKeyDetails?.modulusLength, 2048);
    assert(Date.parse(cert.validFrom) <= Date.now() && Date.now() < Date.parse(cert.validTo));
    assert(
      Date.parse(cert.validTo) > Date.now() + 9 * 365 * 86_400_000,
      "identity providers are not asked to renew it soon",
    );
  } finally {
    kv.close();
  }
});

Deno.test("the store holds the certificate and the key sealed, never the private key in the clear", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    const pair = await samlSigningPair({ kv, key: await randomTokenKey() });
    const body = pair.privateKey.replace(/-----(BEGIN|END) PRIVATE KEY-----/g, "").replace(
      /\s+/g,
      "",
    );
    const record = await findSamlSp(kv);
    assert(record !== null);
    assertEquals(record.certificate, pair.certificate);
    const everything: string[] = [];
    for await (const entry of kv.list({ prefix: [] })) everything.push(JSON.stringify(entry.value));
    const stored = everything.join("\n");
    assert(!stored.includes("PRIVATE KEY"));
    assert(!stored.includes(body.slice(0, 64)) && !stored.includes(body.slice(-64)));
    const lines = pair.privateKey.split("\n").filter((l) => l.length === 64);
    assert(lines.length > 10 && lines.every((l) => !stored.includes(l)), "no line of the key");
  } finally {
    kv.close();
  }
});

Deno.test("a process with another token key gets 503 login_unavailable, and the stored pair stays", async () => {
  await using file = await kvFile();
  const key = await randomTokenKey();
  const first = await samlSigningPair({ kv: await file.open(), key });
  const other = { kv: await file.open(), key: await randomTokenKey() };
  const err = await assertRejects(() => samlSigningPair(other), UnavailableError);
  assertEquals([err.status, err.code], [503, "login_unavailable"]);
  await assertRejects(() => samlSigningPair(other), UnavailableError, "another token key");
  const again = await samlSigningPair({ kv: await file.open(), key });
  assertEquals(again.certificate, first.certificate);
});

Deno.test("once the stored pair is deleted, the next one asking makes a new pair", async () => {
  await using file = await kvFile();
  const key = await randomTokenKey();
  const kv = await file.open();
  const old = await samlSigningPair({ kv, key });
  await deleteSamlSp(kv);
  assertEquals(await findSamlSp(kv), null);
  const fresh = await samlSigningPair({ kv: await file.open(), key: await randomTokenKey() });
  assertNotEquals(fresh.certificate, old.certificate);
  assertEquals((await findSamlSp(kv))?.certificate, fresh.certificate);
});
