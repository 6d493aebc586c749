import * as oauth from "oauth4webapi";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { UnavailableError } from "../../lib/errors.ts";
import {
  clientAuthentication,
  discoverIssuer,
  issuerRequestOptions,
} from "../../lib/login/oidc_metadata.ts";

/** Serves `metadata(issuer)` at the discovery path and counts the requests. */
function fakeIssuer(metadata: (issuer: string) => unknown) {
  let hits = 0;
  const server: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (req): Response => {
      hits++;
      if (new URL(req.url).pathname !== "/.well-known/openid-configuration") {
        return new Response("not found", { status: 404 });
      }
      return Response.json(metadata(new URL(req.url).origin));
    },
  );
  return {
    issuer: `http://127.0.0.1:${server.addr.port}`,
    hits: () => hits,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test("discovery reads the issuer's metadata once and reuses it", async () => {
  await using idp = fakeIssuer((issuer) => ({
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
  }));
  const first = await discoverIssuer(idp.issuer);
  assertEquals(first.token_endpoint, `${idp.issuer}/token`);
  const second = await discoverIssuer(idp.issuer);
  assertEquals(second, first);
  assertEquals(idp.hits(), 1);
});

Deno.test("metadata naming another issuer, or no endpoints, is 503 login_unavailable", async () => {
  await using impostor = fakeIssuer(() => ({
    issuer: "https://someone-else.example",
    authorization_endpoint: "https://someone-else.example/auth",
    token_endpoint: "https://someone-else.example/token",
  }));
  const err = await assertRejects(() => discoverIssuer(impostor.issuer), UnavailableError);
  assertEquals(err.code, "login_unavailable");
  assertEquals(err.status, 503);
  await using bare = fakeIssuer((issuer) => ({ issuer }));
  await assertRejects(() => discoverIssuer(bare.issuer), UnavailableError, "names no");
});

Deno.test("an issuer that does not answer is 503 login_unavailable", async () => {
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(),
  );
  const issuer = `http://127.0.0.1:${server.addr.port}`;
  await server.shutdown();
  await assertRejects(() => discoverIssuer(issuer), UnavailableError, "did not answer");
});

Deno.test("plain HTTP is allowed for an http:// (loopback) issuer only; each issuer keeps its JWKS cache", () => {
  const local = issuerRequestOptions("http://127.0.0.1:9");
  assertEquals(local[oauth.allowInsecureRequests], true);
  assertEquals(
    issuerRequestOptions("https://idp.example.com")[oauth.allowInsecureRequests],
    undefined,
  );
  assert(issuerRequestOptions("http://127.0.0.1:9")[oauth.jwksCache] === local[oauth.jwksCache]);
  assert(local.signal() instanceof AbortSignal);
});

Deno.test("the client secret goes in HTTP Basic unless the issuer supports only client_secret_post", async () => {
  const apply = async (methods?: string[]) => {
    const as: oauth.AuthorizationServer = methods
      ? { issuer: "https://i", token_endpoint_auth_methods_supported: methods }
      : { issuer: "https://i" };
    const body = new URLSearchParams();
    const headers = new Headers();
    await clientAuthentication(as, "s3cret")(as, { client_id: "c" }, body, headers);
    return { basic: headers.get("authorization"), post: body.get("client_secret") };
  };
  assertEquals(await apply(), { basic: `Basic ${btoa("c:s3cret")}`, post: null });
  assertEquals(await apply(["client_secret_basic", "client_secret_post"]), {
    basic: `Basic ${btoa("c:s3cret")}`,
    post: null,
  });
  assertEquals(await apply(["client_secret_post"]), { basic: null, post: "s3cret" });
});
