import { useCallback, useEffect, useState } from "react"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: unknown
  readonly loading: boolean
  readonly reload: () => void
}

/**
 * Runs `load` when the component mounts and whenever `deps` change or `reload` is called; a
 * result that arrives after a newer load started is dropped.
 */
export const useLoad = <A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [state, setState] = useState<{ data: A | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true
  })
  const [generation, setGeneration] = useState(0)
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what `load` depends on, as with useEffect
  const run = useCallback(load, deps)
  // biome-ignore lint/correctness/useExhaustiveDependencies: `generation` changes on reload, to run the load again
  useEffect(() => {
    let current = true
    setState((previous) => ({ ...previous, loading: true }))
    run().then(
      (data) => current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => current && setState((previous) => ({ data: previous.data, error, loading: false }))
    )
    return () => {
      current = false
    }
  }, [run, generation])
  const reload = useCallback(() => setGeneration((n) => n + 1), [])
  return { ...state, reload }
}
