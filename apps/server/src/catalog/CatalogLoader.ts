import { builtin, placed, placementVariables } from "@switchyard/core/catalog/BuiltinCatalog"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"

class CatalogLoadError extends Schema.TaggedError<CatalogLoadError>()("CatalogLoadError", {
  message: Schema.String
}) {}

/**
 * The catalog the process serves: the built-in one with the config file merged over it, and the
 * credential of every provider whose `api_key_env` is set.
 */
export interface LoadedCatalog {
  readonly catalog: Catalog.Catalog
  readonly credentials: ReadonlyMap<string, Redacted.Redacted<string>>
  readonly active: ReadonlySet<string>
}

/**
 * Parses the config file: JSON by its extension, YAML otherwise. The YAML library is imported
 * only for a YAML file (a gateway with a JSON config, or none, never loads it).
 */
const parse = async (path: string, text: string): Promise<unknown> => {
  const ext = NodePath.extname(path).toLowerCase()
  if (ext === ".json") return JSON.parse(text)
  const Yaml = await import("yaml")
  return Yaml.parse(text, { strict: true, uniqueKeys: true })
}

export const readFile = (path: string) =>
  Effect.tryPromise({
    try: () => Fs.readFile(path, "utf8"),
    catch: (cause) => new CatalogLoadError({ message: `Cannot read the config file ${path}: ${(cause as Error).message}` })
  }).pipe(
    Effect.flatMap((text) =>
      Effect.tryPromise({
        try: () => parse(path, text),
        catch: (cause) => new CatalogLoadError({ message: `The config file ${path} is not valid JSON or YAML: ${(cause as Error).message}` })
      })
    ),
    Effect.flatMap((raw) =>
      Catalog.decode(raw).pipe(
        Effect.mapError((error) => new CatalogLoadError({ message: `The config file ${path} is invalid: ${error.message}` }))
      )
    )
  )

export const load = Effect.gen(function*() {
  const path = yield* Config.option(Config.String("SWITCHYARD_CONFIG"))
  // The built-in Azure and Vertex providers are placed by the environment (their resource, project).
  const placement: Record<string, string | undefined> = {}
  for (const name of placementVariables) {
    const value = yield* Config.option(Config.String(name))
    if (Option.isSome(value)) placement[name] = value.value
  }
  const base = placed(builtin, placement)
  // A batch bucket the environment names for a built-in provider is checked as a config file's is.
  for (const provider of base.providers) {
    if (provider.batch === undefined || builtin.providers.find((b) => b.slug === provider.slug)?.batch !== undefined) continue
    yield* Schema.decodeUnknownEffect(Catalog.Provider)(provider, { errors: "all" }).pipe(
      Effect.mapError((error) =>
        new CatalogLoadError({ message: `The batch bucket the environment names for ${provider.slug} is invalid: ${error.message}` })
      )
    )
  }
  const catalog = Option.isSome(path) && path.value.trim() !== ""
    ? Catalog.merge(base, yield* readFile(path.value))
    : base
  const env: Record<string, string | undefined> = {}
  const credentials = new Map<string, Redacted.Redacted<string>>()
  for (const provider of catalog.providers) {
    const name = provider.api_key_env
    if (name === undefined || name === null) continue
    const value = yield* Config.option(Config.Redacted(name))
    if (Option.isSome(value) && Redacted.value(value.value).trim() !== "") {
      env[name] = Redacted.value(value.value)
      credentials.set(provider.slug, value.value)
    }
  }
  for (const name of [...Catalog.identityVariables, ...Catalog.awsCredentialEnv]) {
    const value = yield* Config.option(Config.String(name))
    if (Option.isSome(value)) env[name] = value.value
  }
  const active = new Set(catalog.providers.filter((p) => Catalog.isActive(p, env)).map((p) => p.slug))
  return { catalog, credentials, active } satisfies LoadedCatalog
})

export class CurrentCatalog extends Context.Service<CurrentCatalog, LoadedCatalog>()(
  "@switchyard/server/catalog/CurrentCatalog"
) {
  /** The catalog read once at start: the built-in one merged with the config file. */
  static readonly layer = Layer.effect(CurrentCatalog, load)
}
