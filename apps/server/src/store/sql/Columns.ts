/**
 * How a repository reads the columns whose value differs by store, so that one query text serves
 * both: PostgreSQL answers `boolean` and `timestamptz` as `boolean` and `Date`; SQLite keeps them
 * as integers (0/1, epoch milliseconds; see `store/database/migrations/SqliteBaseline.ts`).
 */

/** A boolean column as read from either store. */
export type Flag = boolean | number

/** A timestamp column as read from either store. */
export type Instant = Date | number | string

export const flag = (value: Flag): boolean => value === true || value === 1

export const flagOrNull = (value: Flag | null): boolean | null => (value === null ? null : flag(value))

export const instant = (value: Instant): Date => (value instanceof Date ? value : new Date(value))

export const iso = (value: Instant): string => instant(value).toISOString()

export const isoOrNull = (value: Instant | null): string | null => (value === null ? null : iso(value))
