import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as InputFile from "../../src/batch/InputFile.ts"

const fields = { text: "text", id: "id" }

const ok = (content: string, format: InputFile.Format, f = fields) => {
  const result = InputFile.parse(content, format, f)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success.map(({ id, text }) => ({ id, text }))
}

const refused = (content: string, format: InputFile.Format, f = fields) => {
  const result = InputFile.parse(content, format, f)
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure.message
}

describe("InputFile", () => {
  it("picks the format from the extension", () => {
    assert.strictEqual(InputFile.formatOf("a/docs.JSONL"), "jsonl")
    assert.strictEqual(InputFile.formatOf("docs.ndjson"), "jsonl")
    assert.strictEqual(InputFile.formatOf("docs.csv"), "csv")
    assert.strictEqual(InputFile.formatOf("docs.txt"), "txt")
    assert.strictEqual(InputFile.formatOf("-"), "txt")
  })

  it("reads a text file a line each, skipping blank lines but keeping line numbers as ids", () => {
    assert.deepStrictEqual(ok("alpha\n\nbeta\r\n  \ngamma\n", "txt"), [
      { id: 1, text: "alpha" },
      { id: 3, text: "beta" },
      { id: 5, text: "gamma" }
    ])
  })

  it("reads JSONL objects and strings, with ids from the id field or the line number", () => {
    const content = ["{\"id\":\"a\",\"text\":\"first\"}", "\"second\"", "", "{\"text\":\"third\",\"extra\":1}", "{\"id\":7,\"text\":\"fourth\"}"].join("\n")
    assert.deepStrictEqual(ok(content, "jsonl"), [
      { id: "a", text: "first" },
      { id: 2, text: "second" },
      { id: 4, text: "third" },
      { id: 7, text: "fourth" }
    ])
    assert.deepStrictEqual(ok("{\"key\":\"k\",\"body\":\"b\"}", "jsonl", { text: "body", id: "key" }), [{ id: "k", text: "b" }])
  })

  it("names the line that breaks a rule", () => {
    assert.include(refused("{\"text\":\"a\"}\n{oops", "jsonl"), "line 2: not valid JSON")
    assert.include(refused("[1,2]", "jsonl"), "line 1: expected a JSON object or string")
    assert.include(refused("{\"body\":\"a\"}", "jsonl"), "line 1: no \"text\" field")
    assert.include(refused("{\"text\":\"\"}", "jsonl"), "line 1: the text is missing or empty")
    assert.include(refused("{\"text\":\"a\",\"id\":{}}", "jsonl"), "\"id\" must be a string or a number")
    assert.include(refused("{\"id\":1,\"text\":\"a\"}\n{\"id\":\"1\",\"text\":\"b\"}", "jsonl"), "line 2: the id \"1\" was already used at line 1")
  })

  it("reads CSV with a header, quoted fields and a BOM", () => {
    const content = "\uFEFFid,text,other\nx1,\"hello, world\",1\nx2,\"multi\nline\",2\n,third,3\n"
    assert.deepStrictEqual(ok(content, "csv"), [
      { id: "x1", text: "hello, world" },
      { id: "x2", text: "multi\nline" },
      { id: 3, text: "third" }
    ])
    assert.include(refused("id,body\n1,a\n", "csv"), "no \"text\" column")
    assert.include(refused("text\n\"unclosed\n", "csv"), "not valid CSV")
    assert.deepStrictEqual(ok("", "csv"), [])
  })
})
