import * as Os from "node:os"
import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    globalSetup: ["test/support/globalSetup.ts", "test/support/BuildBundle.ts", "test/reliability/Summary.ts"],
    // Most files wait on processes, sockets and PostgreSQL more than they compute: two files at a
    // time even on a two-core machine (vitest's default there is one).
    maxWorkers: Math.max(2, Os.availableParallelism() - 1)
  }
})
