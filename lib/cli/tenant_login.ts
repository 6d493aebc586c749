/**
 * `cfgtool tenant login set|show`: a tenant's login policy, how its people
 * sign in (docs/login.md). `set` builds the policy from options (`--method
 * oidc …`, `--method saml …` or `--method email --domain …`) or reads it
 * from a JSON file, and
 * replaces the tenant's policy; `show` prints it. The OIDC client secret is
 * never on the command line nor sent: the policy names where the server
 * reads it (`--client-secret-ref env:NAME|file:/path`), and a literal
 * secret is refused before anything is sent.
 *
 * @module
 */
import { type Command, Option } from "commander";
import { UsageError } from "../errors.ts";
import type { LoginPolicy, LoginPolicyRecord } from "../protocol/login_policy.ts";
import { openClient, printFields, printJson, withRemoteOptions } from "./remote_options.ts";

/** The methods `--method` accepts. */
export const LOGIN_METHODS = ["oidc", "saml", "email"] as const;

/** A method `--method` accepts. */
type Method = typeof LOGIN_METHODS[number];

/** Where a client secret may be read: a server environment variable or an absolute file path. */
const SECRET_REF = /^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:\/.{1,1023})$/;

const SECRET_REF_HELP = "names where the server reads the OIDC client secret: env:NAME (an " +
  "environment variable of the server) or file:/absolute/path (a file on the server); the " +
  "secret itself is never sent";

/** The option values of `tenant login set`, as commander parses them. */
export interface LoginSetOptionValues {
  method?: Method | undefined;
  fromFile?: string | undefined;
  issuer?: string | undefined;
  clientId?: string | undefined;
  clientSecretRef?: string | undefined;
  clientSecret?: string | undefined;
  allowedEmailDomain?: string[] | undefined;
  groupsClaim?: string | undefined;
  adminGroup?: string[] | undefined;
  domain?: string[] | undefined;
  idpMetadataUrl?: string | undefined;
  idpMetadataFile?: string | undefined;
  emailAttribute?: string | undefined;
  groupsAttribute?: string | undefined;
}

/** The options that describe a policy, each with the methods it belongs to. */
const POLICY_OPTIONS: readonly [keyof LoginSetOptionValues, string, readonly Method[]][] = [
  ["issuer", "--issuer", ["oidc"]],
  ["clientId", "--client-id", ["oidc"]],
  ["clientSecretRef", "--client-secret-ref", ["oidc"]],
  ["allowedEmailDomain", "--allowed-email-domain", ["oidc", "saml"]],
  ["groupsClaim", "--groups-claim", ["oidc"]],
  ["adminGroup", "--admin-group", ["oidc", "saml"]],
  ["domain", "--domain", ["email"]],
  ["idpMetadataUrl", "--idp-metadata-url", ["saml"]],
  ["idpMetadataFile", "--idp-metadata-file", ["saml"]],
  ["emailAttribute", "--email-attribute", ["saml"]],
  ["groupsAttribute", "--groups-attribute", ["saml"]],
];

const given = (v: unknown) => v !== undefined && !(Array.isArray(v) && v.length === 0);

/** The refusal of a literal client secret, on the command line or in a file. */
function literalSecretRefused(where: string): UsageError {
  return new UsageError(
    `${where}: cfgtool never sends an OIDC client secret. Put the secret in an environment ` +
      "variable or a file on the server and name it with --client-secret-ref env:NAME or " +
      'file:/path ("client_secret_ref" in a policy file); nothing was sent',
  );
}

/**
 * Checks a `client_secret_ref` before it is sent: `env:NAME` or
 * `file:/absolute/path`, else a {@linkcode UsageError} that explains the
 * two forms and never repeats the value (it might be the secret itself).
 *
 * @param ref the reference as given
 * @param option how to name it in the message
 * @returns the reference
 *
 * @example
 * ```ts
 * import { checkSecretRef } from "./tenant_login.ts";
 * if (checkSecretRef("env:ACME_OIDC_SECRET", "--client-secret-ref") !== "env:ACME_OIDC_SECRET") {
 *   throw new Error();
 * }
 * let message = "";
 * try { checkSecretRef("hunter2", "--client-secret-ref"); } catch (e) { message = (e as Error).message; }
 * if (!message.includes("env:NAME") || message.includes("hunter2")) throw new Error(message);
 * ```
 */
export function checkSecretRef(ref: string, option: string): string {
  if (!SECRET_REF.test(ref)) throw new UsageError(`${option} ${SECRET_REF_HELP}`);
  return ref;
}

/**
 * Builds the policy that `tenant login set` sends from its options:
 * `--method oidc` needs `--issuer`, `--client-id` and
 * `--client-secret-ref` and may add `--allowed-email-domain`,
 * `--groups-claim` and `--admin-group`; `--method saml` needs one of
 * `--idp-metadata-url` and `--idp-metadata-file` (whose contents the caller
 * read into `metadataXml`) and may add `--allowed-email-domain`,
 * `--email-attribute`, `--groups-attribute` and `--admin-group`; `--method
 * email` needs at least one `--domain`. An option of another method, a
 * missing one, or a
 * literal `--client-secret` is a {@linkcode UsageError} (exit 2, nothing
 * sent). Values are passed as given: the server validates and normalises
 * them.
 *
 * @param opts the parsed options (without `--from-file`)
 * @param metadataXml the contents of `--idp-metadata-file`, when given
 * @returns the policy
 *
 * @example
 * ```ts
 * import { policyFromOptions } from "./tenant_login.ts";
 * const p = policyFromOptions({ method: "email", domain: ["acme.com", "acme.co.uk"] });
 * if (JSON.stringify(p) !== '{"method":"email","domains":["acme.com","acme.co.uk"]}') {
 *   throw new Error(JSON.stringify(p));
 * }
 * let message = "";
 * try { policyFromOptions({ method: "email", domain: ["acme.com"], issuer: "https://x" }); }
 * catch (e) { message = (e as Error).message; }
 * if (message !== "--issuer does not apply to --method email") throw new Error(message);
 * ```
 */
export function policyFromOptions(opts: LoginSetOptionValues, metadataXml?: string): LoginPolicy {
  if (opts.clientSecret !== undefined) throw literalSecretRefused("there is no --client-secret");
  const method = opts.method;
  if (method === undefined) {
    throw new UsageError(
      "pass --method oidc, --method saml or --method email with its options, " +
        "or --from-file <policy.json>",
    );
  }
  for (const [key, flag, belongs] of POLICY_OPTIONS) {
    if (!belongs.includes(method) && given(opts[key])) {
      const instead = key === "domain"
        ? `; for ${method}, --allowed-email-domain limits who may sign in`
        : key === "allowedEmailDomain"
        ? "; for email, use --domain"
        : "";
      throw new UsageError(`${flag} does not apply to --method ${method}${instead}`);
    }
  }
  if (method === "email") {
    if (!given(opts.domain)) {
      throw new UsageError("--method email needs at least one --domain (like --domain acme.com)");
    }
    return { method: "email", domains: [...opts.domain!] };
  }
  if (method === "saml") {
    if (given(opts.idpMetadataUrl) === given(opts.idpMetadataFile)) {
      throw new UsageError(
        "--method saml needs exactly one of --idp-metadata-url <url> and " +
          "--idp-metadata-file <path> (the identity provider's metadata)",
      );
    }
    const policy: LoginPolicy = opts.idpMetadataUrl !== undefined
      ? { method: "saml", idp_metadata_url: opts.idpMetadataUrl }
      : { method: "saml", idp_metadata_xml: metadataXml ?? "" };
    if (given(opts.allowedEmailDomain)) {
      policy.allowed_email_domains = [...opts.allowedEmailDomain!];
    }
    if (opts.emailAttribute !== undefined) policy.email_attribute = opts.emailAttribute;
    if (opts.groupsAttribute !== undefined) policy.groups_attribute = opts.groupsAttribute;
    if (given(opts.adminGroup)) policy.admin_groups = [...opts.adminGroup!];
    return policy;
  }
  for (const [key, flag] of POLICY_OPTIONS.slice(0, 3)) {
    if (!given(opts[key])) throw new UsageError(`${flag} is required for --method oidc`);
  }
  const policy: LoginPolicy = {
    method: "oidc",
    issuer: opts.issuer!,
    client_id: opts.clientId!,
    client_secret_ref: checkSecretRef(opts.clientSecretRef!, "--client-secret-ref"),
  };
  if (given(opts.allowedEmailDomain)) policy.allowed_email_domains = [...opts.allowedEmailDomain!];
  if (opts.groupsClaim !== undefined) policy.groups_claim = opts.groupsClaim;
  if (given(opts.adminGroup)) policy.admin_groups = [...opts.adminGroup!];
  return policy;
}

/**
 * Checks the contents of a `--from-file` policy before it is sent: a JSON
 * object with a `method`, no field that holds a secret (`client_secret`,
 * or any other name with "secret" in it but `client_secret_ref`), and a
 * `client_secret_ref`, when present, of the form `env:NAME` or
 * `file:/path`. Anything else is a {@linkcode UsageError} naming the file;
 * the rest of the policy is the server's to validate.
 *
 * @param text the file's contents
 * @param name the file's name, for messages
 * @returns the policy to send
 *
 * @example
 * ```ts
 * import { policyFromFile } from "./tenant_login.ts";
 * const p = policyFromFile('{"method":"email","domains":["acme.com"]}', "policy.json");
 * if (p.method !== "email") throw new Error();
 * let message = "";
 * try { policyFromFile('{"method":"oidc","client_secret":"hunter2"}', "p.json"); }
 * catch (e) { message = (e as Error).message; }
 * if (!message.startsWith('p.json holds "client_secret"') || message.includes("hunter2")) {
 *   throw new Error(message);
 * }
 * ```
 */
export function policyFromFile(text: string, name: string): LoginPolicy {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${name} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new UsageError(
      `${name} must hold one JSON object, like {"method": "email", "domains": ["acme.com"]}`,
    );
  }
  const o = body as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (key !== "client_secret_ref" && /secret/i.test(key)) {
      throw literalSecretRefused(`${name} holds ${JSON.stringify(key)}`);
    }
  }
  if (typeof o.method !== "string") {
    throw new UsageError(`${name} has no "method" ("oidc", "saml" or "email")`);
  }
  if (o.client_secret_ref !== undefined) {
    if (typeof o.client_secret_ref !== "string") {
      throw new UsageError(`"client_secret_ref" in ${name} ${SECRET_REF_HELP}`);
    }
    checkSecretRef(o.client_secret_ref, `"client_secret_ref" in ${name}`);
  }
  return o as unknown as LoginPolicy;
}

/**
 * The lines `tenant login show` prints for a policy record: the tenant and
 * method, the method's settings (for OIDC, what an absent optional field
 * means), then who set it when.
 *
 * @param record the record as the service answers it
 * @returns label and value pairs, in order
 *
 * @example
 * ```ts
 * import { loginPolicyFields } from "./tenant_login.ts";
 * const fields = loginPolicyFields({
 *   tenant_slug: "acme",
 *   policy: { method: "email", domains: ["acme.com"] },
 *   updated_at: "2030-01-01T00:00:00.000Z",
 *   updated_by: "tok_1",
 * });
 * const labels = fields.map(([k]) => k).join(",");
 * if (labels !== "tenant,method,domains,updated,updated by") throw new Error(labels);
 * ```
 */
export function loginPolicyFields(record: LoginPolicyRecord): [string, unknown][] {
  const p = record.policy;
  const head: [string, unknown][] = [["tenant", record.tenant_slug], ["method", p.method]];
  let body: [string, unknown][];
  switch (p.method) {
    case "oidc":
      body = [
        ["issuer", p.issuer],
        ["client id", p.client_id],
        ["client secret ref", p.client_secret_ref],
        ["email domains", p.allowed_email_domains ?? "(any verified email)"],
        ["groups claim", p.groups_claim ?? "groups (default)"],
        ["admin groups", p.admin_groups],
      ];
      break;
    case "email":
      body = [["domains", p.domains]];
      break;
    case "saml":
      body = [
        p.idp_metadata_url !== undefined
          ? ["idp metadata url", p.idp_metadata_url]
          : ["idp metadata", `(document, ${p.idp_metadata_xml?.length ?? 0} characters)`],
        [
          "email",
          p.email_attribute === undefined
            ? "the NameID (default)"
            : `attribute ${p.email_attribute}`,
        ],
        ["email domains", p.allowed_email_domains ?? "(any email)"],
        ["groups attribute", p.groups_attribute ?? "groups (default)"],
        ["admin groups", p.admin_groups],
      ];
      break;
    default:
      body = Object.entries(p).filter(([k]) => k !== "method");
  }
  return [...head, ...body, ["updated", record.updated_at], ["updated by", record.updated_by]];
}

/** Collects a repeatable option's values (no commander default, so help shows none). */
const collect = (v: string, prev: string[] | undefined): string[] => [...(prev ?? []), v];

const SET_HELP = "\nMethods:\n" +
  "  oidc   People sign in at your OpenID Connect provider (Keycloak, Google, Microsoft\n" +
  "         Entra ID, Okta, …). Register <server URL>/auth/oidc/callback as the redirect\n" +
  "         URI there (under the server's --public-url behind a proxy). The client\n" +
  "         secret stays on the server: --client-secret-ref names the server's environment\n" +
  "         variable (env:NAME) or file (file:/absolute/path) that holds it; the secret\n" +
  "         itself is never sent, and there is no --client-secret. Only a superadmin may\n" +
  "         set or change --issuer, --client-id and --client-secret-ref; a tenant admin\n" +
  "         may change the rest. --allowed-email-domain limits who is admitted (default:\n" +
  "         any verified email at the provider: set it for Google or a shared Entra ID);\n" +
  "         members of an --admin-group (read from the ID token's --groups-claim,\n" +
  "         default groups) are tenant admins while signed in.\n" +
  "  saml   People sign in at your SAML 2.0 identity provider (Entra ID, Okta, ADFS,\n" +
  "         Shibboleth, …). Give its metadata with --idp-metadata-url (https://) or\n" +
  "         --idp-metadata-file; register cfgtool there with the service provider\n" +
  "         metadata at <server URL>/auth/saml/metadata?tenant=<tenant> (entity id =\n" +
  "         that URL, assertion consumer service <server URL>/auth/saml/acs). Only a\n" +
  "         superadmin may set or change the identity provider. The email is the\n" +
  "         NameID unless --email-attribute names an attribute; members of an\n" +
  "         --admin-group (read from --groups-attribute, default groups) are tenant\n" +
  "         admins while signed in.\n" +
  "  email  People get a one-time link and a 6-digit code by email; addresses in a\n" +
  "         --domain are admitted. The server sends mail with --smtp-url; without it,\n" +
  "         messages land as .eml files in the outbox directory beside its data.\n" +
  "\nThe new policy replaces the tenant's current one. --from-file takes the policy as JSON\n" +
  '(docs/login.md), - for stdin; it must not hold a secret either, only "client_secret_ref".\n' +
  "\nExamples:\n" +
  "  cfgtool tenant login set acme --method oidc \\\n" +
  "      --issuer https://sso.acme.com/realms/staff --client-id cfgtool \\\n" +
  "      --client-secret-ref env:ACME_OIDC_SECRET \\\n" +
  "      --allowed-email-domain acme.com --admin-group cfgtool-admins\n" +
  "  cfgtool tenant login set acme --method saml \\\n" +
  "      --idp-metadata-url https://login.acme.com/saml/metadata \\\n" +
  "      --allowed-email-domain acme.com --admin-group cfgtool-admins\n" +
  "  cfgtool tenant login set acme --method email --domain acme.com --domain acme.co.uk\n" +
  "  cfgtool tenant login set acme --from-file acme-login.json\n";

/**
 * Registers `login set` and `login show` under the `tenant` command.
 *
 * @param tenant the `tenant` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerTenantLoginCommands } from "./tenant_login.ts";
 * const tenant = new Command("tenant");
 * registerTenantLoginCommands(tenant);
 * const login = tenant.commands.find((c) => c.name() === "login");
 * const verbs = login?.commands.map((c) => c.name()).join(" ");
 * if (verbs !== "set show") throw new Error(verbs);
 * ```
 */
export function registerTenantLoginCommands(tenant: Command): void {
  const login = tenant.command("login")
    .description(
      "Set or show how a tenant's people sign in: OpenID Connect, SAML 2.0 or a one-time email link " +
        "(superadmin or tenant admin; docs/login.md).",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool tenant login set acme --method email --domain acme.com\n" +
        "  cfgtool tenant login show acme\n",
    );

  withRemoteOptions(
    login.command("set")
      .description("Set a tenant's login policy, replacing the current one.")
      .argument("<tenant>", "tenant slug"),
  )
    .addOption(new Option("--method <method>", "how people sign in").choices(LOGIN_METHODS))
    .option("--issuer <url>", "oidc: the provider's issuer URL (https://)")
    .option("--client-id <id>", "oidc: the client id registered at the provider")
    .option(
      "--client-secret-ref <ref>",
      "oidc: where the server reads the client secret: env:NAME or file:/path",
    )
    .addOption(new Option("--client-secret <secret>").hideHelp())
    .option(
      "--allowed-email-domain <domain>",
      "oidc, saml: admit only emails in this domain, repeatable (default: any verified email)",
      collect,
    )
    .option("--groups-claim <claim>", "oidc: the ID-token claim listing groups (default groups)")
    .option(
      "--admin-group <group>",
      "oidc, saml: members of this group are tenant admins, repeatable",
      collect,
    )
    .option(
      "--idp-metadata-url <url>",
      "saml: where the identity provider's metadata is (https://)",
    )
    .option("--idp-metadata-file <path>", "saml: the identity provider's metadata XML file")
    .option(
      "--email-attribute <name>",
      "saml: the attribute holding the email (default: the NameID)",
    )
    .option("--groups-attribute <name>", "saml: the attribute listing groups (default groups)")
    .option(
      "--domain <domain>",
      "email: an admitted email domain, repeatable",
      collect,
    )
    .option("--from-file <path>", "read the policy JSON from a file (- for stdin)")
    .option("--json", "print the stored policy as JSON")
    .addHelpText("after", SET_HELP)
    .action(async (slug, opts) => {
      const policy = await policyToSet(opts);
      const client = await openClient(opts);
      const record = await client.setLoginPolicy(slug, policy);
      if (opts.json) return printJson(record);
      console.log(`set the login policy of tenant ${record.tenant_slug}`);
      printFields(loginPolicyFields(record));
      if (record.policy.method === "oidc") {
        console.error(
          `note: register ${client.server}/auth/oidc/callback as the redirect URI at the ` +
            `provider (or the same path under the server's --public-url); the server reads the ` +
            `client secret from ${record.policy.client_secret_ref} at each sign-in`,
        );
      }
      if (record.policy.method === "saml") {
        console.error(
          `note: register cfgtool at the identity provider with the metadata at ` +
            `${client.server}/auth/saml/metadata?tenant=${record.tenant_slug} (entity id: that ` +
            `URL; assertion consumer service: ${client.server}/auth/saml/acs), or the same ` +
            `paths under the server's --public-url`,
        );
      }
    });

  withRemoteOptions(
    login.command("show")
      .description("Show a tenant's login policy (never a secret: only where it is read).")
      .argument("<tenant>", "tenant slug"),
  )
    .option("--json", "print the policy record as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool tenant login show acme\n  cfgtool tenant login show acme --json\n",
    )
    .action(async (slug, opts) => {
      const record = await (await openClient(opts)).getLoginPolicy(slug);
      if (opts.json) return printJson(record);
      printFields(loginPolicyFields(record));
    });
}

/** The policy `set` sends: from `--from-file`, or from the options. */
async function policyToSet(opts: LoginSetOptionValues): Promise<LoginPolicy> {
  if (opts.fromFile === undefined) {
    if (opts.method !== "saml" || opts.idpMetadataFile === undefined) {
      return policyFromOptions(opts);
    }
    let xml: string;
    try {
      xml = await Deno.readTextFile(opts.idpMetadataFile);
    } catch (e) {
      throw new UsageError(
        `cannot read ${opts.idpMetadataFile}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    return policyFromOptions(opts, xml);
  }
  if (opts.clientSecret !== undefined) throw literalSecretRefused("there is no --client-secret");
  const mixed = [
    ...(opts.method === undefined ? [] : ["--method"]),
    ...POLICY_OPTIONS.filter(([key]) => given(opts[key])).map(([, flag]) => flag),
  ];
  if (mixed.length > 0) {
    throw new UsageError(
      `--from-file holds the whole policy; drop ${mixed.join(", ")} or drop --from-file`,
    );
  }
  const name = opts.fromFile === "-" ? "stdin" : opts.fromFile;
  let text: string;
  try {
    text = opts.fromFile === "-"
      ? await new Response(Deno.stdin.readable).text()
      : await Deno.readTextFile(opts.fromFile);
  } catch (e) {
    throw new UsageError(
      `cannot read ${name}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return policyFromFile(text, name);
}
