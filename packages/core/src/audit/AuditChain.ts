/**
 * The audit log's hash chain: what one entry is, the one canonical text its hash covers, and how a
 * run of stored entries is checked link by link.
 *
 * **Details**
 *
 * Each entry stores the SHA-256 (lowercase hex) of the entry before it (`prev_hash`; the first
 * entry's is {@link genesis}) and its own `hash`, the SHA-256 of {@link canonical}: a JSON array of
 * every stored field in a fixed order, `before` and `after` as the JSON text stored, not re-encoded.
 * Changing any stored field of an entry breaks its own hash; deleting or reordering entries breaks
 * the next entry's `prev_hash`.
 *
 * **Gotchas**
 *
 * The hash function is passed in (core performs no I/O and carries no crypto binding); the server
 * passes Node's SHA-256.
 *
 * @since 0.1.0
 */

/**
 * One stored entry of the audit log, as the store keeps it (`before` and `after` as JSON text).
 *
 * @since 0.1.0
 */
export interface StoredEntry {
  readonly id: number
  readonly at: number
  readonly actor_key_hash: string | null
  readonly actor_key_name: string | null
  readonly actor_user_id: string | null
  readonly workspace_id: string | null
  readonly action: string
  readonly target_type: string
  readonly target_id: string
  readonly before: string | null
  readonly after: string | null
  readonly ip: string | null
  readonly request_id: string | null
  readonly prev_hash: string
  /** The person of a single sign-on session (`{ sub, email, name }` as JSON text), else `null` or absent. */
  readonly actor_user?: string | null
  /** The single sign-on session the entry was made through, else `null` or absent. */
  readonly actor_session_id?: string | null
}

/**
 * The `prev_hash` of the first entry.
 *
 * @since 0.1.0
 */
export const genesis = "0".repeat(64)

/**
 * The text an entry's hash covers: every stored field but the hash itself, in a fixed order. An
 * entry made through a session adds its person and session at the end; one without (every entry
 * written before sessions existed) covers the same text as it always did, so its hash still holds.
 *
 * @since 0.1.0
 */
export const canonical = (entry: StoredEntry): string => {
  const person = entry.actor_user ?? null
  const session = entry.actor_session_id ?? null
  const base = [
    "switchyard-audit-v1",
    entry.id,
    entry.at,
    entry.actor_key_hash,
    entry.actor_key_name,
    entry.actor_user_id,
    entry.workspace_id,
    entry.action,
    entry.target_type,
    entry.target_id,
    entry.before,
    entry.after,
    entry.ip,
    entry.request_id,
    entry.prev_hash
  ]
  return JSON.stringify(person === null && session === null ? base : [...base, person, session])
}

/**
 * Where a chain breaks: the entry's id and why.
 *
 * @since 0.1.0
 */
export interface Broken {
  readonly id: number
  readonly reason: "hash_mismatch" | "prev_hash_mismatch"
}

/**
 * Checks a run of entries in id order, continuing from the hash of the entry before the run
 * (`previous`, {@link genesis} for the first run). Returns the first broken link, if any, and
 * the hash to continue from.
 *
 * @since 0.1.0
 */
export const check = (
  entries: ReadonlyArray<StoredEntry & { readonly hash: string }>,
  previous: string,
  sha256: (text: string) => string
): { readonly broken: Broken | undefined; readonly last: string } => {
  let last = previous
  for (const entry of entries) {
    if (entry.prev_hash !== last) return { broken: { id: entry.id, reason: "prev_hash_mismatch" }, last }
    if (sha256(canonical(entry)) !== entry.hash) return { broken: { id: entry.id, reason: "hash_mismatch" }, last }
    last = entry.hash
  }
  return { broken: undefined, last }
}

const secretField = /(^|_)(key|secret|token|password|api_key|authorization)$/iu

/**
 * A value with its secrets taken out, for the `before` and `after` of an entry: the value of
 * every field named like a secret (`key`, `api_key`, `secret`, `token`, `password`...) becomes
 * `"[redacted]"`, at any depth. Objects such as `{ "set": true, "last4": "…" }` that only say
 * whether a secret is set are kept.
 *
 * @since 0.1.0
 */
export const redact = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(redact)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(value)) {
    const shown = field !== null && typeof field === "object" && !Array.isArray(field) && "set" in field
    out[name] = secretField.test(name) && !shown && field !== null && field !== undefined ? "[redacted]" : redact(field)
  }
  return out
}
