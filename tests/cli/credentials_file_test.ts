/**
 * The credentials file of `cfgtool login` (lib/cli/credentials_file.ts):
 * where it lives, that it is written atomically with mode 0600 in a 0700
 * directory, one profile per server, which profile a command picks, and
 * that a broken file is a usage error naming the file, not its contents.
 */
import { assert, assertEquals, assertStringIncludes, assertThrows } from "../assert.ts";
import {
  credentialsPath,
  pickProfile,
  type Profile,
  profileNameFor,
  readCredentials,
  withoutProfile,
  withProfile,
  writeCredentials,
} from "../../lib/cli/credentials_file.ts";
import { UsageError } from "../../lib/errors.ts";

const POSIX = Deno.build.os !== "windows";

function profile(server: string, token = "ses_secretValue"): Profile {
  return {
    server,
    session_token: token,
    session_id: "ssn_1",
    user: "ana@acme.test",
    user_id: "usr_1",
    tenant: "acme",
    expires_at: "2099-01-01T00:00:00.000Z",
  };
}

Deno.test("the file is $XDG_CONFIG_HOME/cfgtool/credentials.toml, else ~/.config/cfgtool/", () => {
  assertEquals(
    credentialsPath(new Map([["XDG_CONFIG_HOME", "/x/"], ["HOME", "/h"]])),
    "/x/cfgtool/credentials.toml",
  );
  assertEquals(credentialsPath(new Map([["HOME", "/h"]])), "/h/.config/cfgtool/credentials.toml");
  assertEquals(
    credentialsPath(new Map([["XDG_CONFIG_HOME", ""], ["HOME", "/h"]])),
    "/h/.config/cfgtool/credentials.toml",
  );
  assertThrows(() => credentialsPath(new Map()), UsageError, "XDG_CONFIG_HOME or HOME");
});

Deno.test("a profile is named after the server's host and port", () => {
  assertEquals(profileNameFor("http://127.0.0.1:8080"), "127.0.0.1:8080");
  assertEquals(profileNameFor("https://flags.example.com/"), "flags.example.com");
  assertEquals(profileNameFor("https://flags.example.com:8443"), "flags.example.com:8443");
});

Deno.test({
  name: "writing makes a 0600 file in a 0700 directory, read back as written",
  ignore: !POSIX,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      const path = `${dir}/cfg/cfgtool/credentials.toml`;
      await writeCredentials(path, {
        profiles: { "127.0.0.1:8080": profile("http://127.0.0.1:8080") },
      });
      assertEquals((await Deno.stat(path)).mode! & 0o777, 0o600);
      assertEquals((await Deno.stat(`${dir}/cfg/cfgtool`)).mode! & 0o777, 0o700);
      const text = await Deno.readTextFile(path);
      assertStringIncludes(text, '[profiles."127.0.0.1:8080"]');
      assertStringIncludes(text, "keep this file private");
      assertEquals(
        readCredentials(path).profiles["127.0.0.1:8080"],
        profile("http://127.0.0.1:8080"),
      );
      // a wider directory is narrowed again; no temporary file is left behind
      await Deno.chmod(`${dir}/cfg/cfgtool`, 0o755);
      await writeCredentials(path, { profiles: { a: profile("http://127.0.0.1:1") } });
      assertEquals((await Deno.stat(`${dir}/cfg/cfgtool`)).mode! & 0o777, 0o700);
      assertEquals([...Deno.readDirSync(`${dir}/cfg/cfgtool`)].map((e) => e.name), [
        "credentials.toml",
      ]);
      // no profile left: no file left
      await writeCredentials(path, { profiles: {} });
      assertEquals(readCredentials(path), { profiles: {} });
      assertThrows(() => Deno.statSync(path), Deno.errors.NotFound);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a file that is not TOML, or a profile without its token, is a usage error naming the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/credentials.toml`;
    await Deno.writeTextFile(path, 'session_token = "ses_leak" [[[');
    const err = assertThrows(() => readCredentials(path), UsageError, path);
    assert(!err.message.includes("ses_leak"), err.message);
    await Deno.writeTextFile(path, '[profiles.a]\nserver = "http://127.0.0.1:1"\n');
    assertThrows(() => readCredentials(path), UsageError, "has no session_token");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("one profile per server: saving replaces another profile for the same server", () => {
  const one = withProfile({ profiles: {} }, "a", profile("http://127.0.0.1:1"));
  const two = withProfile(one, "b", profile("http://127.0.0.1:2"));
  const again = withProfile(two, "local", profile("http://127.0.0.1:1/", "ses_new"));
  assertEquals(Object.keys(again.profiles).sort(), ["b", "local"]);
  assertEquals(Object.keys(withoutProfile(again, "b").profiles), ["local"]);
});

Deno.test("a command picks the named profile, else the server's, else the only one", () => {
  const creds = {
    profiles: { a: profile("http://127.0.0.1:1"), b: profile("https://flags.example.com") },
  };
  assertEquals(pickProfile(creds, { profile: "b" })?.[0], "b");
  assertEquals(pickProfile(creds, { server: "https://FLAGS.example.com/" })?.[0], "b");
  assertEquals(pickProfile(creds, { server: "http://127.0.0.1:3" }), undefined);
  assertEquals(pickProfile(creds, {}), undefined); // two saved: none chosen
  assertEquals(pickProfile({ profiles: { a: creds.profiles.a } }, {})?.[0], "a");
  assertThrows(() => pickProfile(creds, { profile: "c" }), UsageError, "saved: a, b");
  assertThrows(
    () => pickProfile(creds, { profile: "a", server: "https://flags.example.com" }),
    UsageError,
    "is for http://127.0.0.1:1",
  );
});
