import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * The `sh` blocks of the README and the guides in docs/, as a reader finds them: the tests that
 * run their curl commands (test/docs/GuideCommands.test.ts) and their `switchyard` commands (the
 * CLI's test/e2e/GuideCommands.test.ts) read them here. A block that cannot run on a test machine
 * says so on the line above its fence with `<!-- not run: why -->`.
 */
export interface Block {
  readonly page: string
  readonly line: number
  readonly text: string
  /** Marked to be left out. */
  readonly skipped: boolean
}

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")

/** A block is left out when the line above its fence is this marker. */
const notRun = /^<!-- not run: .+ -->$/u

const shellBlocks = (page: string, text: string): Array<Block> => {
  const lines = text.split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== "```sh") continue
    const end = lines.indexOf("```", i + 1)
    const above = lines.slice(0, i).reverse().find((l) => l.trim() !== "") ?? ""
    blocks.push({ page, line: i + 1, text: lines.slice(i + 1, end).join("\n"), skipped: notRun.test(above) })
    i = end
  }
  return blocks
}

/** Every `sh` block of the README and of `docs/*.md`, in page order. */
export const guideBlocks = (): Array<Block> =>
  [
    "README.md",
    ...Fs.readdirSync(NodePath.join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)
  ].flatMap((page) => shellBlocks(page, Fs.readFileSync(NodePath.join(root, page), "utf8")))
