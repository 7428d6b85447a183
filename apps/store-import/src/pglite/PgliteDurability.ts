import type { PGlite } from "@electric-sql/pglite"
import { Context } from "effect"
import * as Fs from "node:fs"

/**
 * Makes PGlite's commits durable: a statement that committed has its WAL on disk before its answer
 * is read, without blocking the event loop on the disk for every commit.
 *
 * **Details**
 *
 * PGlite starts Postgres with `-F` (fsync off), and its Node filesystem (Emscripten's NODEFS) has
 * no fsync at all: a commit reaches the operating system but not the disk. Here Postgres runs with
 * `fsync=on` and `wal_sync_method=fsync` (Emscripten's `fdatasync` is a no-op, its `fsync` calls the
 * filesystem's), and the filesystem gets an fsync:
 *
 * - a WAL file's fsync (a commit) is only noted; `flush` then runs `fdatasync` on the noted files in
 *   libuv's thread pool, so the event loop keeps serving while the disk works. The store client calls
 *   `flush` after every batch of statements and before it hands back the answer, so everything that
 *   batch committed (for the accounting, a whole group-committed batch of holds and settlements)
 *   shares one disk flush;
 * - any other fsync (a checkpoint's data files, `pg_control`, directories) runs at once, after the
 *   noted WAL files were flushed, so Postgres's write-ahead order holds on disk too.
 *
 * **Gotchas**
 *
 * - Postgres's start (and a crash recovery's end-of-recovery checkpoint) runs before the filesystem
 *   gets its fsync; the first checkpoint afterwards, or the next commit's flush, makes it durable.
 * - A file Postgres closes with a noted or in-flight flush is synced at once before it is closed,
 *   so a descriptor is never flushed after it was reused.
 */

/**
 * Set to `true` around a statement whose answer may leave before its commit is on disk: what it
 * wrote is worthless after a power loss (a hold dies with its process). It still reaches the disk
 * with the next flush. Statements that committed nothing never wait. No effect on PostgreSQL.
 */
export const NoDiskWait = Context.Reference<boolean>("switchyard/store/NoDiskWait", { defaultValue: () => false })

/** Where PGlite mounts the data directory inside its filesystem. */
const walPrefix = "/pglite/data/pg_wal/"

/** The Postgres settings durability needs; `-F` (fsync off) is dropped from the start parameters. */
export const settings: ReadonlyArray<string> = ["fsync=on", "wal_sync_method=fsync"]

/** PGlite's start parameters without `-F`. */
export const startParams = (defaults: ReadonlyArray<string>): Array<string> => defaults.filter((param) => param !== "-F")

interface EmscriptenStream {
  readonly path: string
  readonly nfd: number
}

interface StreamOps {
  fsync?: (stream: EmscriptenStream) => number
  close: (stream: EmscriptenStream) => void
}

const fdatasync = (fd: number) =>
  new Promise<void>((resolve, reject) => Fs.fdatasync(fd, (error) => (error === null ? resolve() : reject(error))))

export class PgliteDurability {
  /** WAL descriptors with a commit not yet on disk. */
  private noted = new Set<number>()
  /** WAL descriptors whose flush is running. */
  private readonly inFlight = new Set<number>()
  /** The running flush, if any. */
  private running: Promise<void> | undefined
  /** Disk flushes of WAL done so far (one per `flush` that found commits to flush). */
  flushes = 0
  /** Commits noted so far: a statement that did not change it committed nothing. */
  commits = 0

  /** Gives PGlite's Node filesystem its fsync (see the module's description). */
  static install(pglite: PGlite): PgliteDurability {
    const durability = new PgliteDurability()
    // Emscripten's Node filesystem is on the module at run time; PGlite's types do not name it.
    const nodefs: { readonly stream_ops: StreamOps } = Reflect.get(pglite.Module, "NODEFS")
    const ops = nodefs.stream_ops
    const close = ops.close
    ops.fsync = (stream) => {
      if (stream.path.startsWith(walPrefix)) {
        durability.noted.add(stream.nfd)
        durability.commits++
        return 0
      }
      durability.flushNow()
      Fs.fsyncSync(stream.nfd)
      return 0
    }
    ops.close = (stream) => {
      if (durability.noted.delete(stream.nfd) || durability.inFlight.has(stream.nfd)) Fs.fdatasyncSync(stream.nfd)
      close(stream)
    }
    return durability
  }

  /** Flushes the noted WAL files at once, blocking (before a data file's fsync). */
  private flushNow() {
    for (const fd of this.noted) Fs.fdatasyncSync(fd)
    this.noted.clear()
  }

  /**
   * Resolves once every commit made so far is on disk. Concurrent callers share the flush that
   * covers them; a commit noted while a flush runs gets the next one.
   */
  async flush(): Promise<void> {
    while (this.noted.size > 0 || this.running !== undefined) {
      if (this.running !== undefined) {
        await this.running
        continue
      }
      const fds = [...this.noted]
      this.noted = new Set()
      for (const fd of fds) this.inFlight.add(fd)
      this.flushes++
      this.running = Promise.all(fds.map(fdatasync)).then(() => undefined).finally(() => {
        for (const fd of fds) this.inFlight.delete(fd)
        this.running = undefined
      })
      await this.running
      return
    }
  }
}
