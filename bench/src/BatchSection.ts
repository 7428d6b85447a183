/**
 * The batch cell's section of `bench/RESULTS.md` (`## Batch`): written by the batch cell
 * (`pnpm --filter @switchyard/bench batch … --summary FILE`), kept when a full run rewrites the
 * rest of the file.
 */
export const heading = "## Batch"

/** The batch section of `markdown` (from its heading to the next `## ` heading or the end), if any. */
const of = (markdown: string): string | undefined => {
  const start = markdown.search(/^## Batch\b/mu)
  if (start === -1) return undefined
  const rest = markdown.slice(start + heading.length)
  const next = rest.search(/^## /mu)
  return markdown.slice(start, next === -1 ? markdown.length : start + heading.length + next).trimEnd()
}

/** `markdown` with its batch section replaced by `section` (appended where it has none). */
export const replace = (markdown: string, section: string): string => {
  const old = of(markdown)
  if (old === undefined) return `${markdown.trimEnd()}\n\n${section.trimEnd()}\n`
  const start = markdown.indexOf(old)
  const after = markdown.slice(start + old.length).replace(/^\s*/u, "")
  return `${markdown.slice(0, start)}${section.trimEnd()}\n${after.length > 0 ? `\n${after}` : ""}`
}

/** A full run's new `text` for the file, with the batch section `previous` held kept. */
export const keep = (previous: string | undefined, text: string): string => {
  const section = previous === undefined ? undefined : of(previous)
  return section === undefined ? text : replace(text, section)
}
