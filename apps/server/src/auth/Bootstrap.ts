import { Config, Console, Data, Effect, Option, Redacted } from "effect"
import * as FirstStart from "../store/keys/FirstStart.ts"
import * as KeySecret from "./KeySecret.ts"
import * as MintManagementKey from "./MintManagementKey.ts"

type FirstStartStatements = Effect.Success<typeof FirstStart.make>

const variables = {
  managementKey: "SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY",
  apiKey: "SWITCHYARD_BOOTSTRAP_API_KEY"
} as const

const BootstrapConfig = Config.all({
  managementKey: Config.option(Config.Redacted(variables.managementKey)),
  apiKey: Config.option(Config.Redacted(variables.apiKey))
})

/**
 * A bootstrap secret that no key could ever authenticate with. Its message is written to standard
 * error as one line where it is raised, so the runtime does not log it again.
 */
export class BootstrapSecretInvalid extends Data.TaggedError("BootstrapSecretInvalid")<{ readonly message: string }> {}

type Secrets = {
  readonly managementKey: Option.Option<Redacted.Redacted<string>>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
}

/**
 * The first-start key secrets given through the environment (an empty variable counts as unset),
 * as given: they are held to the rule every key obeys only when they are used ({@link checked}),
 * so a secret left in the environment after the first start never stops a later one.
 */
const givenSecrets: Effect.Effect<Secrets, Config.ConfigError> = Effect.map(BootstrapConfig, (config) => {
  const given = (value: Option.Option<Redacted.Redacted<string>>) => Option.filter(value, (s) => Redacted.value(s).length > 0)
  return { managementKey: given(config.managementKey), apiKey: given(config.apiKey) }
})

/** The secrets about to become the first keys, each held to the rule every key obeys. Never prints a value. */
const checked = (secrets: Secrets): Effect.Effect<Secrets, BootstrapSecretInvalid> => {
  // The start-up failure report (StartupFailure.ts) prints the message as the one line on stderr.
  const refuse = (message: string) => Effect.fail(new BootstrapSecretInvalid({ message }))
  for (const name of ["managementKey", "apiKey"] as const) {
    const secret = secrets[name]
    if (Option.isSome(secret) && !KeySecret.isWellFormed(Redacted.value(secret.value))) {
      return refuse(
        `${variables[name]} must be ${KeySecret.rule}, the rule every key obeys (it has ${[...Redacted.value(secret.value)].length} characters); unset it to have a key generated`
      )
    }
  }
  if (
    Option.isSome(secrets.managementKey) && Option.isSome(secrets.apiKey) &&
    Redacted.value(secrets.managementKey.value) === Redacted.value(secrets.apiKey.value)
  ) {
    return refuse(`${variables.apiKey} must differ from ${variables.managementKey}: every key has its own secret`)
  }
  return Effect.succeed(secrets)
}

export interface Bootstrapped {
  readonly workspaceId: string
  readonly userId: string
  readonly managementKey: Redacted.Redacted<string>
  readonly apiKey: Redacted.Redacted<string>
  /** Which of the two secrets were generated here (and so may be shown once). */
  readonly generated: { readonly managementKey: boolean; readonly apiKey: boolean }
}

/**
 * A bootstrap secret given to a store that already has its keys is not used: one warning line per
 * variable says so and names the way to a new management key. A secret that already is one of the
 * store's keys (a deployment that sets the variable on every start) is in effect and says nothing.
 */
const warnIgnored = (store: FirstStartStatements, given: Secrets) =>
  Effect.forEach(["managementKey", "apiKey"] as const, (name) =>
    Effect.gen(function*() {
      const secret = given[name]
      if (Option.isNone(secret)) return
      if (yield* store.liveKey(KeySecret.hash(Redacted.value(secret.value)))) return
      yield* Effect.logWarning(
        `${variables[name]} is ignored: it applies only to the first start, on an empty store, and this store already has its workspace and keys. ` +
          (name === "managementKey"
            ? `To get a new management key, stop the gateway and run \`${MintManagementKey.command}\` (with PostgreSQL it may keep running).`
            : "Make an API key with a management key instead (POST /api/v1/keys).")
      )
    }), { discard: true })

/**
 * On an empty store: the workspace `default`, its first user, one management key and one standard
 * key. Runs under a transaction-scoped advisory lock, so replicas starting together create them
 * once. Returns `None` when the store already had a workspace. A given secret is checked here,
 * when it is about to be used, and only then: a bad one fails the first start before anything is
 * written.
 */
export const bootstrap = Effect.fn("Bootstrap.bootstrap")(function*() {
  const store = yield* FirstStart.make
  const given = yield* givenSecrets
  return yield* store.locked(Effect.gen(function*() {
    if ((yield* store.workspaces) > 0) {
      yield* warnIgnored(store, given)
      return Option.none<Bootstrapped>()
    }
    const secrets = yield* checked(given)
    const generate = () => Redacted.make(KeySecret.generate())
    const managementKey = Option.getOrElse(secrets.managementKey, generate)
    const apiKey = Option.getOrElse(secrets.apiKey, generate)
    const key = (kind: "management" | "standard", name: string, secret: Redacted.Redacted<string>): FirstStart.FirstKey => ({
      kind,
      name,
      hash: KeySecret.hash(Redacted.value(secret)),
      label: KeySecret.label(Redacted.value(secret))
    })
    const { workspaceId, userId } = yield* store.create([
      key("management", "Bootstrap management key", managementKey),
      key("standard", "Bootstrap API key", apiKey)
    ])
    const generated = { managementKey: Option.isNone(given.managementKey), apiKey: Option.isNone(given.apiKey) }
    return Option.some<Bootstrapped>({ workspaceId, userId, managementKey, apiKey, generated })
  }))
})

/**
 * Prints the first-start keys the gateway generated once, on standard output (never through the
 * logger). Secrets given through the environment are never printed.
 */
export const announce = (keys: Bootstrapped) => {
  const line = (name: "managementKey" | "apiKey") =>
    keys.generated[name] ? Redacted.value(keys[name]) : `from ${variables[name]} (not printed)`
  const allGenerated = keys.generated.managementKey && keys.generated.apiKey
  return Console.log(
    [
      "",
      `Switchyard created the workspace \`default\` and its first keys. ${allGenerated ? "They are" : "Generated secrets are"} shown only this once:`,
      `  management key: ${line("managementKey")}`,
      `  API key:        ${line("apiKey")}`,
      ""
    ].join("\n")
  )
}
