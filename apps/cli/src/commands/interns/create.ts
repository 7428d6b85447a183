import { GatewayClient } from "@switchyard/client/GatewayClient"
import { CreateInternBody } from "@switchyard/core/schema/Intern"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as InternView from "./InternView.ts"

export const create = Command.make(
  "create",
  {
    name: Argument.String("name").pipe(Argument.withDescription("Name: 2 to 17 lowercase letters and digits in hyphen-separated groups")),
    description: Flag.String("description").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("What the intern is for"), Flag.optional),
    instructions: Flag.String("instructions").pipe(Flag.withMetavar("TEXT"), Flag.withDescription("Standing instructions"), Flag.optional),
    instructionsFile: Flag.String("instructions-file").pipe(Flag.withMetavar("PATH"), Flag.withDescription("Read the instructions from a file"), Flag.optional),
    model: Flag.String("model").pipe(Flag.withMetavar("VENDOR/MODEL"), Flag.withDescription("Model the intern runs (default: the workspace's)"), Flag.optional),
    vault: Flag.String("vault").pipe(Flag.withMetavar("ID"), Flag.withDescription("Borrow the vault of another intern"), Flag.optional),
    provision: SharedFlags.toggle("provision", "Start provisioning right away"),
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    if (Option.isSome(input.instructions) && Option.isSome(input.instructionsFile)) {
      return yield* new Failure.Usage({ message: "Give --instructions or --instructions-file, not both" })
    }
    const instructions = Option.isSome(input.instructionsFile) ? Option.some(yield* InternView.readText(input.instructionsFile.value)) : input.instructions
    const payload = yield* Failure.validate(CreateInternBody, {
      name: input.name,
      ...(Option.isSome(input.description) ? { description: input.description.value } : {}),
      ...(Option.isSome(instructions) ? { instructions: instructions.value } : {}),
      ...(Option.isSome(input.model) ? { model: input.model.value } : {}),
      ...(Option.isSome(input.vault) ? { vault_id: input.vault.value } : {}),
      ...(input.provision ? { provision: true } : {})
    })
    const client = yield* GatewayClient
    const record = yield* client.interns.create({ payload })
    if (input.json) return yield* Output.json(record)
    yield* InternView.detail(record)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Create an intern"),
  Command.withExamples([
    { command: "switchyard interns create support-bot --description \"Answers tickets\" --instructions-file prompt.md --provision", description: "Create and provision an intern" }
  ])
)
