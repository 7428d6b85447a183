import { Table } from "@mantine/core"

/**
 * A table that scrolls sideways on a narrow screen; the scrolling viewport takes keyboard focus
 * so it can be scrolled without a pointer.
 */
export const ScrollTable = ({ label, minWidth, children }: {
  readonly label: string
  readonly minWidth: number
  readonly children: React.ReactNode
}) => (
  <Table.ScrollContainer
    minWidth={minWidth}
    scrollAreaProps={{ viewportProps: { tabIndex: 0, role: "region", "aria-label": label } }}
  >
    {children}
  </Table.ScrollContainer>
)
