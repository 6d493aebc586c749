/**
 * `commitVersion` for tests that build a version by hand: hashes the files
 * first (what the service does before it commits), unless `hashed` is given.
 *
 * @module
 */
import { hashFileSet } from "../../lib/closure/hash.ts";
import {
  type CommitInput,
  type CommitResult,
  commitVersion as storeCommit,
} from "../../lib/store/versions.ts";

/** A commit input whose hashes may be left out. */
export type TestCommitInput = Omit<CommitInput, "hashed"> & Partial<Pick<CommitInput, "hashed">>;

/**
 * Commits a version, hashing its files when the input does not carry hashes.
 *
 * @param kv the store
 * @param input the commit, `hashed` optional
 * @returns what the store's commitVersion returns
 */
export async function commitVersion(kv: Deno.Kv, input: TestCommitInput): Promise<CommitResult> {
  return await storeCommit(kv, {
    ...input,
    hashed: input.hashed ?? await hashFileSet(input.files),
  });
}
