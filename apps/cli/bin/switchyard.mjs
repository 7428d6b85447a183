#!/usr/bin/env node
import * as Fs from "node:fs"

const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `switchyard needs Node >= 22.19 (this is ${process.versions.node}).\n` +
      "Run it through pnpm from the repository (`pnpm exec switchyard ...`), which uses the pinned Node 24.\n"
  )
  process.exit(2)
}

// The bundle (`pnpm --filter @switchyard/cli build`) starts in a fraction of the time the
// TypeScript sources take; it is used only while no source it was built from is newer.
const bundle = new URL("../dist/switchyard.mjs", import.meta.url)
const sources = ["../package.json", "../src", "../../../packages/client/src", "../../../packages/core/src"]
  .map((p) => new URL(p, import.meta.url))

const newest = (path) => {
  const stat = Fs.statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs
  for (const entry of Fs.readdirSync(path, { withFileTypes: true, recursive: true })) {
    latest = Math.max(latest, Fs.statSync(`${entry.parentPath}/${entry.name}`).mtimeMs)
  }
  return latest
}

const fresh = () => {
  try {
    const built = Fs.statSync(bundle).mtimeMs
    return sources.every((source) => !Fs.existsSync(source) || newest(source) <= built)
  } catch {
    return false
  }
}

await import(fresh() ? bundle.href : "../src/bin.ts")
