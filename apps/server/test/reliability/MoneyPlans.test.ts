import { describe } from "@effect/vitest"
import { suite } from "../support/MoneyPlans.ts"
import { storeKind } from "../support/TestServer.ts"
import { level } from "./Reliability.ts"

// The money plan suite on a million ledger rows on PGlite, about half a minute on two cores, most
// of it writing the rows (`pnpm test` checks it at 100,000; on PostgreSQL test:pg runs it at a million).
describe.skipIf(level !== "full" || storeKind !== "pglite")("money plans on a million ledger rows", () => {
  suite(1_000_000, 900_000)
})
