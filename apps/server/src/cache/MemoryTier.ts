/**
 * The embeddings cache's tier in this process's memory: the most recently used entries, bounded
 * by the bytes they take, each kept at most a time to live (read on the cache's clock), so that a
 * hit on a hot item reads nothing from the store.
 *
 * **Details**
 *
 * - An entry's size: its vector's bytes as kept, plus {@link entryOverheadBytes} for its key, its
 *   objects and the tier's own bookkeeping.
 * - The default bound: a sixteenth of the process's cgroup memory limit (as `http/MemoryBudget.ts`
 *   reads it), at most 64 MiB; 32 MiB without a limit. 16 MiB in a 256 MiB container.
 * - The least recently used go first when a new entry would pass the bound; an entry larger than
 *   the whole bound is not kept.
 */
import { LRUCache } from "lru-cache"

/** What the tier keeps: an entry of the cache, sized by its kept vector's bytes. */
interface Kept {
  readonly vector: { readonly json: Uint8Array }
}

const MiB = 1024 * 1024

/** What an entry takes beside its vector's bytes: its key's text, its objects, the tier's nodes (454 measured). */
export const entryOverheadBytes = 512

/** The bytes the tier may hold by default, for a cgroup memory limit (`undefined`: none). */
export const defaultBytes = (limitBytes: number | undefined): number =>
  limitBytes === undefined ? 32 * MiB : Math.min(64 * MiB, Math.floor(limitBytes / 16))

/** The bytes an entry is charged in the tier. */
export const sizeOf = (entry: Kept): number => entry.vector.json.byteLength + entryOverheadBytes

export interface MemoryTier<Entry extends Kept> {
  readonly get: (key: string) => Entry | undefined
  readonly set: (key: string, entry: Entry) => void
  readonly drop: (keys: ReadonlyArray<string>) => void
}

/**
 * A tier holding at most `maxBytes` (and at most `maxEntries`, when given), each entry at most
 * `ttlMillis` after it was set, by `now`. A bound of 0 holds nothing.
 */
export const make = <Entry extends Kept>(options: {
  readonly maxBytes: number
  readonly maxEntries: number | undefined
  readonly ttlMillis: number
  readonly now: () => number
}): MemoryTier<Entry> => {
  if (options.maxBytes <= 0 || options.maxEntries === 0) {
    return { get: () => undefined, set: () => {}, drop: () => {} }
  }
  const lru = new LRUCache<string, Entry>({
    maxSize: options.maxBytes,
    ...(options.maxEntries === undefined ? {} : { max: options.maxEntries }),
    sizeCalculation: sizeOf,
    ttl: options.ttlMillis,
    // Every read asks the clock: the cache's clock is Effect's, a test's `TestClock` included.
    ttlResolution: 0,
    perf: { now: options.now }
  })
  return {
    get: (key) => lru.get(key),
    set: (key, entry) => {
      lru.set(key, entry)
    },
    drop: (keys) => {
      for (const key of keys) lru.delete(key)
    }
  }
}
