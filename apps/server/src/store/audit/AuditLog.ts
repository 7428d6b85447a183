import { Caller } from "@switchyard/core/api/Authorization"
import * as AuditChain from "@switchyard/core/audit/AuditChain"
import type { AuditEntry, AuditVerification } from "@switchyard/core/schema/Audit"
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"

/**
 * What a management action records: its `<resource>.<verb>`, its target, the workspace it acted
 * in (`null` for instance-wide resources such as providers) and the fields before and after
 * (redacted here, whatever the caller passes).
 */
export interface AuditDraft {
  readonly action: string
  readonly target: { readonly type: string; readonly id: string }
  readonly workspaceId: string | null
  readonly before?: unknown
  readonly after?: unknown
}

/** The filters of a listing, already checked; `workspaceId` set limits it to one workspace. */
interface AuditFilter {
  readonly workspaceId: string | undefined
  readonly action?: string | undefined
  readonly targetType?: string | undefined
  readonly targetId?: string | undefined
  readonly actor?: string | undefined
  readonly since?: number | undefined
  readonly until?: number | undefined
  readonly cursor?: number | undefined
  readonly limit: number
}

/**
 * An entry as `audit_log` holds it: core's stored entry, with `before` and `after` in their
 * `_json` columns, its own hash, and the id and time as the driver gives them.
 */
type Row = Omit<AuditChain.StoredEntry, "id" | "at" | "before" | "after"> & {
  readonly id: number | string
  readonly at: number | string
  readonly before_json: string | null
  readonly after_json: string | null
  readonly hash: string
}

const sha256 = (text: string) => Crypto.createHash("sha256").update(text, "utf8").digest("hex")

const stored = ({ id, at, before_json, after_json, ...entry }: Row): AuditChain.StoredEntry & { readonly hash: string } => ({
  ...entry,
  id: Number(id),
  at: Number(at),
  before: before_json,
  after: after_json
})

const parsed = (text: string | null): unknown => {
  if (text === null) return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const toWire = (row: Row): AuditEntry => ({
  id: Number(row.id),
  at: new Date(Number(row.at)).toISOString(),
  actor: {
    key_hash: row.actor_key_hash,
    key_name: row.actor_key_name,
    user_id: row.actor_user_id,
    ...(row.actor_user === null || row.actor_user === undefined ? {} : { user: JSON.parse(row.actor_user) }),
    ...(row.actor_session_id === null || row.actor_session_id === undefined ? {} : { session_id: row.actor_session_id })
  },
  workspace_id: row.workspace_id,
  action: row.action,
  target: { type: row.target_type, id: row.target_id },
  before: parsed(row.before_json),
  after: parsed(row.after_json),
  ip: row.ip,
  request_id: row.request_id,
  prev_hash: row.prev_hash,
  hash: row.hash
})

const json = (value: unknown): string | null => (value === undefined || value === null ? null : JSON.stringify(AuditChain.redact(value)))

const verifyPage = 1000

/**
 * The audit log of management actions, append-only and hash-chained (`AuditChain`). A change and
 * its entry commit together: {@link AuditLogShape.recorded} runs the change and the append in one
 * transaction.
 */
export interface AuditLogShape {
  /**
   * Appends one entry, as the calling key (from the request being served) did it. Run inside the
   * change's transaction: the head row's update makes concurrent appends wait for each other.
   */
  readonly append: (draft: AuditDraft) => Effect.Effect<void, StoreUnavailable>
  /**
   * Runs `change` in a transaction; when it succeeds, appends the entry `describe` makes of its
   * result (none when it returns `undefined`: nothing changed) before the commit. A failure of
   * either rolls both back.
   */
  readonly recorded: <A, E, R>(
    change: Effect.Effect<A, E, R>,
    describe: (result: A) => AuditDraft | ReadonlyArray<AuditDraft> | undefined
  ) => Effect.Effect<A, E | StoreUnavailable, R>
  readonly list: (filter: AuditFilter) => Effect.Effect<{ readonly data: ReadonlyArray<AuditEntry>; readonly nextCursor: string | null }, StoreUnavailable>
  /** Checks every link of the chain, oldest first, and the head against the last entry. */
  readonly verify: Effect.Effect<AuditVerification, StoreUnavailable>
  /**
   * Checks the links after `from` (an entry found whole before, or `start`), and where the check
   * got to: the last entry found whole.
   */
  readonly verifyFrom: (from: ChainPoint) => Effect.Effect<AuditVerification & { readonly through: ChainPoint }, StoreUnavailable>
}

/** A point of the chain: an entry's id and hash (`start`: before the first entry). */
export interface ChainPoint {
  readonly id: number
  readonly hash: string
}

/** Before the first entry. */
export const start: ChainPoint = { id: 0, hash: AuditChain.genesis }

export class AuditLog extends Context.Service<AuditLog, AuditLogShape>()("@switchyard/server/store/AuditLog") {
  /**
   * `trustProxy`: the gateway sits behind a reverse proxy whose `X-Forwarded-For` names the
   * client (`SWITCHYARD_TRUST_PROXY`, read by the HTTP edge).
   */
  static readonly layer = (options: { readonly trustProxy: boolean }) => Layer.effect(
    AuditLog,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { trustProxy } = options

      const requestFacts = Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), Option.match({
        onNone: () => ({ ip: null, requestId: null }),
        onSome: (request) => {
          const forwarded = trustProxy ? request.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
          const ip = forwarded !== undefined && forwarded.length > 0 ? forwarded : Option.getOrNull(request.remoteAddress)
          const given = request.headers["x-request-id"]
          return {
            ip: ip === null ? null : ip.slice(0, 100),
            requestId: given !== undefined && given.length > 0 ? given.slice(0, 200) : Crypto.randomUUID()
          }
        }
      }))

      const append = (draft: AuditDraft) =>
        sql.withTransaction(Effect.gen(function*() {
          const caller = Option.getOrUndefined(yield* Effect.serviceOption(Caller))
          const facts = yield* requestFacts
          const person = caller?.person
          const keyName = caller === undefined || person !== undefined
            ? null
            : (yield* sql<{ name: string }>`SELECT name FROM api_keys WHERE id = ${caller.keyId}`)[0]?.name ?? null
          // Taking the head row first is what orders concurrent appends.
          const head = (yield* sql<{ seq: number | string; hash: string }>`UPDATE audit_head SET seq = seq + 1 WHERE id = 1
            RETURNING seq, hash`)[0]
          if (head === undefined) return yield* Effect.die(new Error("audit_head has no row: the 0016_audit_log migration did not run"))
          const entry: AuditChain.StoredEntry = {
            id: Number(head.seq),
            at: yield* Clock.currentTimeMillis,
            actor_key_hash: person === undefined ? caller?.keyHash ?? null : null,
            actor_key_name: keyName,
            actor_user_id: caller?.userId ?? null,
            workspace_id: draft.workspaceId,
            action: draft.action,
            target_type: draft.target.type,
            target_id: draft.target.id,
            before: json(draft.before),
            after: json(draft.after),
            ip: facts.ip,
            request_id: facts.requestId,
            prev_hash: head.hash,
            actor_user: person === undefined ? null : JSON.stringify({ sub: person.sub, email: person.email, name: person.name }),
            actor_session_id: person === undefined ? null : person.sessionId
          }
          const hash = sha256(AuditChain.canonical(entry))
          yield* sql`INSERT INTO audit_log (id, at, actor_key_hash, actor_key_name, actor_user_id, workspace_id, action,
              target_type, target_id, before_json, after_json, ip, request_id, prev_hash, hash, actor_user, actor_session_id)
            VALUES (${entry.id}, ${entry.at}, ${entry.actor_key_hash}, ${entry.actor_key_name}, ${entry.actor_user_id},
              ${entry.workspace_id}, ${entry.action}, ${entry.target_type}, ${entry.target_id}, ${entry.before}, ${entry.after},
              ${entry.ip}, ${entry.request_id}, ${entry.prev_hash}, ${hash}, ${entry.actor_user ?? null}, ${entry.actor_session_id ?? null})`
          yield* sql`UPDATE audit_head SET hash = ${hash} WHERE id = 1`
        })).pipe(fromSqlError("audit.append"))

      const recorded = <A, E, R>(
        change: Effect.Effect<A, E, R>,
        describe: (result: A) => AuditDraft | ReadonlyArray<AuditDraft> | undefined
      ): Effect.Effect<A, E | StoreUnavailable, R> =>
        sql.withTransaction(Effect.gen(function*() {
          const result = yield* change
          const drafts = describe(result)
          if (drafts !== undefined) {
            yield* Effect.forEach(Array.isArray(drafts) ? drafts : [drafts as AuditDraft], append, { discard: true })
          }
          return result
        })).pipe(fromSqlError("audit.transaction")) as Effect.Effect<A, E | StoreUnavailable, R>

      const list = (filter: AuditFilter) =>
        Effect.gen(function*() {
          const where = [
            filter.workspaceId === undefined ? undefined : sql`workspace_id = ${filter.workspaceId}`,
            filter.action === undefined
              ? undefined
              : filter.action.endsWith(".*")
              ? sql`action LIKE ${`${filter.action.slice(0, -2).replace(/[%_\\]/gu, "")}.%`}`
              : sql`action = ${filter.action}`,
            filter.targetType === undefined ? undefined : sql`target_type = ${filter.targetType}`,
            filter.targetId === undefined ? undefined : sql`target_id = ${filter.targetId}`,
            filter.actor === undefined ? undefined : sql`(actor_key_hash = ${filter.actor} OR actor_user_id = ${filter.actor})`,
            filter.since === undefined ? undefined : sql`at >= ${filter.since}`,
            filter.until === undefined ? undefined : sql`at < ${filter.until}`,
            filter.cursor === undefined ? undefined : sql`id < ${filter.cursor}`
          ].filter((fragment) => fragment !== undefined)
          const rows = yield* sql<Row>`SELECT * FROM audit_log ${where.length === 0 ? sql`` : sql`WHERE ${sql.and(where)}`}
            ORDER BY id DESC LIMIT ${filter.limit + 1}`
          const page = rows.slice(0, filter.limit)
          const last = page[page.length - 1]
          return {
            data: page.map(toWire),
            nextCursor: rows.length > filter.limit && last !== undefined ? String(last.id) : null
          }
        }).pipe(fromSqlError("audit.list"))

      const verifyFrom = (from: ChainPoint) =>
        Effect.gen(function*() {
          // The head first: entries appended while this runs are left for the next check.
          const head = (yield* sql<{ seq: number | string; hash: string }>`SELECT seq, hash FROM audit_head WHERE id = 1`)[0]
          const last = Number(head?.seq ?? 0)
          let previous = from.hash
          let after = from.id
          let checked = 0
          while (true) {
            const rows = (yield* sql<Row>`SELECT * FROM audit_log WHERE id > ${after} AND id <= ${last}
              ORDER BY id LIMIT ${verifyPage}`).map(stored)
            const result = AuditChain.check(rows, previous, sha256)
            if (result.broken !== undefined) {
              const at = result.broken.id
              const whole = rows.filter((r) => r.id < at)
              const last = whole.at(-1)
              const through = last === undefined ? { id: after, hash: previous } : { id: last.id, hash: last.hash }
              return { ok: false, checked: checked + whole.length, first_broken: result.broken, through }
            }
            checked += rows.length
            previous = result.last
            if (rows.length > 0) after = rows[rows.length - 1]!.id
            if (rows.length < verifyPage) break
          }
          // Entries cut off the end leave the head naming a hash no entry has: the first missing one is broken.
          if (head !== undefined && (after < last || head.hash !== previous)) {
            return { ok: false, checked, first_broken: { id: after + 1, reason: "prev_hash_mismatch" as const }, through: { id: after, hash: previous } }
          }
          return { ok: true, checked, through: { id: after, hash: previous } }
        }).pipe(fromSqlError("audit.verify"))

      const verify = Effect.map(verifyFrom(start), ({ through: _, ...verification }) => verification as AuditVerification)

      return AuditLog.of({ append, recorded, list, verify, verifyFrom })
    })
  )
}
