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
