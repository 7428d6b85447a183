import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const read = (...path: Array<string>): string => Fs.readFileSync(NodePath.join(repoRoot, ...path), "utf8")

const recordsDir = NodePath.join(repoRoot, "docs", "decisions")
const recordFiles = Fs.readdirSync(recordsDir).filter((name) => name.endsWith(".md")).sort()
const records = new Map(recordFiles.map((name) => [name, Fs.readFileSync(NodePath.join(recordsDir, name), "utf8")]))
const numberOf = (name: string): string => name.slice(0, 4)

/** The relative links of a markdown page (no scheme, no bare anchor), without their anchors. */
const linksOf = (page: string): Array<string> =>
  [...page.matchAll(/\]\(([^)\s]+)\)/gu)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/u.test(target) && !target.startsWith("#"))
    .map((target) => target.split("#")[0]!)

describe("docs/decisions/", () => {
  it("holds records named NNNN-short-title.md, numbered once each", () => {
    assert.isAtLeast(recordFiles.length, 100)
    for (const name of recordFiles) assert.match(name, /^\d{4}-[a-z0-9-]+\.md$/u, name)
    const numbers = recordFiles.map(numberOf)
    assert.strictEqual(new Set(numbers).size, numbers.length, "two records share a number")
  })

  it("gives every record its number as title, a status, context, decision and consequences", () => {
    for (const [name, text] of records) {
      assert.match(text, new RegExp(`^# ${numberOf(name)}\\. \\S`, "u"), `${name}: title`)
      assert.match(text, /^Status: (accepted|superseded by \d{4})$/mu, `${name}: status line`)
      for (const heading of ["## Context", "## Decision", "## Consequences"]) {
        assert.include(text, `\n${heading}\n`, `${name}: ${heading}`)
      }
    }
  })

  it("has every superseded record name a record that exists and says so at its top", () => {
    for (const [name, text] of records) {
      const by = /^Status: superseded by (\d{4})$/mu.exec(text)?.[1]
      if (by === undefined) continue
      assert.isTrue(recordFiles.some((other) => numberOf(other) === by), `${name}: superseded by ${by}, which does not exist`)
      assert.notStrictEqual(by, numberOf(name), `${name} supersedes itself`)
      assert.match(text.split("## Context")[0]!, /^> Superseded/mu, `${name}: says so above its context`)
    }
  })

  it("describes PGlite as the store in no accepted record: such records point at the SQLite decision", () => {
    for (const [name, text] of records) {
      if (!/^Status: accepted$/mu.test(text) || !/pglite/iu.test(text)) continue
      assert.isTrue(/node:sqlite/u.test(text), `${name} speaks of PGlite without the note that the embedded store is SQLite now`)
    }
  })

  it("lists every record in the index once, and nothing else", () => {
    const index = read("docs", "decisions.md")
    const listed = linksOf(index).filter((target) => target.startsWith("decisions/")).map((target) => target.slice(10)).filter((name) => name !== "")
    for (const name of listed) assert.isTrue(records.has(name), `the index links decisions/${name}, which does not exist`)
    const twice = listed.filter((name, i) => listed.indexOf(name) !== i)
    assert.deepStrictEqual(twice, [], "listed more than once")
    assert.deepStrictEqual(recordFiles.filter((name) => !listed.includes(name)), [], "not in the index")
    for (const [name, text] of records) {
      const title = /^# (.+)$/mu.exec(text)![1]!
      assert.include(index, `[${title}](decisions/${name})`, `${name}: the index line carries its title`)
    }
  })

  it("groups the index by subsystem: each record under one of the headings, in number order", () => {
    const index = read("docs", "decisions.md")
    const headings = [
      "API, client and CLI",
      "Keys, workspaces and access",
      "Routing",
      "Providers",
      "Money",
      "Store",
      "Cache",
      "Batches",
      "Console",
      "Interns",
      "Operations",
      "Code and tests"
    ]
    const sections = index.split(/^## /mu).slice(1).map((section) => {
      const [heading, ...rest] = section.split("\n")
      const numbers = rest.flatMap((line) => /^\| \[(\d{4})\. .*\]\(decisions\/[^)]+\) \| [^|]+ \|$/u.exec(line)?.[1] ?? [])
      return { heading: heading!, numbers, lines: rest.filter((line) => line.includes("(decisions/")).length }
    })
    assert.deepStrictEqual(sections.map((s) => s.heading), headings, "the index's headings, in this order")
    for (const { heading, numbers, lines } of sections) {
      assert.strictEqual(numbers.length, lines, `${heading}: every line a table row \`| [NNNN. title](decisions/…) | status |\``)
      assert.isAbove(numbers.length, 0, `${heading} lists no record`)
      assert.deepStrictEqual(numbers, [...numbers].sort(), `${heading}: records in number order`)
    }
    assert.strictEqual(sections.reduce((n, s) => n + s.numbers.length, 0), recordFiles.length, "every record under one heading")
    const intro = index.split(/^## /mu)[0]!
    assert.notInclude(intro, "(decisions/0", "no record is listed above the first heading")
  })
})

describe("README.md and the guides", () => {
  const readme = read("README.md")

  it("is a front door of at most 250 lines with the two set-up commands", () => {
    assert.isAtMost(readme.split("\n").length, 250)
    assert.include(readme, "npx -y pnpm@10 install && npx -y pnpm@10 start")
    assert.include(readme, "npx -y pnpm@10 install && npx -y pnpm@10 test")
  })

  it("links every guide in docs/, and every link of the README and the guides resolves", () => {
    const guides = Fs.readdirSync(NodePath.join(repoRoot, "docs")).filter((name) => name.endsWith(".md") && name !== "decisions.md")
    const linked = new Set(linksOf(readme))
    for (const guide of guides) assert.isTrue(linked.has(`docs/${guide}`), `README.md does not link docs/${guide}`)
    const pages: Array<[string, string]> = [["README.md", readme], ...guides.map((g): [string, string] => [`docs/${g}`, read("docs", g)])]
    for (const [page, text] of pages) {
      for (const target of linksOf(text)) {
        const path = NodePath.join(repoRoot, NodePath.dirname(page), decodeURI(target))
        assert.isTrue(Fs.existsSync(path), `${page} links ${target}, which does not exist`)
      }
    }
  })

  it("starts each guide with its title and what it is for", () => {
    for (const guide of Fs.readdirSync(NodePath.join(repoRoot, "docs")).filter((n) => n.endsWith(".md"))) {
      if (guide === "decisions.md" || guide === "architecture.md") continue
      const [title, blank, purpose] = read("docs", guide).split("\n")
      assert.match(title!, /^# \S/u, `docs/${guide}: a title first`)
      assert.strictEqual(blank, "", `docs/${guide}`)
      assert.match(purpose!, /^(For|What|How|Why)\b/u, `docs/${guide}: says what it is for`)
    }
  })
})
