import { GatewayClient } from "@switchyard/client/GatewayClient"
import { UpdateInternBody } from "@switchyard/core/schema/Intern"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

const changeOf = <A>(key: string, value: Option.Option<A>, clear: boolean) =>
  clear ? { [key]: null } : Option.match(value, { onNone: () => ({}), onSome: (v) => ({ [key]: v }) })

export const update = Command.make(
  "update",
  {
    intern: InternView.idArgument,
    name: Flag.String("name").pipe(Flag.withDescription("New name"), Flag.optional),
    description: Flag.String("description").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("New description"), Flag.optional),
    clearDescription: SharedFlags.toggle("clear-description", "Remove the description"),
    instructions: Flag.String("instructions").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("New standing instructions"), Flag.optional),
    instructionsFile: Flag.String("instructions-file").pipe(Flag.withMetavar("PATH"), Flag.withDescription("Read the new instructions from a file"), Flag.optional),
    clearInstructions: SharedFlags.toggle("clear-instructions", "Remove the instructions"),
    model: Flag.String("model").pipe(Flag.withMetavar("VENDOR/MODEL"), Flag.withDescription("New model"), Flag.optional),
    defaultModel: SharedFlags.toggle("default-model", "Go back to the workspace's default model"),
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    const conflicts = [
      ["--description", "--clear-description", Option.isSome(input.description) && input.clearDescription],
      ["--instructions", "--instructions-file", Option.isSome(input.instructions) && Option.isSome(input.instructionsFile)],
      ["--instructions", "--clear-instructions", (Option.isSome(input.instructions) || Option.isSome(input.instructionsFile)) && input.clearInstructions],
      ["--model", "--default-model", Option.isSome(input.model) && input.defaultModel]
    ] as const
    for (const [a, b, clash] of conflicts) {
      if (clash) return yield* new Failure.Usage({ message: `${a} and ${b} contradict each other` })
    }
    const instructions = Option.isSome(input.instructionsFile) ? Option.some(yield* InternView.readText(input.instructionsFile.value)) : input.instructions
    const changes = {
      ...changeOf("name", input.name, false),
      ...changeOf("description", input.description, input.clearDescription),
      ...changeOf("instructions", instructions, input.clearInstructions),
      ...changeOf("model", input.model, input.defaultModel)
    }
    if (Object.keys(changes).length === 0) {
      return yield* new Failure.Usage({
        message: "Nothing to change",
        hint: "Give at least one of --name, --description, --clear-description, --instructions, --instructions-file, --clear-instructions, --model, --default-model."
      })
    }
    const payload = yield* Failure.validate(UpdateInternBody, changes)
    const client = yield* GatewayClient
    const record = yield* client.interns.update({ params: { internId: yield* InternView.resolveId(input.intern) }, payload })
    if (input.json) return yield* Output.json(record)
    yield* InternView.detail(record)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Change an intern's name, description, instructions or model; what you do not give stays"),
  Command.withExamples([
    { command: "switchyard interns update support-bot --model anthropic/claude-sonnet-4 --clear-description", description: "Switch the model and remove the description" },
    { command: "switchyard interns update support-bot --instructions-file prompt.md", description: "Replace the instructions from a file" }
  ])
)
