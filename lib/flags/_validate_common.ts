/**
 * The checker every manifest file is read with: the shared TOML field
 * checks of lib/toml_fields.ts, plus how strictly the manifest is checked
 * and where tolerated findings go.
 *
 * @module
 */
import type { Problem } from "../errors.ts";
import { FieldChecker } from "../toml_fields.ts";

/**
 * How strictly a manifest is checked: `stored` is set when loading a version
 * already in the store (see `validateManifest`), and `warnings` collects
 * what is tolerated then.
 */
export interface CheckMode {
  /** Loading a stored version: skip the push-only limits. */
  stored: boolean;
  /** Where tolerated findings go. */
  warnings: Problem[];
}

/** Reports the problems of one manifest file into a shared list. */
export class FileChecker extends FieldChecker {
  constructor(
    path: string,
    problems: Problem[],
    readonly mode: CheckMode = { stored: false, warnings: [] },
  ) {
    super(path, problems);
  }

  /** Records a finding that does not make the manifest invalid. */
  warn(key: string, message: string): void {
    this.mode.warnings.push(
      key === "" ? { path: this.path, message } : { path: this.path, key, message },
    );
  }
}
