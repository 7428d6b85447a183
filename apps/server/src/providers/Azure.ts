import * as CloudIdentity from "./CloudIdentity.ts"
import * as OpenAiBatch from "./OpenAiBatch.ts"
import * as OpenAiCompatible from "./OpenAiCompatible.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * Azure OpenAI: OpenAI's embeddings body and answer (OpenAI's own dialect) at a deployment's
 * path, `POST {base_url}/openai/deployments/{deployment}/embeddings?api-version=...`, where the
 * endpoint's `upstream_model` is the deployment's name. The key goes in `api-key`; with
 * `"auth": "entra"` a bearer token from Entra ID goes instead (see CloudIdentity).
 */
const placement: OpenAiCompatible.Placement = {
  name: "Azure",
  path: (connection, request) =>
    `/openai/deployments/${encodeURIComponent(request.upstreamModel)}/embeddings?api-version=${
      encodeURIComponent(connection.apiVersion ?? "")
    }`,
  keyHeaders: WireFormat.keyIn("api-key")
}

export const make = OpenAiCompatible.make(placement)

const apiVersionOf = (connection: { readonly apiVersion?: string | undefined }) =>
  `api-version=${encodeURIComponent(connection.apiVersion ?? "")}`

/**
 * Azure OpenAI's Files and Batch API: OpenAI's, under `{base_url}/openai` with the provider's
 * `api-version` on every call, signed as the embeddings are (`api-key`, or an Entra ID token). A
 * request line's `url` and the batch's `endpoint` are `/embeddings`; its body's `model` is the
 * global-batch deployment (the endpoint's `batch_upstream_model`, else its `upstream_model`).
 */
const batchPlacement: OpenAiBatch.Placement = {
  url: (connection, path, query) =>
    `${connection.baseUrl.replace(/\/+$/u, "")}/openai${path}?${apiVersionOf(connection)}${query === undefined ? "" : `&${query}`}`,
  credentials: (connection) => CloudIdentity.credentialHeaders(connection, WireFormat.keyIn("api-key")),
  endpoint: "/embeddings",
  // As Azure's live calls write their bodies (the connection's dialect, absent on an azure provider).
  dialect: OpenAiCompatible.dialects.generic
}

export const makeBatch = OpenAiBatch.makeWith(batchPlacement)
