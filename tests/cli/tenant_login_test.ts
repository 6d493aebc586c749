/**
 * `cfgtool tenant login set|show` (lib/cli/tenant_login.ts): how options and
 * policy files become the policy sent, the refusal of a literal client
 * secret before anything is sent, and what `show` prints. The subprocess
 * cases run the real CLI against a tiny Deno.serve that answers canned
 * bodies and records the requests.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import {
  checkSecretRef,
  loginPolicyFields,
  policyFromFile,
  policyFromOptions,
} from "../../lib/cli/tenant_login.ts";
import { UsageError } from "../../lib/errors.ts";
import type { LoginPolicyRecord } from "../../lib/protocol/login_policy.ts";
import { type CliResult, runCfgtool } from "../cli_process.ts";

const SECRET = "hunter2-DoNotSendThis";
const TOKEN = "svc_admin_DoNotPrintThisValue123";

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert(e instanceof UsageError, `expected a UsageError, got ${e}`);
    return e.message;
  }
  throw new Error("expected a UsageError, nothing was thrown");
}

Deno.test("policyFromOptions: --method oidc sends exactly the fields given, secret by reference", () => {
  assertEquals(
    policyFromOptions({
      method: "oidc",
      issuer: "https://sso.acme.com/realms/staff",
      clientId: "cfgtool",
      clientSecretRef: "env:ACME_OIDC_SECRET",
      allowedEmailDomain: ["acme.com", "acme.co.uk"],
      groupsClaim: "roles",
      adminGroup: ["cfgtool-admins"],
    }),
    {
      method: "oidc",
      issuer: "https://sso.acme.com/realms/staff",
      client_id: "cfgtool",
      client_secret_ref: "env:ACME_OIDC_SECRET",
      allowed_email_domains: ["acme.com", "acme.co.uk"],
      groups_claim: "roles",
      admin_groups: ["cfgtool-admins"],
    },
  );
  assertEquals(
    policyFromOptions({
      method: "oidc",
      issuer: "https://accounts.google.com",
      clientId: "123.apps.googleusercontent.com",
      clientSecretRef: "file:/run/secrets/google",
    }),
    {
      method: "oidc",
      issuer: "https://accounts.google.com",
      client_id: "123.apps.googleusercontent.com",
      client_secret_ref: "file:/run/secrets/google",
    },
  );
});

Deno.test("policyFromOptions: --method email sends its domains", () => {
  assertEquals(policyFromOptions({ method: "email", domain: ["acme.com", "acme.co.uk"] }), {
    method: "email",
    domains: ["acme.com", "acme.co.uk"],
  });
});

Deno.test("policyFromOptions: a missing or foreign option is a usage error naming it", () => {
  const oidc = { method: "oidc" as const, issuer: "https://i", clientId: "c" };
  assertEquals(
    usageMessage(() => policyFromOptions(oidc)),
    "--client-secret-ref is required for --method oidc",
  );
  assertEquals(
    usageMessage(() => policyFromOptions({ method: "oidc", clientId: "c" })),
    "--issuer is required for --method oidc",
  );
  assertStringIncludes(
    usageMessage(() => policyFromOptions({ method: "email" })),
    "--method email needs at least one --domain",
  );
  assertStringIncludes(
    usageMessage(() =>
      policyFromOptions({ ...oidc, clientSecretRef: "env:S", domain: ["acme.com"] })
    ),
    "--domain does not apply to --method oidc; for oidc, --allowed-email-domain",
  );
  assertStringIncludes(
    usageMessage(() =>
      policyFromOptions({ method: "email", domain: ["a.com"], allowedEmailDomain: ["a.com"] })
    ),
    "--allowed-email-domain does not apply to --method email; for email, use --domain",
  );
  assertEquals(
    usageMessage(() =>
      policyFromOptions({ method: "email", domain: ["a.com"], adminGroup: ["x"] })
    ),
    "--admin-group does not apply to --method email",
  );
  assertStringIncludes(usageMessage(() => policyFromOptions({})), "--from-file");
});

Deno.test("policyFromOptions: a literal --client-secret is refused and never repeated", () => {
  const message = usageMessage(() =>
    policyFromOptions({
      method: "oidc",
      issuer: "https://i",
      clientId: "c",
      clientSecretRef: "env:S",
      clientSecret: SECRET,
    })
  );
  assertStringIncludes(message, "there is no --client-secret");
  assertStringIncludes(message, "--client-secret-ref env:NAME or file:/path");
  assert(!message.includes(SECRET));
});

Deno.test("checkSecretRef accepts env:NAME and file:/absolute/path only, never echoing the value", () => {
  assertEquals(checkSecretRef("env:ACME_OIDC_SECRET", "--x"), "env:ACME_OIDC_SECRET");
  assertEquals(checkSecretRef("file:/run/secrets/oidc", "--x"), "file:/run/secrets/oidc");
  for (const bad of [SECRET, "file:relative/path", "env:1BAD", "env:", "vault:kv/oidc"]) {
    const message = usageMessage(() => checkSecretRef(bad, "--client-secret-ref"));
    assertStringIncludes(message, "--client-secret-ref names where the server reads");
    assertStringIncludes(message, "the secret itself is never sent");
    assert(bad === "env:" || !message.includes(bad), message); // "env:" is in the help itself
  }
});

Deno.test("policyFromFile passes a policy through and refuses secrets, non-objects and bad refs", () => {
  const oidc = {
    method: "oidc",
    issuer: "https://acme.okta.com",
    client_id: "0oa1",
    client_secret_ref: "env:OKTA_SECRET",
  };
  assertEquals(policyFromFile(JSON.stringify(oidc), "p.json"), oidc as never);
  for (const key of ["client_secret", "clientSecret", "secret"]) {
    const message = usageMessage(() =>
      policyFromFile(JSON.stringify({ ...oidc, [key]: SECRET }), "p.json")
    );
    assertStringIncludes(message, `p.json holds "${key}": cfgtool never sends`);
    assert(!message.includes(SECRET));
  }
  assertStringIncludes(usageMessage(() => policyFromFile("{", "p.json")), "p.json is not JSON");
  assertStringIncludes(usageMessage(() => policyFromFile("[]", "p.json")), "one JSON object");
  assertStringIncludes(
    usageMessage(() => policyFromFile('{"domains":["a.com"]}', "p.json")),
    'p.json has no "method"',
  );
  const badRef = usageMessage(() =>
    policyFromFile(JSON.stringify({ ...oidc, client_secret_ref: SECRET }), "p.json")
  );
  assertStringIncludes(badRef, '"client_secret_ref" in p.json names where the server reads');
  assert(!badRef.includes(SECRET));
});

Deno.test("loginPolicyFields spells out what absent OIDC options mean", () => {
  const record: LoginPolicyRecord = {
    tenant_slug: "acme",
    policy: {
      method: "oidc",
      issuer: "https://sso.acme.com/realms/staff",
      client_id: "cfgtool",
      client_secret_ref: "env:S",
    },
    updated_at: "2030-01-01T00:00:00.000Z",
    updated_by: "tok_1",
  };
  assertEquals(loginPolicyFields(record), [
    ["tenant", "acme"],
    ["method", "oidc"],
    ["issuer", "https://sso.acme.com/realms/staff"],
    ["client id", "cfgtool"],
    ["client secret ref", "env:S"],
    ["email domains", "(any verified email)"],
    ["groups claim", "groups (default)"],
    ["admin groups", undefined],
    ["updated", "2030-01-01T00:00:00.000Z"],
    ["updated by", "tok_1"],
  ]);
});

Deno.test("policyFromOptions: --method saml sends the metadata URL, or the file's contents, and its optional fields", () => {
  assertEquals(
    policyFromOptions({
      method: "saml",
      idpMetadataUrl: "https://login.acme.com/saml/metadata",
      allowedEmailDomain: ["acme.com"],
      emailAttribute: "mail",
      groupsAttribute: "memberOf",
      adminGroup: ["cfgtool-admins"],
    }),
    {
      method: "saml",
      idp_metadata_url: "https://login.acme.com/saml/metadata",
      allowed_email_domains: ["acme.com"],
      email_attribute: "mail",
      groups_attribute: "memberOf",
      admin_groups: ["cfgtool-admins"],
    },
  );
  assertEquals(
    policyFromOptions({ method: "saml", idpMetadataFile: "idp.xml" }, "<md:EntityDescriptor/>"),
    { method: "saml", idp_metadata_xml: "<md:EntityDescriptor/>" },
  );
});

Deno.test("policyFromOptions: --method saml needs exactly one metadata option and takes no option of another method", () => {
  const url = { method: "saml" as const, idpMetadataUrl: "https://login.acme.com/md" };
  for (const opts of [{ method: "saml" as const }, { ...url, idpMetadataFile: "idp.xml" }]) {
    assertStringIncludes(
      usageMessage(() => policyFromOptions(opts, "<xml/>")),
      "--method saml needs exactly one of --idp-metadata-url <url> and --idp-metadata-file <path>",
    );
  }
  assertStringIncludes(
    usageMessage(() => policyFromOptions({ ...url, domain: ["acme.com"] })),
    "--domain does not apply to --method saml",
  );
  for (
    const [extra, flag] of [
      [{ issuer: "https://sso.acme.com" }, "--issuer"],
      [{ clientId: "cfgtool" }, "--client-id"],
      [{ groupsClaim: "groups" }, "--groups-claim"],
    ] as const
  ) {
    assertEquals(
      usageMessage(() => policyFromOptions({ ...url, ...extra })),
      `${flag} does not apply to --method saml`,
    );
  }
  assertEquals(
    usageMessage(() =>
      policyFromOptions({ method: "email", domain: ["acme.com"], idpMetadataUrl: "https://x" })
    ),
    "--idp-metadata-url does not apply to --method email",
  );
  assertEquals(
    usageMessage(() =>
      policyFromOptions({
        method: "oidc",
        issuer: "https://i",
        clientId: "c",
        clientSecretRef: "env:S",
        emailAttribute: "mail",
      })
    ),
    "--email-attribute does not apply to --method oidc",
  );
});

Deno.test("loginPolicyFields spells out a SAML policy: where the metadata is, and what absent options mean", () => {
  const record = (policy: LoginPolicyRecord["policy"]): LoginPolicyRecord => ({
    tenant_slug: "acme",
    policy,
    updated_at: "2030-01-01T00:00:00.000Z",
    updated_by: "tok_1",
  });
  assertEquals(
    loginPolicyFields(
      record({ method: "saml", idp_metadata_url: "https://login.acme.com/saml/metadata" }),
    ),
    [
      ["tenant", "acme"],
      ["method", "saml"],
      ["idp metadata url", "https://login.acme.com/saml/metadata"],
      ["email", "the NameID (default)"],
      ["email domains", "(any email)"],
      ["groups attribute", "groups (default)"],
      ["admin groups", undefined],
      ["updated", "2030-01-01T00:00:00.000Z"],
      ["updated by", "tok_1"],
    ],
  );
  const fields = new Map(loginPolicyFields(record({
    method: "saml",
    idp_metadata_xml: "<md:EntityDescriptor/>",
    email_attribute: "mail",
    allowed_email_domains: ["acme.com"],
    groups_attribute: "memberOf",
    admin_groups: ["cfgtool-admins"],
  })));
  assertEquals(fields.get("idp metadata"), "(document, 22 characters)");
  assertEquals(fields.get("email"), "attribute mail");
  assertEquals(fields.get("email domains"), ["acme.com"]);
  assertEquals(fields.get("groups attribute"), "memberOf");
  assertEquals(fields.get("admin groups"), ["cfgtool-admins"]);
});

// --- the real CLI against a canned server ------------------------------------

interface Canned {
  url: string;
  requests: { method: string; path: string; body: string }[];
  close(): Promise<void>;
}

function cannedServer(answer: (method: string) => Response): Canned {
  const requests: Canned["requests"] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", signal: ac.signal, onListen: () => {} },
    async (req) => {
      requests.push({
        method: req.method,
        path: new URL(req.url).pathname,
        body: await req.text(),
      });
      return answer(req.method);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: async () => {
      ac.abort();
      await server.finished;
    },
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", server: "cfgtool/test" },
  });

async function withCanned(
  answer: (method: string) => Response,
  fn: (run: (args: string[]) => Promise<CliResult>, server: Canned) => Promise<void>,
): Promise<void> {
  const server = cannedServer(answer);
  const config = await Deno.makeTempDir({ prefix: "cfgtool-login-cli-" });
  try {
    await fn(
      (args) =>
        runCfgtool(args, {
          env: {
            CFGTOOL_SERVER: server.url,
            CFGTOOL_TOKEN: TOKEN,
            XDG_CONFIG_HOME: config,
          },
        }),
      server,
    );
  } finally {
    await server.close();
    await Deno.remove(config, { recursive: true });
  }
}

const STORED: LoginPolicyRecord = {
  tenant_slug: "acme",
  policy: {
    method: "oidc",
    issuer: "https://sso.acme.com/realms/staff",
    client_id: "cfgtool",
    client_secret_ref: "env:ACME_OIDC_SECRET",
    admin_groups: ["cfgtool-admins"],
  },
  updated_at: "2030-01-01T00:00:00.000Z",
  updated_by: "tok_1",
};

Deno.test("tenant login set --method oidc PUTs the policy and reminds of the redirect URI", async () => {
  await withCanned(() => json({ ...STORED, request_id: "req_1" }), async (run, server) => {
    const r = await run([
      "tenant",
      "login",
      "set",
      "acme",
      "--method",
      "oidc",
      "--issuer",
      "https://sso.acme.com/realms/staff",
      "--client-id",
      "cfgtool",
      "--client-secret-ref",
      "env:ACME_OIDC_SECRET",
      "--admin-group",
      "cfgtool-admins",
    ]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(server.requests.length, 1);
    assertEquals(server.requests[0]!.method, "PUT");
    assertEquals(server.requests[0]!.path, "/api/v1/tenants/acme/login");
    assertEquals(JSON.parse(server.requests[0]!.body), STORED.policy);
    assertStringIncludes(r.stdout, "set the login policy of tenant acme\n");
    assertStringIncludes(r.stdout, "client secret ref: env:ACME_OIDC_SECRET\n");
    assertStringIncludes(r.stdout, "admin groups:      cfgtool-admins\n");
    assertStringIncludes(r.stderr, `register ${server.url}/auth/oidc/callback as the redirect URI`);
    assert(!(r.stdout + r.stderr).includes(TOKEN), "the token is never printed");
  });
});

Deno.test("tenant login show prints the fields, and --json the record", async () => {
  await withCanned(() => json(STORED), async (run, server) => {
    const r = await run(["tenant", "login", "show", "acme"]);
    assertEquals(r.code, 0, r.stderr);
    assertEquals(server.requests[0]!.method, "GET");
    assertEquals(server.requests[0]!.path, "/api/v1/tenants/acme/login");
    assertStringIncludes(r.stdout, "method:            oidc\n");
    assertStringIncludes(r.stdout, "email domains:     (any verified email)\n");
    const j = await run(["tenant", "login", "show", "acme", "--json"]);
    assertEquals(j.code, 0, j.stderr);
    assertEquals(JSON.parse(j.stdout), STORED);
  });
});

Deno.test("tenant login set refuses a literal secret on the command line or in a file, sending nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-login-policy-" });
  try {
    const file = `${dir}/policy.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({ ...STORED.policy, client_secret_ref: undefined, client_secret: SECRET }),
    );
    await withCanned(() => json(STORED), async (run, server) => {
      const oidc = ["tenant", "login", "set", "acme", "--method", "oidc", "--issuer", "https://i"];
      const cases: [string[], string][] = [
        [[...oidc, "--client-id", "c", "--client-secret", SECRET], "there is no --client-secret"],
        [
          [...oidc, "--client-id", "c", `--client-secret=${SECRET}`],
          "there is no --client-secret",
        ],
        [
          [...oidc, "--client-id", "c", "--client-secret-ref", SECRET],
          "--client-secret-ref names where the server reads the OIDC client secret",
        ],
        [["tenant", "login", "set", "acme", "--from-file", file], 'holds "client_secret"'],
      ];
      for (const [args, expected] of cases) {
        const r = await run(args);
        assertEquals(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assertStringIncludes(r.stderr, expected);
        assert(!(r.stdout + r.stderr).includes(SECRET), "the secret is never repeated");
      }
      assertEquals(server.requests.length, 0, "nothing was sent");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tenant login set --from-file sends the file's policy and takes no other policy option", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-login-policy-" });
  try {
    const file = `${dir}/policy.json`;
    await Deno.writeTextFile(file, '{"method": "email", "domains": ["acme.com"]}\n');
    const stored = { ...STORED, policy: { method: "email", domains: ["acme.com"] } };
    await withCanned(() => json(stored), async (run, server) => {
      const mixed = await run([
        "tenant",
        "login",
        "set",
        "acme",
        "--from-file",
        file,
        "--domain",
        "x.com",
      ]);
      assertEquals(mixed.code, 2, mixed.stderr);
      assertStringIncludes(mixed.stderr, "drop --domain or drop --from-file");
      const missing = await run(["tenant", "login", "set", "acme", "--from-file", `${dir}/nope`]);
      assertEquals(missing.code, 2, missing.stderr);
      assertStringIncludes(missing.stderr, `cannot read ${dir}/nope`);
      assertEquals(server.requests.length, 0);
      const r = await run(["tenant", "login", "set", "acme", "--from-file", file, "--json"]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(server.requests[0]!.body), {
        method: "email",
        domains: ["acme.com"],
      });
      assertEquals(JSON.parse(r.stdout), stored);
      assert(!r.stderr.includes("redirect URI"), "no OIDC note for an email policy");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a refusal from the server prints its message and exits 1", async () => {
  const refusal = {
    code: "invalid_request",
    message: "issuer must be an https:// URL (http:// only on a loopback host)",
    details: { field: "issuer" },
    request_id: "req_1",
  };
  await withCanned(() => json(refusal, 400), async (run) => {
    const r = await run([
      "tenant",
      "login",
      "set",
      "acme",
      "--method",
      "oidc",
      "--issuer",
      "http://sso.acme.com",
      "--client-id",
      "c",
      "--client-secret-ref",
      "env:S",
    ]);
    assertEquals(r.code, 1, r.stderr);
    assertStringIncludes(r.stderr, "error: issuer must be an https:// URL");
  });
});

Deno.test("tenant login set with neither --method nor --from-file exits 2", async () => {
  await withCanned(() => json(STORED), async (run, server) => {
    const r = await run(["tenant", "login", "set", "acme"]);
    assertEquals(r.code, 2, r.stderr);
    assertStringIncludes(r.stderr, "pass --method oidc, --method saml or --method email");
    assertEquals(server.requests.length, 0);
  });
});

Deno.test("tenant login set --method saml --idp-metadata-file sends the file and says how to register cfgtool", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-login-saml-" });
  try {
    const file = `${dir}/idp.xml`;
    const xml = '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata"/>\n';
    await Deno.writeTextFile(file, xml);
    const stored = { ...STORED, policy: { method: "saml", idp_metadata_xml: xml } };
    await withCanned(() => json(stored), async (run, server) => {
      const saml = ["tenant", "login", "set", "acme", "--method", "saml"];
      const missing = await run([...saml, "--idp-metadata-file", `${dir}/nope.xml`]);
      assertEquals(missing.code, 2, missing.stderr);
      assertStringIncludes(missing.stderr, `cannot read ${dir}/nope.xml`);
      assertEquals(server.requests.length, 0);
      const r = await run([...saml, "--idp-metadata-file", file, "--admin-group", "ops"]);
      assertEquals(r.code, 0, r.stderr);
      assertEquals(JSON.parse(server.requests[0]!.body), {
        method: "saml",
        idp_metadata_xml: xml,
        admin_groups: ["ops"],
      });
      assertStringIncludes(
        r.stderr,
        `${server.url}/auth/saml/metadata?tenant=acme (entity id: that URL; ` +
          `assertion consumer service: ${server.url}/auth/saml/acs)`,
      );
      assertStringIncludes(r.stdout, "idp metadata:");
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
