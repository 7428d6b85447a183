import { describe } from "@effect/vitest"
import { suite } from "../support/MoneyPlans.ts"
import { storeKind } from "../support/TestServer.ts"

// The plans of the money functions (PL/pgSQL) on PostgreSQL, which seeds a million ledger rows in
// seconds. The SQLite store's plans are checked by test/store/SqlitePlans.test.ts.
describe.skipIf(storeKind !== "postgres")("money plans (PostgreSQL)", () => {
  suite(1_000_000, 600_000)
})
