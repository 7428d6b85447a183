import { useQuery } from "@tanstack/react-query"
import { useCallback, useEffect } from "react"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

// Objects in a key (the session's client, above all) are told apart by identity, not by content:
// two clients of one base URL with different keys are different sources.
const identities = new WeakMap<object, number>()
let nextIdentity = 0
const keyPart = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  let id = identities.get(value)
  if (id === undefined) {
    id = nextIdentity++
    identities.set(value, id)
  }
  return `#${id}`
}

/**
 * TanStack Query's `useQuery` as the pages use it: `key` names what is loaded and what it depends
 * on (`["keys", client, includeDisabled]`); `load` runs when the component mounts, when the key
 * changes and when `reload` is called. `signal` aborts a load that is no longer wanted, and a
 * result for an older key never replaces the current one.
 */
export const useLoad = <A>(key: readonly [string, ...ReadonlyArray<unknown>], load: (signal: AbortSignal) => Promise<A>): Loaded<A> => {
  const query = useQuery({
    queryKey: key.map(keyPart),
    queryFn: ({ signal }) => load(signal)
  })
  const { refetch } = query
  const reload = useCallback(() => {
    void refetch()
  }, [refetch])
  return { data: query.data, error: query.error ?? undefined, loading: query.isFetching, reload }
}

/**
 * Loads again every two seconds while `active` holds: a page whose records are moving between
 * states (an intern provisioning, a batch running) follows them without a click.
 */
export const useReloadWhile = (active: boolean, reload: () => void) => {
  useEffect(() => {
    if (!active) return
    const timer = setInterval(reload, 2000)
    return () => clearInterval(timer)
  }, [active, reload])
}
