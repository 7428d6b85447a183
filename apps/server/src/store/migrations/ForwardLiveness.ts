import { Effect } from "effect"

/**
 * No table changes: the money functions changed (a process's `seen_at` only moves forward, a row
 * answered under a lease that moved is settled under the key's current room), and a migration is
 * what makes a store migrated before create them again (`Migrations.migrate`).
 */
export const forwardLiveness = Effect.void
