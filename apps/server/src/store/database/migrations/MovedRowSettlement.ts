import { Effect } from "effect"

/**
 * No table changes: `switchyard_flush` now settles a row whose lease moved under the key's current
 * room instead of refusing it, and a migration is what makes a store migrated before create the
 * money functions again (`Migrations.migrate`).
 */
export const movedRowSettlement = Effect.void
