import { describe } from "@effect/vitest"
import { suite } from "../support/MoneyPlans.ts"
import { storeKind } from "../support/TestServer.ts"
import { level } from "./Reliability.ts"

// The money plan suite (PL/pgSQL, PostgreSQL only) on a million ledger rows; SQLite's plans are
// checked by test/store/SqlitePlans.test.ts.
describe.skipIf(level !== "full" || storeKind !== "postgres")("money plans on a million ledger rows", () => {
  suite(1_000_000, 900_000)
})
