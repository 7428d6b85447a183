import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { tempDir } from "./TestServer.ts"

/**
 * A 4 MB tmpfs at a new directory, where this machine lets the test mount one (Linux, and the
 * right to mount); `undefined` elsewhere, for the test to skip with a line saying why.
 */
export const mount = (prefix: string): string | undefined => {
  if (process.platform !== "linux") return undefined
  const dir = tempDir(prefix)
  const mounted = ChildProcess.spawnSync("mount", ["-t", "tmpfs", "-o", "size=4m", "tmpfs", dir], { stdio: "ignore" })
  if (mounted.status === 0) return dir
  Fs.rmSync(dir, { recursive: true, force: true })
  return undefined
}

/** Unmounts a disk {@link mount} made and removes its directory. */
export const unmount = (dir: string): void => {
  ChildProcess.spawnSync("umount", [dir], { stdio: "ignore" })
  Fs.rmSync(dir, { recursive: true, force: true })
}

/** Fills the file system at `dir` with one file until a write fails for space; returns the file. */
export const fill = (dir: string): string => {
  const file = NodePath.join(dir, "filler")
  const fd = Fs.openSync(file, "w")
  const chunk = Buffer.alloc(64 * 1024, 1)
  try {
    for (;;) Fs.writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error
  } finally {
    Fs.closeSync(fd)
  }
  return file
}
