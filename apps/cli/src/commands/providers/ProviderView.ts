import type { ManagedProvider } from "@switchyard/core/catalog/ManagedProvider"
import type { ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { Config, Effect, Option, Redacted } from "effect"
import { Argument, Flag } from "effect/cli"
import * as Fs from "node:fs/promises"
import { Usage } from "../../Failure.ts"
import * as Output from "../../Output.ts"

export const slugArgument = Argument.String("slug").pipe(Argument.withDescription("The provider's slug"))

const credential = (key: { readonly set: boolean; readonly last4: string | null } | undefined) =>
  key === undefined ? "-" : !key.set ? "none" : key.last4 === null ? "set" : `…${key.last4}`

export const columns: ReadonlyArray<Output.Column<ProviderRecord>> = [
  { header: "SLUG", value: (p) => p.slug },
  { header: "NAME", value: (p) => p.name },
  { header: "SOURCE", value: (p) => p.source ?? "-" },
  { header: "STATUS", value: (p) => (p.enabled === false ? "disabled" : p.active ? "active" : "inactive") },
  { header: "KEY", value: (p) => credential(p.api_key) },
  { header: "DATA", value: (p) => `${p.data_collection}${p.zdr ? ", zdr" : ""}` }
]

export const detail = (p: ManagedProvider) =>
  Output.record([
    ["slug", p.slug],
    ["name", p.name],
    ["source", p.source],
    ["status", !p.enabled ? "disabled" : p.active ? "active" : "inactive"],
    ["api key", credential(p.api_key)],
    ["adapter", Output.show(p.provider.adapter)],
    ...(Array.isArray(p.provider.base_urls)
      ? [["base urls", p.provider.base_urls.map(String).join(", ")] as const]
      : [["base url", Output.show(p.provider.base_url)] as const]),
    ...(p.provider.region === undefined ? [] : [["region", Output.show(p.provider.region)] as const]),
    // The cloud adapters' placement and identity (Azure's api_version and auth, Vertex's project,
    // location and credentials file), shown when the provider has them.
    ...(["api_version", "auth", "project", "location", "credentials_file"] as const)
      .filter((field) => p.provider[field] !== undefined)
      .map((field): [string, string] => [field.replace("_", " "), Output.show(p.provider[field])]),
    ["endpoints", String(Array.isArray(p.provider.endpoints) ? p.provider.endpoints.length : 0)],
    // A self-hosted server's replicas as the gateway process that answered sees them.
    ...(p.replicas ?? []).map((r): [string, string] => [
      `replica ${r.base_url}`,
      `${r.healthy ? "healthy" : "held out"}, ${r.in_flight} in flight, p50 ${r.p50_ms === null ? "-" : `${r.p50_ms} ms`}`
    ]),
    ["updated", Output.date(p.updated_at)]
  ])

export const fileFlag = Flag.String("file").pipe(
  Flag.withMetavar("PATH"),
  Flag.withDescription("A JSON file holding one provider as in the config file (`api_key` may be in it)")
)

export const keyFromEnvFlag = Flag.String("key-from-env").pipe(
  Flag.withMetavar("VAR"),
  Flag.withDescription("Send the upstream credential read from this environment variable (kept off the command line)"),
  Flag.optional
)

export const readJson = Effect.fnUntraced(function*(path: string) {
  const text = yield* Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (error) => new Usage({ message: `Cannot read ${path}: ${(error as Error).message}` })
  })
  const value = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new Usage({ message: `${path} is not JSON: ${(error as Error).message}` })
  })
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return yield* new Usage({ message: `${path} must hold one JSON object (a provider)` })
  }
  return value as Record<string, unknown>
})

/** The credential named by `--key-from-env`, if given. */
export const keyFromEnv = Effect.fnUntraced(function*(name: Option.Option<string>) {
  if (Option.isNone(name)) return {}
  const value = yield* Config.option(Config.Redacted(name.value)).pipe(Effect.orElseSucceed(() => Option.none()))
  if (Option.isNone(value) || Redacted.value(value.value).trim() === "") {
    return yield* new Usage({ message: `The environment variable ${name.value} is not set`, hint: "Export it, or leave out --key-from-env." })
  }
  return { api_key: Redacted.value(value.value).trim() }
})
