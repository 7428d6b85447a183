import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderFields from "./ProviderFields.ts"
import * as ProviderView from "./ProviderView.ts"

export const add = Command.make(
  "add",
  { file: Flag.optional(ProviderView.fileFlag), keyFromEnv: ProviderView.keyFromEnvFlag, json: SharedFlags.json, ...ProviderFields.flags },
  Effect.fn(function*({ file, json, keyFromEnv, ...given }) {
    const client = yield* GatewayClient
    const fromFile = Option.isSome(file) ? yield* ProviderView.readJson(file.value) : undefined
    const payload = { ...(yield* ProviderFields.payloadOf(fromFile, given)), ...(yield* ProviderView.keyFromEnv(keyFromEnv)) }
    const { data } = yield* client.providerAdmin.create({ payload })
    if (json) return yield* Output.json({ data })
    yield* ProviderView.detail(data)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Add a provider at runtime, live on every replica within a second (instance administrators)"),
  Command.withExamples([
    { command: "switchyard providers add --file acme.json --key-from-env ACME_KEY", description: "Add the provider in acme.json with the credential in $ACME_KEY" },
    {
      command: "switchyard providers add --slug bedrock-eu --adapter bedrock --region eu-central-1 --data-collection deny --file endpoints.json",
      description: "Add Amazon Bedrock in Frankfurt, signed with the AWS credentials of the gateway's host"
    },
    {
      command:
        "switchyard providers add --slug azure --adapter azure --base-url https://myres.openai.azure.com --api-version 2024-10-21 --auth entra --data-collection deny --file deployments.json",
      description: "Add an Azure OpenAI resource, signed with an Entra ID token of the gateway's identity"
    },
    {
      command:
        "switchyard providers add --slug google-vertex --adapter vertex --project my-proj --location us-central1 --data-collection deny --file endpoints.json",
      description: "Add Vertex AI in a project, signed with the gateway's Application Default Credentials"
    },
    {
      command: "switchyard providers add --slug gpu-tei --adapter tei --base-url http://tei-0:80 --base-url http://tei-1:80 --data-collection deny --file endpoints.json",
      description: "Add two replicas of one Text Embeddings Inference server as one provider (least loaded first)"
    },
    {
      command: "switchyard providers add --slug gpu-ollama --adapter ollama --base-url http://ollama:11434 --data-collection deny --discover",
      description: "Add an Ollama server and serve every embedding model it has pulled, as gpu-ollama/<model>"
    }
  ])
)
