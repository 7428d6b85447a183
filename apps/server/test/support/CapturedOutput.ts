const jsonLines = (text: string): Array<any> => text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))

/**
 * What a gateway running in this process writes to standard output while `f` runs, kept rather
 * than printed: the text as written, and its JSON log lines parsed. `f` can read the lines written
 * so far.
 */
export const capturingStdout = async <A>(
  f: (linesSoFar: () => Array<any>) => Promise<A>
): Promise<{ readonly result: A; readonly text: string; readonly lines: Array<any> }> => {
  const written: Array<string> = []
  const write = process.stdout.write
  process.stdout.write = ((chunk: string | Uint8Array) => {
    written.push(String(chunk))
    return true
  }) as typeof process.stdout.write
  try {
    const result = await f(() => jsonLines(written.join("")))
    const text = written.join("")
    return { result, text, lines: jsonLines(text) }
  } finally {
    process.stdout.write = write
  }
}
