import { Effect } from "effect"

/**
 * No table changes: the money functions changed (a grant's refresh of the process's `seen_at` only
 * moves it forward), and a migration is what makes a store migrated before create them again
 * (`Migrations.migrate`).
 */
export const forwardLiveness = Effect.void
