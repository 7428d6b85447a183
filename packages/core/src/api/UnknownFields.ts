/**
 * What the gateway does with the fields of a request body it does not know, written into the
 * OpenAPI document route by route.
 *
 * **Details**
 *
 * - Most bodies are lenient, as OpenRouter's are: an unknown field is ignored, at any depth
 *   (`additionalProperties: true`), except inside the objects that refuse unknown fields whatever
 *   the route (the `provider` preferences and their nested objects: a typo such as `max_prise`
 *   must not pass as a silently ignored limit), which keep `additionalProperties: false`.
 * - The routes that decode their body with `onExcessProperty: "error"` (the intern operations,
 *   `PATCH /workspaces/{id}`, the managed providers) refuse an unknown field at any depth with a
 *   400 naming it: `additionalProperties: false` throughout, as Effect's OpenAPI generator writes
 *   every object.
 * - Every request body says which it is in words (its `description`) and in
 *   `x-switchyard-unknown-fields` (`ignored` or `refused`).
 *
 * @since 0.10.0
 */
import { Context } from "effect"
import { HttpApi, OpenApi } from "effect/http-api"

/**
 * What a route does with an unknown field of its body.
 *
 * @since 0.10.0
 */
export type Treatment = "ignored" | "refused"

/**
 * The treatment of each route's body, by OpenAPI `operationId`, read from the definition: a route
 * whose payload is decoded with `onExcessProperty: "error"` refuses unknown fields.
 *
 * @since 0.10.0
 */
export const treatments = (api: HttpApi.Constraint): ReadonlyMap<string, Treatment> => {
  const byOperation = new Map<string, Treatment>()
  HttpApi.reflect(api as HttpApi.Top, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const operationId = Context.getOrElse(
        endpoint.annotations,
        OpenApi.Identifier,
        () => (group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`)
      )
      const options = Context.getOrUndefined(mergedAnnotations, HttpApi.PayloadParseOptions) ??
        Context.getOrUndefined(mergedAnnotations, HttpApi.ParseOptions)
      byOperation.set(operationId, options?.onExcessProperty === "error" ? "refused" : "ignored")
    }
  })
  return byOperation
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const componentPrefix = "#/components/schemas/"

/** An object that refuses unknown properties whatever the route: its rest is `false` by pattern. */
const isClosed = (schema: Json) =>
  isObject(schema.patternProperties) && Object.values(schema.patternProperties).some((value) => value === false)

const describe: Record<Treatment, string> = {
  ignored: "Unknown fields are ignored (as OpenRouter's API does), except where an object says `additionalProperties: false`: " +
    "there an unknown field is refused with 400 naming it.",
  refused: "Unknown fields are refused, at any depth, with 400 naming them."
}

/**
 * `spec` with every request body saying what its route does with unknown fields (see the
 * module's description). A component a lenient body needs opened that a strict body also uses is
 * copied, so each route's schema stays exact.
 *
 * @since 0.10.0
 */
export const written = <S extends object>(spec: S, byOperation: ReadonlyMap<string, Treatment>): S => {
  const document = structuredClone(spec) as Json
  const components = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>
  const operations: Array<{ readonly body: Json; readonly treatment: Treatment }> = []
  for (const methods of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(methods)) {
      if (!isObject(operation) || !isObject(operation.requestBody)) continue
      const treatment = byOperation.get(String(operation.operationId)) ?? "ignored"
      operations.push({ body: operation.requestBody, treatment })
    }
  }
  // Components a strict body reaches stay closed; a lenient body opens a copy of them.
  const strict = new Set<string>()
  const reach = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) reach(item)
      return
    }
    if (!isObject(node)) return
    const ref = typeof node.$ref === "string" && node.$ref.startsWith(componentPrefix) ? node.$ref.slice(componentPrefix.length) : undefined
    if (ref !== undefined && !strict.has(ref)) {
      strict.add(ref)
      reach(components[ref])
    }
    for (const value of Object.values(node)) reach(value)
  }
  for (const { body, treatment } of operations) if (treatment === "refused") reach(body)
  const opened = new Set<string>()
  const open = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) open(item)
      return
    }
    if (!isObject(node)) return
    if (typeof node.$ref === "string" && node.$ref.startsWith(componentPrefix)) {
      let name = node.$ref.slice(componentPrefix.length)
      if (strict.has(name)) {
        const copy = `${name}IgnoringUnknownFields`
        components[copy] ??= structuredClone(components[name]!)
        node.$ref = `${componentPrefix}${copy}`
        name = copy
      }
      if (opened.has(name)) return
      opened.add(name)
      open(components[name])
      return
    }
    if (node.additionalProperties === false && !isClosed(node)) node.additionalProperties = true
    for (const value of Object.values(node)) open(value)
  }
  for (const { body, treatment } of operations) {
    if (treatment === "ignored") open(body.content)
    body["x-switchyard-unknown-fields"] = treatment
    body.description = typeof body.description === "string" && body.description.length > 0
      ? `${body.description} ${describe[treatment]}`
      : describe[treatment]
  }
  return document as S
}
