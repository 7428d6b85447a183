/**
 * The Node.js versions the gateway runs on: 22.19.0 and later (what undici 8, its HTTP client,
 * needs; on older ones it fails at load inside its zstd support), as the published package's
 * `engines` says (apps/server/package.json, `publishConfig`). Imports nothing, so that the entry point can check the version
 * before loading any module that would crash.
 */
const required = { major: 22, minor: 19, patch: 0 } as const

/** `>=22.19.0`, as `engines` spells it. */
export const range = `>=${required.major}.${required.minor}.${required.patch}`

const parse = (version: string): ReadonlyArray<number> => version.replace(/^v/u, "").split(/[.-]/u).slice(0, 3).map(Number)

/** Whether `version` (such as `20.20.2` or `v24.21.0`) is at least the required one. */
export const isSupported = (version: string): boolean => {
  const [major = 0, minor = 0, patch = 0] = parse(version)
  if (major !== required.major) return major > required.major
  if (minor !== required.minor) return minor > required.minor
  return patch >= required.patch
}

/** The one line an operator reads when `version` is too old; `undefined` when it is supported. */
export const problem = (version: string): string | undefined =>
  isSupported(version)
    ? undefined
    : `Switchyard needs Node.js ${required.major}.${required.minor}.${required.patch} or later; this is Node.js ${version.replace(/^v/u, "")}. ` +
      "From the repository, `npx -y pnpm@10 start` runs it on the pinned Node 24."
