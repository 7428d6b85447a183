/**
 * A request's `model` written without its vendor (`text-embedding-3-small`), as code written
 * for OpenAI's own API sends it, resolved to the catalog's `<vendor>/<model>`.
 *
 * **Details**
 *
 * A name with a `/` is used as it is. A bare name resolves to the one model, among those an
 * active provider serves, whose part after the vendor is that name (case ignored); when no
 * served model has it, to the one catalog model that has it (so a 404 can say why its providers
 * are not used). Two or more models with that name are ambiguous: a 400 listing them. No model
 * with that name leaves the name as it is, and routing answers 404.
 *
 * @since 0.1.0
 */
import { Result } from "effect"
import { BadRequest } from "../schema/ApiError.ts"
import type { Catalog, Provider } from "./Catalog.ts"

const bareName = (model: string) => model.slice(model.indexOf("/") + 1).toLowerCase()

const matching = (catalog: Catalog, wanted: string, include: (provider: Provider) => boolean): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const provider of catalog.providers) {
    if (!include(provider)) continue
    for (const endpoint of provider.endpoints) {
      if (bareName(endpoint.model) === wanted) found.add(endpoint.model.toLowerCase())
    }
  }
  return [...found].sort()
}

/**
 * The catalog model a request's `model` names, or a 400 when a bare name is ambiguous.
 *
 * @since 0.1.0
 */
export const resolve = (
  catalog: Catalog,
  model: string,
  isActive: (provider: Provider) => boolean
): Result.Result<string, BadRequest> => {
  if (model.includes("/")) return Result.succeed(model)
  const wanted = model.toLowerCase()
  const served = matching(catalog, wanted, isActive)
  const candidates = served.length > 0 ? served : matching(catalog, wanted, () => true)
  if (candidates.length === 0) return Result.succeed(model)
  if (candidates.length === 1) return Result.succeed(candidates[0]!)
  return Result.fail(new BadRequest({
    message: `Model ${JSON.stringify(model)} is ambiguous: ${candidates.join(", ")} have that name; write it with its vendor`,
    metadata: { field: "model", model, candidates }
  }))
}
