/**
 * Every adapter's module, one line each: the adapter ids, the catalog's `adapter` schema and the
 * facts the catalog's rules, the built-in catalog, the config file's JSON Schema, the server's
 * wire formats and the console's add form read are derived from this list.
 *
 * **Details**
 *
 * Adding an adapter is a module in `adapters/modules/` and its line below; the server's
 * `providers/WireFormats.ts` then fails to type-check until the adapter has its wire format, and
 * `packages/core/test/adapters/Registry.test.ts` fails when the module lacks a part its kind
 * needs. See `docs/extending.md`.
 *
 * @since 0.13.0
 */
import { Schema } from "effect"
import type { ProviderModule } from "./ProviderModule.ts"
import { azure } from "./modules/azure.ts"
import { bedrock } from "./modules/bedrock.ts"
import { cohere } from "./modules/cohere.ts"
import { gemini } from "./modules/gemini.ts"
import { infinity } from "./modules/infinity.ts"
import { jina } from "./modules/jina.ts"
import { local } from "./modules/local.ts"
import { ollama } from "./modules/ollama.ts"
import { openai } from "./modules/openai.ts"
import { tei } from "./modules/tei.ts"
import { vertex } from "./modules/vertex.ts"
import { vllm } from "./modules/vllm.ts"
import { voyage } from "./modules/voyage.ts"

/**
 * The modules, in the order the config file's `adapter` lists them.
 *
 * @since 0.13.0
 */
export const modules = [openai, cohere, voyage, gemini, jina, local, bedrock, tei, ollama, azure, vertex, infinity, vllm] as const

type Modules = typeof modules

/**
 * An adapter's id.
 *
 * @since 0.13.0
 */
export type AdapterId = Modules[number]["id"]

type Ids<M> = { readonly [K in keyof M]: M[K] extends { readonly id: infer Id } ? Id : never }

const ids = modules.map((module) => module.id) as unknown as Ids<Modules>

/**
 * How the config file names an adapter: one of the registry's ids.
 *
 * @since 0.13.0
 */
export const Adapter = Schema.Literals(ids)

/**
 * Every adapter's id, in the registry's order.
 *
 * @since 0.13.0
 */
export const adapterIds: ReadonlyArray<AdapterId> = ids

const byId = new Map<string, ProviderModule>(modules.map((module) => [module.id, module]))

/**
 * The module of an adapter.
 *
 * @since 0.13.0
 */
export const moduleOf = (adapter: AdapterId): ProviderModule => byId.get(adapter)!

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/**
 * The config fields of every module, each optional (one adapter's provider may not set another's).
 *
 * @since 0.13.0
 */
export const fields = Object.assign({}, ...modules.map((module) => module.fields)) as UnionToIntersection<
  Modules[number]["fields"]
>

/**
 * The ids of the modules of one kind, in the registry's order.
 *
 * @since 0.13.0
 */
export const idsOfKind = (kind: ProviderModule["kind"]): ReadonlyArray<AdapterId> =>
  adapterIds.filter((id) => moduleOf(id).kind === kind)

/**
 * Which adapters declare a config field (`api_version`: azure).
 *
 * @since 0.13.0
 */
export const declaring = (field: string): ReadonlyArray<AdapterId> =>
  adapterIds.filter((id) => Object.hasOwn(moduleOf(id).fields, field))

/**
 * Whether an adapter's providers run inside the gateway and take no credential (a workspace's own
 * key, BYOK, has nothing to reach there).
 *
 * @since 0.13.0
 */
export const inProcess = (adapter: AdapterId): boolean => moduleOf(adapter).kind === "in-process"
