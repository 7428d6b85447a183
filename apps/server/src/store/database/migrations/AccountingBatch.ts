import { Effect } from "effect"

/**
 * Created `switchyard_batch` (several reservations, settlements and releases in one statement),
 * which spend leases replaced; `0011_money_functions` drops it. It stays in the history, empty, as
 * every migration a store ran must.
 */
export const accountingBatch = Effect.void
