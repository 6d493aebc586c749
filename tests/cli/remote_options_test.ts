/**
 * How remote commands find their server and credential
 * (lib/cli/remote_options.ts `resolveRemote`): `--token`, then
 * `CFGTOOL_TOKEN`, then the session saved by `cfgtool login` for the
 * server; `--server` / `CFGTOOL_SERVER`, else the server of the named or
 * only saved profile.
 */
import { assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import { resolveRemote } from "../../lib/cli/remote_options.ts";
import { type Profile, writeCredentials } from "../../lib/cli/credentials_file.ts";
import { UsageError } from "../../lib/errors.ts";

function saved(server: string, token: string, expires = "2099-01-01T00:00:00.000Z"): Profile {
  return {
    server,
    session_token: token,
    session_id: "ssn_1",
    user: "ana@acme.test",
    user_id: "usr_1",
    tenant: "acme",
    expires_at: expires,
  };
}

/** Runs `fn` with a config dir holding `profiles`, and an env reading from it. */
async function withProfiles(
  profiles: Record<string, Profile>,
  fn: (env: (vars?: Record<string, string>) => Map<string, string>) => void,
): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await writeCredentials(`${dir}/cfgtool/credentials.toml`, { profiles });
    fn((vars = {}) => new Map(Object.entries({ XDG_CONFIG_HOME: dir, ...vars })));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("with one saved profile, a bare command uses its server and session", async () => {
  await withProfiles({ local: saved("http://127.0.0.1:8080", "ses_local") }, (env) => {
    assertEquals(resolveRemote({}, env()), {
      server: "http://127.0.0.1:8080",
      token: "ses_local",
      profile: "local",
    });
  });
});

Deno.test("--token, then CFGTOOL_TOKEN, win over the saved profile", async () => {
  await withProfiles({ local: saved("http://127.0.0.1:8080", "ses_local") }, (env) => {
    assertEquals(resolveRemote({ token: "svc_flag" }, env({ CFGTOOL_TOKEN: "svc_env" })), {
      server: "http://127.0.0.1:8080",
      token: "svc_flag",
    });
    assertEquals(resolveRemote({}, env({ CFGTOOL_TOKEN: "svc_env" })).token, "svc_env");
    assertEquals(resolveRemote({}, env({ CFGTOOL_TOKEN: "" })).token, "ses_local");
  });
});

Deno.test("with several profiles, the server or --profile / CFGTOOL_PROFILE chooses", async () => {
  const profiles = {
    local: saved("http://127.0.0.1:8080", "ses_local"),
    prod: saved("https://flags.example.com", "ses_prod"),
  };
  await withProfiles(profiles, (env) => {
    assertEquals(resolveRemote({ server: "https://flags.example.com/" }, env()).token, "ses_prod");
    assertEquals(
      resolveRemote({}, env({ CFGTOOL_SERVER: "http://127.0.0.1:8080" })).token,
      "ses_local",
    );
    assertEquals(resolveRemote({ profile: "prod" }, env()).server, "https://flags.example.com");
    assertEquals(resolveRemote({}, env({ CFGTOOL_PROFILE: "local" })).token, "ses_local");
    assertEquals(
      resolveRemote({ profile: "prod" }, env({ CFGTOOL_PROFILE: "local" })).profile,
      "prod",
    );
    const none = assertThrows(() => resolveRemote({}, env()), UsageError);
    assertStringIncludes(none.message, "pass --server <url> or set CFGTOOL_SERVER");
    assertStringIncludes(none.message, "--profile");
    assertThrows(
      () => resolveRemote({ profile: "prod", server: "http://127.0.0.1:8080" }, env()),
      UsageError,
      "is for https://flags.example.com",
    );
  });
});

Deno.test("a server without a saved sign-in asks for a token or `cfgtool login`", async () => {
  await withProfiles({ local: saved("http://127.0.0.1:8080", "ses_local") }, (env) => {
    const err = assertThrows(
      () => resolveRemote({ server: "http://127.0.0.1:9" }, env()),
      UsageError,
      "pass --token <token> or set CFGTOOL_TOKEN",
    );
    assertStringIncludes(err.message, "cfgtool login --server http://127.0.0.1:9");
  });
});

Deno.test("a saved session past its end asks to sign in again", async () => {
  await withProfiles(
    { old: saved("http://127.0.0.1:8080", "ses_old", "2000-01-01T00:00:00.000Z") },
    (env) => {
      const err = assertThrows(() => resolveRemote({}, env()), UsageError, "ended at 2000-01-01");
      assertStringIncludes(err.message, "cfgtool login --server http://127.0.0.1:8080");
      assertEquals(err.message.includes("ses_old"), false);
    },
  );
});

Deno.test("without a home directory there are no profiles, and the old messages stand", () => {
  assertThrows(
    () => resolveRemote({}, new Map()),
    UsageError,
    "pass --server <url> or set CFGTOOL_SERVER",
  );
  assertThrows(
    () => resolveRemote({ server: "http://127.0.0.1:9" }, new Map()),
    UsageError,
    "pass --token <token> or set CFGTOOL_TOKEN",
  );
});
