import { createRequire } from "node:module"
import * as Fs from "node:fs"
import type { Page } from "playwright-core"

const axeSource = Fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown> }>
}

/**
 * The WCAG 2 A and AA rules axe-core finds broken on the page as it is now (labels, names,
 * contrast, landmarks...), one line each.
 */
export const violations = async (page: Page): Promise<ReadonlyArray<string>> => {
  // Evaluated through the DevTools protocol: the console's Content-Security-Policy refuses inline scripts.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource)
  const found = await page.evaluate(async () => {
    const axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<Violation> }> } = Reflect.get(window, "axe")
    const result = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    return result.violations
  })
  return found.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
}
