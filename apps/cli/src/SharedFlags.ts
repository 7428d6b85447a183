import { Flag } from "effect/cli"

export const toggle = (name: string, description: string) =>
  Flag.Boolean(name).pipe(Flag.withDescription(description), Flag.withDefault(false))

export const json = toggle("json", "Print JSON instead of a table (for scripts)")

export const commaList = (name: string, metavar: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar(metavar),
    Flag.withDescription(`${description} (comma-separated, or repeat the flag)`),
    Flag.atLeast(0),
    Flag.map((values) => values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter((v) => v.length > 0))
  )
