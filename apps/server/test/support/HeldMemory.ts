/**
 * What `switchyard_memory_held_bytes` says in a `/metrics` text: its series (one per workspace
 * holding the most, and "other") summed, or by workspace.
 */
export const heldByWorkspace = (metrics: string): Record<string, number> => {
  const held: Record<string, number> = {}
  for (const match of metrics.matchAll(/^switchyard_memory_held_bytes\{workspace="([^"]*)"\} (\d+)$/gmu)) held[match[1]!] = Number(match[2])
  return held
}

const heldBytes = (metrics: string): number => Object.values(heldByWorkspace(metrics)).reduce((n, bytes) => n + bytes, 0)

/** The total the gateway at `origin` holds now. */
export const heldAt = async (origin: string): Promise<number> => heldBytes(await (await fetch(`${origin}/metrics`)).text())
