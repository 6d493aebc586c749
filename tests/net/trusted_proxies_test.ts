import { assertEquals, assertThrows } from "../assert.ts";
import {
  MAX_HOPS,
  splitProxyList,
  TrustedProxies,
  TrustedProxyError,
} from "../../lib/net/trusted_proxies.ts";

const lb = TrustedProxies.parse(["10.0.0.0/8", "127.0.0.1", "fd00::/8"]);

Deno.test("the header is walked from the right, trusted hops skipped", () => {
  assertEquals(lb.clientAddress("10.0.0.1", "203.0.113.9"), "203.0.113.9");
  assertEquals(lb.clientAddress("10.0.0.1", "203.0.113.9, 10.2.3.4, 127.0.0.1"), "203.0.113.9");
  // a client that writes its own header: only the part right of it counts
  assertEquals(lb.clientAddress("10.0.0.1", "6.6.6.6, 203.0.113.9"), "203.0.113.9");
  // every hop trusted: the leftmost is the client
  assertEquals(lb.clientAddress("10.0.0.1", "10.9.9.9, 10.8.8.8"), "10.9.9.9");
  // two headers arrive comma-joined
  assertEquals(lb.clientAddress("10.0.0.1", "6.6.6.6,203.0.113.9,   10.1.1.1"), "203.0.113.9");
});

Deno.test("an untrusted peer's header is ignored; no proxies: always the peer", () => {
  assertEquals(lb.clientAddress("192.0.2.7", "203.0.113.9"), "192.0.2.7");
  assertEquals(lb.clientAddress("10.0.0.1", null), "10.0.0.1");
  assertEquals(TrustedProxies.NONE.clientAddress("10.0.0.1", "203.0.113.9"), "10.0.0.1");
  assertEquals(TrustedProxies.NONE.any, false);
});

Deno.test("ports, brackets, IPv6 and IPv4-mapped addresses", () => {
  assertEquals(lb.clientAddress("10.0.0.1", "203.0.113.9:51234"), "203.0.113.9");
  assertEquals(lb.clientAddress("10.0.0.1", "[2001:db8::1]:443"), "2001:db8::1");
  assertEquals(lb.clientAddress("10.0.0.1", "2001:db8::1"), "2001:db8::1");
  assertEquals(lb.clientAddress("fd00::5", "2001:db8::2, fd12::1"), "2001:db8::2");
  // a mapped peer is judged as the IPv4 address it carries; so is a mapped entry
  assertEquals(lb.clientAddress("::ffff:10.0.0.1", "::ffff:203.0.113.9"), "203.0.113.9");
  assertEquals(lb.trusts("::ffff:127.0.0.1"), true);
  assertEquals(TrustedProxies.parse(["::ffff:10.0.0.0/104"]).trusts("10.200.0.1"), true);
});

Deno.test("garbage stops the walk at the last trusted hop", () => {
  for (
    const h of ["nope", "999.1.1.1", "1.2.3", "0x7f.1", "fe80::1%eth0", "[::1", "x".repeat(100)]
  ) {
    assertEquals(lb.clientAddress("10.0.0.1", h), "10.0.0.1", h);
    assertEquals(lb.clientAddress("10.0.0.1", `203.0.113.9, ${h}`), "10.0.0.1", h);
  }
  assertEquals(lb.clientAddress("10.0.0.1", "garbage, 10.2.2.2"), "10.2.2.2");
  assertEquals(lb.clientAddress("10.0.0.1", ""), "10.0.0.1");
  assertEquals(lb.clientAddress("10.0.0.1", " , ,"), "10.0.0.1");
});

Deno.test("at most MAX_HOPS entries are read, however long the header", () => {
  const trustedRun = Array.from({ length: MAX_HOPS + 5 }, (_, i) => `10.0.0.${i % 250}`);
  const header = ["203.0.113.9", ...trustedRun].join(", ");
  // the walk stops inside the trusted run: never further left
  assertEquals(lb.clientAddress("10.0.0.1", header).startsWith("10."), true);
  const huge = "1.1.1.1,".repeat(100_000);
  assertEquals(lb.clientAddress("10.0.0.1", huge + "203.0.113.9"), "203.0.113.9");
});

Deno.test("ranges: CIDR and single addresses; anything else is refused by name", () => {
  const p = TrustedProxies.parse(["192.0.2.0/24", "::1", "0.0.0.0/0"]);
  assertEquals(p.trusts("198.51.100.1"), true); // 0.0.0.0/0
  assertEquals(p.trusts("::1"), true);
  assertEquals(p.trusts("::2"), false);
  for (const bad of ["10.0.0.0/33", "fd00::/129", "10.0.0.0/", "10.0.0.0/a", "10/8", "host", ""]) {
    const err = assertThrows(() => TrustedProxies.parse([bad]), TrustedProxyError);
    assertEquals(err.message.includes(JSON.stringify(bad)), true, err.message);
  }
});

Deno.test("lists split on commas and white space", () => {
  assertEquals(splitProxyList("10.0.0.0/8 127.0.0.1,\t::1\n"), ["10.0.0.0/8", "127.0.0.1", "::1"]);
  assertEquals(splitProxyList(["a,b", "c"]), ["a", "b", "c"]);
  assertEquals(splitProxyList(undefined), []);
});
