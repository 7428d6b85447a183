import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { chromium, type BrowserContext } from "playwright-core"

/**
 * Debian's Chromium (`apt-get install -y chromium`), or the one `SWITCHYARD_E2E_CHROMIUM` names.
 */
export const executablePath = process.env.SWITCHYARD_E2E_CHROMIUM ?? "/usr/bin/chromium"

// Headless as root in a sandboxless container, with nothing that reaches for the network
// (the machine's network is closed; background fetches fail by the dozen otherwise).
const args = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

export interface Browser {
  readonly context: BrowserContext
  readonly close: () => Promise<void>
}

/**
 * A headless Chromium on a new, empty profile, removed at close.
 */
export const launch = async (): Promise<Browser> => {
  if (!Fs.existsSync(executablePath)) {
    throw new Error(`No Chromium at ${executablePath}: install Debian's (apt-get update && apt-get install -y chromium) or set SWITCHYARD_E2E_CHROMIUM`)
  }
  const profile = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args,
    viewport: { width: 1280, height: 860 }
  })
  return {
    context,
    close: async () => {
      await context.close()
      Fs.rmSync(profile, { recursive: true, force: true })
    }
  }
}

export const screenshotDir = NodePath.join(import.meta.dirname, "..", "screenshots")
