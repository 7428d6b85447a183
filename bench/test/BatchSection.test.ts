import { assert, describe, it } from "@effect/vitest"
import * as BatchSection from "../src/BatchSection.ts"

const report = "# Switchyard benchmark\n\nintro\n\n## Targets\n\n| a |\n\n## Cells\n\nrows\n"

describe("the batch cell's section of RESULTS.md", () => {
  it("is appended where there is none, and replaced in place where there is one", () => {
    const first = BatchSection.replace(report, "## Batch\n\n1178 lines/s\n")
    assert.strictEqual(first, `${report}\n## Batch\n\n1178 lines/s\n`)
    const middle = "# B\n\n## Batch\n\nold\n\n## Later\n\nkept\n"
    assert.strictEqual(BatchSection.replace(middle, "## Batch\n\nnew"), "# B\n\n## Batch\n\nnew\n\n## Later\n\nkept\n")
    assert.strictEqual(BatchSection.replace(first, "## Batch\n\n2000 lines/s"), `${report}\n## Batch\n\n2000 lines/s\n`)
  })

  it("survives a full run's rewrite of the rest of the file", () => {
    const previous = BatchSection.replace(report, "## Batch\n\nfigures\n")
    const rewritten = BatchSection.keep(previous, "# Switchyard benchmark\n\nnew run\n")
    assert.strictEqual(rewritten, "# Switchyard benchmark\n\nnew run\n\n## Batch\n\nfigures\n")
    assert.strictEqual(BatchSection.keep(undefined, "text"), "text")
    assert.strictEqual(BatchSection.keep(report, "text"), "text")
  })
})
