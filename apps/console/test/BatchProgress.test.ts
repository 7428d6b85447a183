import { assert, describe, it } from "vitest"
import * as BatchProgress from "../src/BatchProgress.ts"

describe("BatchProgress", () => {
  it("counts served and failed lines as done, 0 before the lines are counted", () => {
    assert.strictEqual(BatchProgress.done({ total: 0, completed: 0, failed: 0 }), 0)
    assert.strictEqual(BatchProgress.done({ total: 8, completed: 3, failed: 1 }), 0.5)
    assert.strictEqual(BatchProgress.done({ total: 4, completed: 4, failed: 0 }), 1)
  })

  it("offers a cancel only where the gateway takes one, and reads again only what still moves", () => {
    assert.deepStrictEqual(
      (["validating", "in_progress", "finalizing", "cancelling", "completed", "failed", "expired", "cancelled"] as const)
        .map((status) => [status, BatchProgress.cancellable(status), BatchProgress.moving(status)]),
      [
        ["validating", true, true],
        ["in_progress", true, true],
        ["finalizing", false, true],
        ["cancelling", false, true],
        ["completed", false, false],
        ["failed", false, false],
        ["expired", false, false],
        ["cancelled", false, false]
      ]
    )
  })
})
