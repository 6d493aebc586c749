/**
 * A test-only layout change for the migration runner's tests
 * (tests/store/layout_test.ts, tests/e2e/upgrade_layout_test.ts): layout 1
 * keeps notes at `["legacy_note", id]` as `{text}`; layout 2 keeps them at
 * `["note", id]`. The migration moves each note and adds 1 to its counter
 * at `["note_migrated", id]` in the same commit, so a counter above 1 means
 * an item was migrated twice.
 *
 * @module
 */
import type { Migration, StoreLayout } from "../../lib/store/layout_migrations.ts";

/** The id of the test migration. */
export const NOTES_MIGRATION_ID = "0002-test-notes";

/** What the test migration is told before it hands back each batch. */
export interface NotesHooks {
  /**
   * Called with the 1-based number of the batch this migration object
   * made and its item count, before the batch commits. A throw fails the
   * batch (nothing of it commits); a promise holds it back.
   */
  onBatch?: (n: number, items: number) => void | Promise<void>;
}

/**
 * The test migration (layout 1 → 2) and the layout it leads to.
 *
 * @param hooks what to do before each batch commits
 * @returns the layout 2 with its one migration
 */
export function notesLayout(hooks: NotesHooks = {}): StoreLayout {
  let made = 0;
  const migration: Migration = {
    id: NOTES_MIGRATION_ID,
    from: 1,
    to: 2,
    summary: "notes move from legacy_note to note",
    async batch({ kv, cursor, limit }) {
      const prefix = ["legacy_note"];
      const found: Deno.KvEntry<{ text: string }>[] = [];
      const selector = cursor === null ? { prefix } : { prefix, start: cursor };
      for await (const e of kv.list<{ text: string }>(selector, { limit: limit + 1 })) {
        found.push(e);
      }
      const batch = found.slice(0, limit);
      await hooks.onBatch?.(++made, batch.length);
      return {
        items: batch.length,
        next: found[limit]?.key ?? null,
        write(op) {
          for (const e of batch) {
            const id = e.key[1]!;
            op.delete(e.key)
              .set(["note", id], { text: e.value.text })
              .sum(["note_migrated", id], 1n);
          }
        },
      };
    },
  };
  return { version: 2, migrations: [migration] };
}

/**
 * Writes `count` notes in layout 1's shape (`note-000`, `note-001`, …),
 * straight into the KV.
 *
 * @param kv the store
 * @param count how many notes
 */
export async function writeLegacyNotes(kv: Deno.Kv, count: number): Promise<void> {
  for (let i = 0; i < count; i += 10) {
    const op = kv.atomic();
    for (let j = i; j < Math.min(count, i + 10); j++) {
      const id = `note-${String(j).padStart(3, "0")}`;
      op.set(["legacy_note", id], { text: `note ${j}` });
    }
    await op.commit();
  }
}

/** What the store holds of the notes: left in layout 1's shape, moved, and how often each was migrated. */
export async function notesState(
  kv: Deno.Kv,
): Promise<{ legacy: number; moved: number; migrations: Record<string, number> }> {
  let legacy = 0;
  let moved = 0;
  const migrations: Record<string, number> = {};
  for await (const _ of kv.list({ prefix: ["legacy_note"] })) legacy++;
  for await (const _ of kv.list({ prefix: ["note"] })) moved++;
  for await (const e of kv.list<Deno.KvU64>({ prefix: ["note_migrated"] })) {
    migrations[String(e.key[1])] = Number(e.value.value);
  }
  return { legacy, moved, migrations };
}
