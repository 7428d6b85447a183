import { Button, Group } from "@mantine/core"
import { useState } from "react"

/**
 * Paging through a list the gateway pages by cursor (`after`), newest first: the cursor of the
 * page shown and those of the pages before it, so that "Newer" goes back and "Older" goes on.
 */
export const useCursorPages = () => {
  const [before, setBefore] = useState<ReadonlyArray<string | null>>([])
  const [cursor, setCursor] = useState<string | null>(null)
  return {
    cursor,
    /** Back to the first page (new filters). */
    reset: () => {
      setBefore([])
      setCursor(null)
    },
    newer: before.length === 0 ? undefined : () => {
      setCursor(before[before.length - 1] ?? null)
      setBefore(before.slice(0, -1))
    },
    /** The page after this one, whose cursor the list answered (`null`: none). */
    older: (next: string | null) =>
      next === null ? undefined : () => {
        setBefore([...before, cursor])
        setCursor(next)
      }
  }
}

/** The "Newer" and "Older" buttons of {@link useCursorPages}'s pages. */
export const CursorButtons = (props: {
  readonly pages: ReturnType<typeof useCursorPages>
  readonly next: string | null
  readonly mt?: string
}) => {
  const older = props.pages.older(props.next)
  return (
    <Group {...(props.mt === undefined ? {} : { mt: props.mt })}>
      <Button variant="default" disabled={props.pages.newer === undefined} onClick={props.pages.newer}>
        Newer
      </Button>
      <Button variant="default" disabled={older === undefined} onClick={older}>
        Older
      </Button>
    </Group>
  )
}
