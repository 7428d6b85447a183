import * as Registry from "@switchyard/core/adapters/Registry"
import { Effect, Option } from "effect"
import { Flag } from "effect/cli"
import { Usage } from "../../Failure.ts"
import * as SharedFlags from "../../SharedFlags.ts"

const optionalText = (name: string, metavar: string, description: string) =>
  Flag.String(name).pipe(Flag.withMetavar(metavar), Flag.withDescription(description), Flag.optional)

// The adapters of servers of one's own, from the registry of the adapters' modules.
const selfHosted = Registry.idsOfKind("self-hosted").join(", ")

/**
 * A provider's top-level fields given as flags, for `providers add` without a file or over one:
 * each flag given replaces the file's field of the config file's name.
 */
export const flags = {
  slug: optionalText("slug", "SLUG", "The provider's slug (overrides the file's)"),
  name: optionalText("name", "NAME", "The provider's display name (default: the slug)"),
  adapter: optionalText(
    "adapter",
    "ADAPTER",
    `The wire format: ${[...Registry.idsOfKind("api"), ...Registry.idsOfKind("in-process")].join(", ")}, a cloud's: ${
      Registry.idsOfKind("cloud").join(", ")
    }, or a self-hosted server: ${selfHosted}`
  ),
  baseUrl: Flag.String("base-url").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription(
      "The provider's base URL (azure: the resource's, https://NAME.openai.azure.com; bedrock and vertex: optional, the region's host by default); repeat it for the replicas of a self-hosted server (base_urls)"
    ),
    Flag.atLeast(0)
  ),
  region: optionalText("region", "REGION", "The AWS region a bedrock provider signs its requests for (us-east-1)"),
  apiVersion: optionalText("api-version", "VERSION", "The api-version an azure provider sends (2024-10-21)"),
  auth: Flag.ChoiceWithValue("auth", [["entra", "entra"]]).pipe(
    Flag.withDescription("azure: sign with an Entra ID token of the gateway's identity (DefaultAzureCredential) instead of a key"),
    Flag.optional
  ),
  project: optionalText("project", "PROJECT", "The Google Cloud project of a vertex provider"),
  location: optionalText("location", "LOCATION", "The region of a vertex provider (us-central1)"),
  credentialsFile: optionalText(
    "credentials-file",
    "PATH",
    "vertex: a service-account key file on the gateway's host (default: Application Default Credentials)"
  ),
  dataCollection: Flag.ChoiceWithValue("data-collection", [["allow", "allow"], ["deny", "deny"]]).pipe(
    Flag.withDescription("Whether the provider may store or train on requests"),
    Flag.optional
  ),
  discover: SharedFlags.toggle(
    "discover",
    `A self-hosted server (${selfHosted}): serve every model it lists, as <slug>/<server id>, checked every --discover-interval`
  ),
  discoverInterval: Flag.Int("discover-interval").pipe(
    Flag.withMetavar("SECONDS"),
    Flag.withDescription("With --discover: seconds between two listings of the server's models (default 60)"),
    Flag.optional
  )
}

type Given = { readonly [K in Exclude<keyof typeof flags, "baseUrl" | "discover" | "discoverInterval">]: Option.Option<string> } & {
  readonly baseUrl: ReadonlyArray<string>
  readonly discover: boolean
  readonly discoverInterval: Option.Option<number>
}

const fieldNames: Readonly<Record<Exclude<keyof typeof flags, "baseUrl" | "discover" | "discoverInterval">, string>> = {
  slug: "slug",
  name: "name",
  adapter: "adapter",
  region: "region",
  apiVersion: "api_version",
  auth: "auth",
  project: "project",
  location: "location",
  credentialsFile: "credentials_file",
  dataCollection: "data_collection"
}

/**
 * The provider to send: the file's (if any) with the flags' fields over it; its name defaults to
 * its slug, its endpoints to none yet (add them with `providers update`).
 */
export const payloadOf = Effect.fnUntraced(function*(file: Record<string, unknown> | undefined, given: Given) {
  const fields: Record<string, unknown> = {}
  for (const key of Object.keys(fieldNames) as Array<keyof typeof fieldNames>) {
    const value = given[key]
    if (Option.isSome(value)) fields[fieldNames[key]] = value.value
  }
  if (given.discover) fields.discover = true
  if (Option.isSome(given.discoverInterval)) fields.discover_interval_s = given.discoverInterval.value
  // One --base-url is the server; several are its replicas. Either replaces the file's servers.
  if (given.baseUrl.length === 1) fields.base_url = given.baseUrl[0]
  if (given.baseUrl.length > 1) fields.base_urls = given.baseUrl
  const replaced = given.baseUrl.length === 0 ? undefined : given.baseUrl.length === 1 ? "base_urls" : "base_url"
  if (file === undefined && (fields.slug === undefined || fields.adapter === undefined || fields.data_collection === undefined)) {
    return yield* new Usage({
      message: "Without --file, a provider needs --slug, --adapter and --data-collection",
      hint: "Or give its JSON with --file."
    })
  }
  const kept = Object.fromEntries(Object.entries(file ?? {}).filter(([field]) => field !== replaced))
  const merged: Record<string, unknown> = { endpoints: [], ...kept, ...fields }
  return merged.name === undefined && merged.slug !== undefined ? { ...merged, name: merged.slug } : merged
})
