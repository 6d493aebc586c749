/**
 * The destination rule of webhooks (lib/net/public_address.ts): every
 * refused range of IPv4 and IPv6 with its reason, IPv6 addresses that carry
 * an IPv4 one judged by it, the metadata addresses, names that are or
 * resolve to such addresses, and the switch that allows them.
 */
import { assert, assertEquals, assertRejects } from "../assert.ts";
import {
  addressRefusal,
  checkDestination,
  RefusedDestination,
  UnresolvedDestination,
} from "../../lib/net/public_address.ts";

Deno.test("every non-public IPv4 range is refused, naming why", () => {
  const cases: [string, string][] = [
    ["127.0.0.1", "a loopback address"],
    ["127.255.255.254", "a loopback address"],
    ["10.0.0.1", "a private (RFC 1918) address"],
    ["10.255.255.255", "a private (RFC 1918) address"],
    ["172.16.0.1", "a private (RFC 1918) address"],
    ["172.31.255.254", "a private (RFC 1918) address"],
    ["192.168.0.1", "a private (RFC 1918) address"],
    ["169.254.1.1", "a link-local address"],
    ["169.254.169.254", "a cloud metadata address"],
    ["0.0.0.0", "an unspecified address"],
    ["0.1.2.3", "an unspecified address"],
    ["100.64.0.1", "a carrier-grade NAT (shared) address"],
    ["100.127.255.254", "a carrier-grade NAT (shared) address"],
    ["100.100.100.200", "a carrier-grade NAT (shared) address"],
    ["224.0.0.1", "a multicast address"],
    ["239.255.255.250", "a multicast address"],
    ["255.255.255.255", "a broadcast address"],
    ["192.0.2.1", "a reserved address (reserved)"],
    ["198.18.0.1", "a reserved address (reserved)"],
    ["203.0.113.9", "a reserved address (reserved)"],
    ["240.0.0.1", "a reserved address (reserved)"],
  ];
  for (const [address, why] of cases) assertEquals(addressRefusal(address), why, address);
});

Deno.test("public IPv4 and IPv6 addresses pass, neighbours of the refused ranges too", () => {
  for (
    const address of [
      "93.184.216.34",
      "8.8.8.8",
      "1.1.1.1",
      "172.15.255.255",
      "172.32.0.1",
      "100.63.255.255",
      "100.128.0.1",
      "169.253.255.255",
      "11.0.0.1",
      "2606:4700:4700::1111",
      "2a00:1450:4001:80b::200e",
    ]
  ) {
    assertEquals(addressRefusal(address), undefined, address);
  }
});

Deno.test("every non-public IPv6 range is refused, the metadata address by name", () => {
  const cases: [string, string][] = [
    ["::1", "a loopback address"],
    ["::", "an unspecified address"],
    ["fe80::1", "a link-local address"],
    ["fc00::1", "a unique local (private) address"],
    ["fd12:3456::1", "a unique local (private) address"],
    ["fd00:ec2::254", "a cloud metadata address"],
    ["fd00:ec2:0:0:0:0:0:254", "a cloud metadata address"],
    ["ff02::1", "a multicast address"],
    ["2001:db8::1", "a reserved address (reserved)"],
    ["2001::1", "a Teredo tunnel address"],
    ["fec0::1", "a reserved address (deprecatedSiteLocal)"],
    ["::7f00:1", "a reserved address (IPv4-compatible)"],
    ["100::1", "a reserved address (discard)"],
  ];
  for (const [address, why] of cases) assertEquals(addressRefusal(address), why, address);
});

Deno.test("an IPv6 address carrying an IPv4 one is judged by it: mapped, translated, NAT64, 6to4", () => {
  const cases: [string, string | undefined][] = [
    ["::ffff:127.0.0.1", "a loopback address (IPv4 127.0.0.1)"],
    ["::ffff:7f00:1", "a loopback address (IPv4 127.0.0.1)"],
    ["::ffff:10.0.0.1", "a private (RFC 1918) address (IPv4 10.0.0.1)"],
    ["::ffff:169.254.169.254", "a cloud metadata address (IPv4 169.254.169.254)"],
    ["::ffff:0:192.168.1.1", "a private (RFC 1918) address (IPv4 192.168.1.1)"],
    ["64:ff9b::10.1.1.1", "a private (RFC 1918) address (IPv4 10.1.1.1)"],
    ["64:ff9b::a9fe:a9fe", "a cloud metadata address (IPv4 169.254.169.254)"],
    ["2002:c0a8:0101::1", "a private (RFC 1918) address (IPv4 192.168.1.1)"],
    ["2002:7f00:0001::", "a loopback address (IPv4 127.0.0.1)"],
    ["64:ff9b:1::a00:1", "a reserved address (local-use NAT64)"],
    ["::ffff:93.184.216.34", undefined],
    ["64:ff9b::93.184.216.34", undefined],
    ["2002:5db8:d822::1", undefined],
  ];
  for (const [address, why] of cases) assertEquals(addressRefusal(address), why, address);
});

Deno.test("checkDestination refuses literal addresses and names that are or resolve to refused ones", async () => {
  const resolve = (name: string) =>
    Promise.resolve(
      ({
        "hooks.example.com": ["93.184.216.34", "2606:4700::1"],
        "mixed.example.com": ["93.184.216.34", "192.168.1.5"],
        "v6.example.com": ["fd00:ec2::254"],
      } as Record<string, string[]>)[name] ?? [],
    );
  const check = (url: string) => checkDestination(new URL(url), { allowPrivate: false, resolve });
  const ok = await check("https://hooks.example.com:8443/x?y=1");
  assertEquals(ok, {
    hostname: "hooks.example.com",
    port: 8443,
    tls: true,
    addresses: ["93.184.216.34", "2606:4700::1"],
  });
  assertEquals((await check("http://[2606:4700::1111]/")).addresses, ["2606:4700::1111"]);
  const refusals: [string, string][] = [
    ["http://127.0.0.1/", "127.0.0.1 is a loopback address"],
    ["http://2130706433/", "127.0.0.1 is a loopback address"],
    ["http://0177.0.0.1/", "127.0.0.1 is a loopback address"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1 is a loopback address (IPv4 127.0.0.1)"],
    ["http://localhost:8080/", "localhost is a loopback name"],
    ["http://api.localhost/", "api.localhost is a loopback name"],
    ["http://mixed.example.com/", "mixed.example.com resolves to 192.168.1.5, a private"],
    ["http://v6.example.com/", "v6.example.com resolves to fd00:ec2::254, a cloud metadata"],
    ["ftp://hooks.example.com/", "ftp: is not http: or https:"],
  ];
  for (const [url, why] of refusals) {
    const err = await check(url).then(() => null, (e) => e);
    assert(err instanceof RefusedDestination, `${url}: ${err}`);
    assert(err.message.startsWith(why), `${url}: ${err.message}`);
  }
  await assertRejects(() => check("http://nowhere.example.com/"), UnresolvedDestination);
});

Deno.test("with private destinations allowed, nothing is looked up or refused", async () => {
  const resolve = () => Promise.reject(new Error("looked up"));
  const dest = await checkDestination(new URL("http://localhost:9000/in"), {
    allowPrivate: true,
    resolve,
  });
  assertEquals(dest, { hostname: "localhost", port: 9000, tls: false, addresses: ["localhost"] });
  const v6 = await checkDestination(new URL("https://[::1]/"), { allowPrivate: true, resolve });
  assertEquals(v6.addresses, ["::1"]);
});
