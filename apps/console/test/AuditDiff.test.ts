import { assert, describe, it } from "vitest"
import * as AuditDiff from "../src/AuditDiff.ts"

describe("AuditDiff.changes", () => {
  it("lists only the fields that differ, with a missing side as null", () => {
    assert.deepStrictEqual(
      AuditDiff.changes({ name: "ci", disabled: false, limit: 5 }, { name: "ci", disabled: true, note: "x" }),
      [
        { field: "disabled", before: "false", after: "true" },
        { field: "limit", before: "5", after: null },
        { field: "note", before: null, after: "\"x\"" }
      ]
    )
  })

  it("reads a creation (no before) and a deletion (no after) field by field", () => {
    assert.deepStrictEqual(AuditDiff.changes(null, { name: "ci" }), [{ field: "name", before: null, after: "\"ci\"" }])
    assert.deepStrictEqual(AuditDiff.changes({ name: "ci" }, null), [{ field: "name", before: "\"ci\"", after: null }])
    assert.deepStrictEqual(AuditDiff.changes({ routing: { sort: "price" } }, { routing: { sort: "price" } }), [])
  })
})
