import { Table, Text } from "@mantine/core"
import { useCallback, useEffect, useRef, useState } from "react"

/**
 * A table that scrolls sideways on a narrow screen; the scrolling viewport takes keyboard focus
 * so it can be scrolled without a pointer. While the table is wider than its place, its scrollbar
 * stays shown and a line under it says that more columns lie sideways, so no column (an error
 * rate at the far right) is hidden without a cue.
 */
export const ScrollTable = ({ label, minWidth, children }: {
  readonly label: string
  readonly minWidth: number
  readonly children: React.ReactNode
}) => {
  const viewport = useRef<HTMLDivElement>(null)
  const [overflows, setOverflows] = useState(false)
  const measure = useCallback(() => {
    const element = viewport.current
    // A pixel of rounding is not a hidden column.
    if (element !== null) setOverflows(element.scrollWidth - element.clientWidth > 1)
  }, [])
  useEffect(() => {
    const element = viewport.current
    if (element === null) return
    measure()
    const observer = new ResizeObserver(measure)
    observer.observe(element)
    if (element.firstElementChild !== null) observer.observe(element.firstElementChild)
    return () => observer.disconnect()
  }, [measure])
  return (
    <>
      <Table.ScrollContainer
        minWidth={minWidth}
        scrollAreaProps={{ type: "auto", viewportRef: viewport, viewportProps: { tabIndex: 0, role: "region", "aria-label": label } }}
      >
        {children}
      </Table.ScrollContainer>
      {overflows && (
        <Text size="xs" c="dimmed" mt={4} data-scroll-cue={label}>
          Wider than the screen: scroll the table sideways for every column →
        </Text>
      )}
    </>
  )
}
