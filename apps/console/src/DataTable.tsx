import { Badge, Button, Group, Table, type TableProps, VisuallyHidden } from "@mantine/core"
import { ScrollTable } from "./ScrollTable.tsx"

/**
 * The table every console page shows its records in: a `ScrollTable` (keyboard-scrollable, with
 * its cue when wider than the screen) around a Mantine table whose header row is its columns,
 * each a `scope="col"` heading. The rows are the caller's.
 */

/** A column heading: its words, or an actions column (named for screen readers only). */
type Column =
  | string
  | { readonly title: string; readonly w?: number; readonly miw?: number }
  | { readonly actions: true }
  /** A column shown only when `when` holds: a heading some viewers do not get. */
  | { readonly when: boolean; readonly column: Exclude<Column, { readonly when: boolean }> }

type Shown = Exclude<Column, { readonly when: boolean }>

/** The columns this viewer gets. */
const shown = (columns: ReadonlyArray<Column>): Array<Shown> =>
  columns.flatMap((column) => typeof column === "object" && "when" in column ? (column.when ? [column.column] : []) : [column])

/** A column's words, which tell it from the others of its table. */
const keyOf = (column: Shown): string => typeof column === "string" ? column : "actions" in column ? "actions" : column.title

const Heading = ({ column }: { readonly column: Shown }) =>
  typeof column === "string"
    ? <Table.Th scope="col">{column}</Table.Th>
    : "actions" in column
    ? <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>
    : <Table.Th scope="col" w={column.w} miw={column.miw}>{column.title}</Table.Th>

export const DataTable = ({ label, minWidth, columns, caption, children, ...table }: {
  /** The scrolling region's name. */
  readonly label: string
  readonly minWidth: number
  readonly columns: ReadonlyArray<Column>
  readonly caption?: React.ReactNode
  /** The rows. */
  readonly children: React.ReactNode
} & Omit<TableProps, "children" | "caption">) => (
  <ScrollTable label={label} minWidth={minWidth}>
    <Table verticalSpacing="xs" {...table}>
      {caption !== undefined && <Table.Caption>{caption}</Table.Caption>}
      <Table.Thead>
        <Table.Tr>
          {shown(columns).map((column) => <Heading key={keyOf(column)} column={column} />)}
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>{children}</Table.Tbody>
    </Table>
  </ScrollTable>
)

/** A row's buttons, side by side. */
export const RowActions = ({ children }: { readonly children: React.ReactNode }) => <Group gap={6} wrap="nowrap">{children}</Group>

/** A row's button: compact, named for what it does to which record (`aria-label`). */
export const RowButton = ({ label, children, variant = "default", color, loading, onClick }: {
  readonly label: string
  readonly children: React.ReactNode
  readonly variant?: "default" | "light" | "subtle"
  readonly color?: string | undefined
  readonly loading?: boolean | undefined
  readonly onClick: () => void
}) => (
  <Button
    size="compact-sm"
    variant={variant}
    {...(color === undefined ? {} : { color })}
    loading={loading === true}
    onClick={onClick}
    aria-label={label}
  >
    {children}
  </Button>
)

/** A state in a light badge that keeps its whole word however narrow its column (decision 0372). */
export const StateBadge = ({ color, children }: { readonly color: string; readonly children: React.ReactNode }) => (
  <Badge variant="light" color={color} styles={{ label: { overflow: "visible" } }}>{children}</Badge>
)
