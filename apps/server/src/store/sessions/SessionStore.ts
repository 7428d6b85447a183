/**
 * Single sign-on sessions in the store, so every replica honours a sign-out at once. A session is
 * found by the SHA-256 of its cookie's value; the value is never stored. The refresh token is
 * sealed with the store's credential key, bound to its session.
 */
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import { CredentialCipher } from "../credentials/CredentialCipher.ts"

export type InstanceRole = "admin" | "viewer" | null
export interface WorkspaceRole {
  readonly id: string
  readonly role: "admin" | "member"
}

export interface Session {
  readonly id: string
  readonly userId: string
  readonly sub: string
  readonly email: string | null
  readonly name: string | null
  readonly csrfToken: string
  readonly role: InstanceRole
  /** The workspaces their groups map (ids), beside the instance role's reach. */
  readonly workspaces: ReadonlyArray<WorkspaceRole>
  /** Their home workspace (where their keys go unless they name one); `null` when they reach none. */
  readonly homeWorkspaceId: string | null
  readonly refreshToken: Option.Option<Redacted.Redacted<string>>
  readonly createdAt: number
  readonly lastSeenAt: number
  readonly expiresAt: number
  readonly rolesCheckedAt: number
  readonly endedAt: number | null
}

interface Row {
  readonly id: string
  readonly user_id: string
  readonly sub: string
  readonly email: string | null
  readonly name: string | null
  readonly csrf_token: string
  readonly role: string | null
  readonly workspaces_json: string
  readonly home_workspace_id: string | null
  readonly refresh_token: string | null
  readonly created_at: number | string
  readonly last_seen_at: number | string
  readonly expires_at: number | string
  readonly roles_checked_at: number | string
  readonly ended_at: number | string | null
}

/** What a new session starts with. */
export interface NewSession {
  readonly sub: string
  readonly email: string | null
  readonly name: string | null
  readonly role: InstanceRole
  readonly workspaces: ReadonlyArray<WorkspaceRole>
  readonly refreshToken: Redacted.Redacted<string> | undefined
  readonly now: number
  readonly expiresAt: number
}

/** The SHA-256 (hex) of a cookie's value: what the store keeps and looks up. */
const hashToken = (token: string) => Crypto.createHash("sha256").update(token, "utf8").digest("hex")

const columns = `id, user_id, sub, email, name, csrf_token, role, workspaces_json, home_workspace_id, refresh_token, created_at, last_seen_at,
  expires_at, roles_checked_at, ended_at`

/** The people single sign-on signed in: their gateway users and memberships. */
const people = (sql: SqlClient.SqlClient) => {
  const defaultWorkspace = Effect.map(
    sql<{ id: string }>`SELECT id FROM workspaces WHERE slug = 'default' AND deleted_at IS NULL`,
    (rows) => rows[0]?.id
  )

  /** The person's gateway user: the one recorded for their `sub`, else a new one. */
  const userOf = (sub: string, email: string | null, name: string | null, now: number) =>
    Effect.gen(function*() {
      const known = yield* sql<{ user_id: string }>`SELECT user_id FROM sso_people WHERE sub = ${sub}`
      if (known[0] !== undefined) {
        yield* sql`UPDATE sso_people SET email = ${email}, name = ${name} WHERE sub = ${sub}`
        return known[0].user_id
      }
      const home = yield* defaultWorkspace
      if (home === undefined) return yield* Effect.die(new Error("the workspace `default` is missing: first start did not run"))
      const userId = Crypto.randomUUID()
      yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${userId}, ${name ?? email ?? sub}, ${home})`
      yield* sql`INSERT INTO sso_people (sub, user_id, email, name, created_at) VALUES (${sub}, ${userId}, ${email}, ${name}, ${now})`
      return userId
    })

  /**
   * The memberships the roles give: an instance admin is an admin of every workspace, a viewer
   * a member of every one (read-only at the edge), else the mapped workspaces (by id or slug).
   */
  const syncMemberships = (userId: string, role: InstanceRole, workspaces: ReadonlyArray<WorkspaceRole>, now: number) =>
    Effect.gen(function*() {
      const live = yield* sql<{ id: string; slug: string }>`SELECT id, slug FROM workspaces WHERE deleted_at IS NULL`
      const wanted = new Map<string, "admin" | "member">()
      if (role !== null) for (const w of live) wanted.set(w.id, role === "admin" ? "admin" : "member")
      for (const w of workspaces) {
        const found = live.find((l) => l.id === w.id.toLowerCase() || l.slug === w.id)
        if (found !== undefined && wanted.get(found.id) !== "admin") wanted.set(found.id, w.role)
      }
      const resolved: Array<WorkspaceRole> = []
      for (const w of workspaces) {
        const found = live.find((l) => l.id === w.id.toLowerCase() || l.slug === w.id)
        if (found !== undefined && !resolved.some((r) => r.id === found.id)) resolved.push({ id: found.id, role: w.role })
      }
      const have = yield* sql<{ workspace_id: string; role: string }>`SELECT workspace_id, role FROM memberships WHERE user_id = ${userId}`
      for (const m of have) {
        const want = wanted.get(m.workspace_id)
        if (want === undefined) yield* sql`DELETE FROM memberships WHERE user_id = ${userId} AND workspace_id = ${m.workspace_id}`
        else if (want !== m.role) {
          yield* sql`UPDATE memberships SET role = ${want} WHERE user_id = ${userId} AND workspace_id = ${m.workspace_id}`
        }
      }
      for (const [workspaceId, want] of wanted) {
        if (have.some((m) => m.workspace_id === workspaceId)) continue
        yield* sql`INSERT INTO memberships (user_id, workspace_id, role, id, created_at)
          VALUES (${userId}, ${workspaceId}, ${want}, ${Crypto.randomUUID()}, ${new Date(now)})`
      }
      // Where their keys go unless they name a workspace: `default` when they reach it, else their first.
      const home = live.find((l) => l.slug === "default" && wanted.has(l.id))?.id ?? [...wanted.keys()][0]
      if (home !== undefined) yield* sql`UPDATE users SET default_workspace_id = ${home} WHERE id = ${userId}`
      return { workspaces: resolved as ReadonlyArray<WorkspaceRole>, home: home ?? null }
    })

  return { userOf, syncMemberships }
}

export class SessionStore extends Context.Service<SessionStore, {
  /** Records the person (a gateway user of their own), syncs their memberships, opens a session; the cookie's value. */
  readonly create: (session: NewSession) => Effect.Effect<{ readonly token: Redacted.Redacted<string>; readonly session: Session }, StoreUnavailable>
  /** The open session of a cookie's value (ended ones too: the caller checks `endedAt` and the times). */
  readonly find: (token: string) => Effect.Effect<Option.Option<Session>, StoreUnavailable>
  readonly get: (id: string) => Effect.Effect<Option.Option<Session>, StoreUnavailable>
  readonly touch: (id: string, now: number) => Effect.Effect<void, StoreUnavailable>
  /** New roles (and a new refresh token) read from the IdP; memberships synced. */
  readonly updateRoles: (
    session: Session,
    roles: { readonly role: InstanceRole; readonly workspaces: ReadonlyArray<WorkspaceRole> },
    refreshToken: Redacted.Redacted<string> | undefined,
    now: number
  ) => Effect.Effect<
    { readonly role: InstanceRole; readonly workspaces: ReadonlyArray<WorkspaceRole>; readonly homeWorkspaceId: string | null },
    StoreUnavailable
  >
  /** Ends sessions: by id, or every open one of a user; the ones it ended. */
  readonly end: (
    selector: { readonly id: string } | { readonly userId: string },
    now: number
  ) => Effect.Effect<ReadonlyArray<Session>, StoreUnavailable>
  /** Records a sign-in under way (its state, nonce and PKCE verifier), dropping ones older than `staleBefore`. */
  readonly begin: (
    pending: { readonly state: string; readonly nonce: string; readonly verifier: Redacted.Redacted<string> },
    now: number,
    staleBefore: number
  ) => Effect.Effect<void, StoreUnavailable>
  /** Takes a sign-in under way by its state, once: none when unknown, used or older than `staleBefore`. */
  readonly consume: (
    state: string,
    staleBefore: number
  ) => Effect.Effect<Option.Option<{ readonly nonce: string; readonly verifier: Redacted.Redacted<string> }>, StoreUnavailable>
  /** The open sessions (of one user when given), newest first. */
  readonly list: (userId: string | undefined, now: number) => Effect.Effect<ReadonlyArray<Session>, StoreUnavailable>
}>()("@switchyard/server/store/SessionStore") {
  static readonly layer = Layer.effect(
    SessionStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cipher = yield* CredentialCipher
      const aad = (id: string) => `sso_sessions:${id}:refresh_token`

      const toSession = (row: Row): Session => ({
        id: row.id,
        userId: row.user_id,
        sub: row.sub,
        email: row.email,
        name: row.name,
        csrfToken: row.csrf_token,
        role: row.role === "admin" || row.role === "viewer" ? row.role : null,
        workspaces: JSON.parse(row.workspaces_json) as ReadonlyArray<WorkspaceRole>,
        homeWorkspaceId: row.home_workspace_id,
        refreshToken: row.refresh_token === null ? Option.none() : cipher.open(row.refresh_token, aad(row.id)),
        createdAt: Number(row.created_at),
        lastSeenAt: Number(row.last_seen_at),
        expiresAt: Number(row.expires_at),
        rolesCheckedAt: Number(row.roles_checked_at),
        endedAt: row.ended_at === null ? null : Number(row.ended_at)
      })

      const { userOf, syncMemberships } = people(sql)

      const byId = (id: string) =>
        Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE id = ${id}`, (rows) =>
          Option.map(Option.fromNullishOr(rows[0]), toSession))

      const create = (s: NewSession) =>
        sql.withTransaction(Effect.gen(function*() {
          const userId = yield* userOf(s.sub, s.email, s.name, s.now)
          const synced = yield* syncMemberships(userId, s.role, s.workspaces, s.now)
          const id = Crypto.randomUUID()
          const token = Crypto.randomBytes(32).toString("base64url")
          const csrf = Crypto.randomBytes(24).toString("base64url")
          const sealed = s.refreshToken === undefined ? null : cipher.seal(s.refreshToken, aad(id))
          yield* sql`INSERT INTO sso_sessions (id, token_hash, user_id, sub, email, name, csrf_token, role, workspaces_json,
              home_workspace_id, refresh_token, created_at, last_seen_at, expires_at, roles_checked_at)
            VALUES (${id}, ${hashToken(token)}, ${userId}, ${s.sub}, ${s.email}, ${s.name}, ${csrf}, ${s.role},
              ${JSON.stringify(synced.workspaces)}, ${synced.home}, ${sealed}, ${s.now}, ${s.now}, ${s.expiresAt}, ${s.now})`
          const session = Option.getOrThrow(yield* byId(id))
          return { token: Redacted.make(token), session }
        })).pipe(fromSqlError("sessions"))

      const find = (token: string) =>
        Effect.map(sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE token_hash = ${hashToken(token)}`, (rows) =>
          Option.map(Option.fromNullishOr(rows[0]), toSession)).pipe(fromSqlError("sessions"))

      const touch = (id: string, now: number) =>
        // At most one write a minute per session: the idle bound is counted in hours.
        sql`UPDATE sso_sessions SET last_seen_at = ${now} WHERE id = ${id} AND last_seen_at <= ${now - 60_000}`.pipe(
          Effect.asVoid,
          fromSqlError("sessions")
        )

      const updateRoles: SessionStore["Service"]["updateRoles"] = (session, roles, refreshToken, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const synced = yield* syncMemberships(session.userId, roles.role, roles.workspaces, now)
          const sealed = refreshToken === undefined ? undefined : cipher.seal(refreshToken, aad(session.id))
          const mapped = JSON.stringify(synced.workspaces)
          yield* sealed === undefined
            ? sql`UPDATE sso_sessions SET role = ${roles.role}, workspaces_json = ${mapped}, home_workspace_id = ${synced.home},
                roles_checked_at = ${now} WHERE id = ${session.id}`
            : sql`UPDATE sso_sessions SET role = ${roles.role}, workspaces_json = ${mapped}, home_workspace_id = ${synced.home},
                roles_checked_at = ${now}, refresh_token = ${sealed} WHERE id = ${session.id}`
          return { role: roles.role, workspaces: synced.workspaces, homeWorkspaceId: synced.home }
        })).pipe(fromSqlError("sessions"))

      const end: SessionStore["Service"]["end"] = (selector, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const rows = "id" in selector
            ? yield* sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE id = ${selector.id} AND ended_at IS NULL`
            : yield* sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE user_id = ${selector.userId} AND ended_at IS NULL`
          for (const row of rows) {
            yield* sql`UPDATE sso_sessions SET ended_at = ${now}, refresh_token = NULL WHERE id = ${row.id}`
          }
          return rows.map(toSession)
        })).pipe(fromSqlError("sessions"))

      const list = (userId: string | undefined, now: number) =>
        Effect.map(
          userId === undefined
            ? sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE ended_at IS NULL AND expires_at > ${now}
                ORDER BY created_at DESC`
            : sql<Row>`SELECT ${sql.literal(columns)} FROM sso_sessions WHERE ended_at IS NULL AND expires_at > ${now}
                AND user_id = ${userId} ORDER BY created_at DESC`,
          (rows) => rows.map(toSession)
        ).pipe(fromSqlError("sessions"))

      const begin: SessionStore["Service"]["begin"] = (pending, now, staleBefore) =>
        Effect.gen(function*() {
          const stateHash = hashToken(pending.state)
          yield* sql`DELETE FROM sso_sign_ins WHERE created_at < ${staleBefore}`
          yield* sql`INSERT INTO sso_sign_ins (state_hash, nonce, verifier, created_at)
            VALUES (${stateHash}, ${pending.nonce}, ${cipher.seal(pending.verifier, `sso_sign_ins:${stateHash}`)}, ${now})`
        }).pipe(fromSqlError("sessions"))

      const consume: SessionStore["Service"]["consume"] = (state, staleBefore) =>
        Effect.gen(function*() {
          const stateHash = hashToken(state)
          // One statement: of two callbacks with the same state, on any replicas, one gets the row.
          const rows = yield* sql<{ nonce: string; verifier: string; created_at: number | string }>`DELETE FROM sso_sign_ins
            WHERE state_hash = ${stateHash} RETURNING nonce, verifier, created_at`
          const row = rows[0]
          if (row === undefined || Number(row.created_at) < staleBefore) return Option.none()
          return Option.map(cipher.open(row.verifier, `sso_sign_ins:${stateHash}`), (verifier) => ({ nonce: row.nonce, verifier }))
        }).pipe(fromSqlError("sessions"))

      return SessionStore.of({
        begin,
        consume,
        create,
        find,
        get: (id) => byId(id).pipe(fromSqlError("sessions")),
        touch,
        updateRoles,
        end,
        list
      })
    })
  )
}
