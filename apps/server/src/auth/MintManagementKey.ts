/**
 * The way back from a lost management key: `switchyard-server mint-management-key`, run against
 * the gateway's store (the SQLite store of the data directory or `DATABASE_URL`), makes a new management key
 * for a workspace's first administrator and prints its secret once. It needs no key: whoever can
 * open the store already holds everything a key guards. On the embedded store it runs only while no gateway
 * holds the data directory (the lock, DataDirLock.ts); on PostgreSQL it works beside running
 * gateways, which accept the new key at once (unknown hashes are never kept, ApiKeyStoreLive.ts).
 */
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Console, Data, Effect } from "effect"
import { DataDirLocked } from "../store/sqlite/DataDirLock.ts"
import * as FirstStart from "../store/keys/FirstStart.ts"
import * as KeySecret from "./KeySecret.ts"

/** The command an operator runs, as the README and the start-up warnings spell it. */
export const command = "npx -y pnpm@10 mint-management-key"

class MintRefused extends Data.TaggedError("MintRefused")<{ readonly message: string }> {}

export interface Minted {
  readonly workspace: string
  readonly secret: string
  readonly hash: string
}

/** Makes a management key in the workspace `slug`, owned by its first administrator. */
export const mint = Effect.fn("MintManagementKey.mint")(function*(options: { readonly workspace: string; readonly name: string }) {
  const store = yield* FirstStart.make
  const keys = yield* ApiKeyStore
  const owner = yield* store.firstAdministrator(options.workspace)
  if (owner === undefined) {
    return yield* new MintRefused({
      message: (yield* store.liveWorkspaces) === 0
        ? "the store has no workspace yet: start the gateway once, it creates the workspace `default` and prints its first keys"
        : `no workspace \`${options.workspace}\` with an administrator in this store (--workspace names a workspace by its slug)`
    })
  }
  const secret = KeySecret.generate()
  const hash = KeySecret.hash(secret)
  yield* keys.create({
    hash,
    kind: "management",
    name: options.name,
    label: KeySecret.label(secret),
    userId: owner.user_id,
    workspaceId: owner.workspace_id,
    limitNanos: null,
    limitReset: null,
    includeByokInLimit: false,
    expiresAt: null,
    externalUser: null,
    now: new Date(yield* Clock.currentTimeMillis)
  })
  return { workspace: options.workspace, secret, hash } satisfies Minted
})

/** Prints the minted secret once, on standard output (never through the logger). */
export const announce = (minted: Minted) =>
  Console.log([
    `Switchyard made a management key for the workspace \`${minted.workspace}\`. It is shown only this once:`,
    `  management key: ${minted.secret}`
  ].join("\n"))

/**
 * A running gateway holds the data directory: the command says so and leaves the store alone (one
 * gateway per data directory, DataDirLock.ts).
 */
export const refuseWhileLocked = <A, R>(self: Effect.Effect<A, unknown, R>): Effect.Effect<A, unknown, R> =>
  Effect.catch(self, (error) =>
    Effect.fail(
      error instanceof DataDirLocked
        ? new MintRefused({
          message: `a gateway is running on ${error.dataDir} (${error.holder}); one gateway runs per data directory: ` +
            "stop the gateway, run this again, then start it (on PostgreSQL this works while gateways run)"
        })
        : error
    ))
