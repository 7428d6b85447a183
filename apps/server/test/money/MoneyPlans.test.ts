import { suite } from "../support/MoneyPlans.ts"
import { storeKind } from "../support/TestServer.ts"

// PostgreSQL seeds a million ledger rows in seconds. PGlite is checked here at 100,000 (five times
// the size at which the flush's former join was already a full scan; about 10 s) and at a million
// by `pnpm test:reliability` (test/reliability/MoneyPlans.test.ts, about half a minute).
suite(storeKind === "postgres" ? 1_000_000 : 100_000, 600_000)
