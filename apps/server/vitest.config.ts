import * as Os from "node:os"
import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: {
    globalSetup: ["test/support/globalSetup.ts", "test/support/BuildBundle.ts", "test/reliability/Summary.ts"],
    // Most files wait on processes, sockets and PostgreSQL more than they compute: two files at a
    // time even on a two-core machine (vitest's default there is one).
    maxWorkers: Math.max(2, Os.availableParallelism() - 1),
    // Files share a worker's loaded modules instead of loading the gateway again for each file:
    // about a third of the suite's time on a two-core machine. Nothing a test relies on is kept
    // in module state; the one file that spies on a module loads what it tests afresh.
    isolate: false,
    // What the gateways under test print (start-up banners, access lines of refused requests) is
    // shown for a failing test only, beside its failure.
    silent: "passed-only"
  }
})
