import { Button, Group, Modal, Stack } from "@mantine/core"
import { useState } from "react"
import { ErrorNotice } from "./PageHeader.tsx"

/**
 * A call a form or dialog makes: `busy` while it runs, its failure kept to show; `run` starts it
 * and hands its answer to `onDone`; `refuse` shows why the form was not sent (what the console
 * itself found wrong in it).
 */
export const useSubmit = () => {
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  const run = <A,>(call: () => Promise<A>, onDone: (answer: A) => void) => {
    setBusy(true)
    setError(null)
    call().then(onDone, setError).finally(() => setBusy(false))
  }
  return { error, busy, run, refuse: setError }
}

/**
 * A dialog holding one form: its fields, the call's failure, and Cancel beside
 * the submit button. `aside` stands at the left of the buttons (another action of the dialog).
 */
export const FormModal = ({ title, opened = true, size, onClose, onSubmit, submission: { error, busy }, failure, submit, disabled, aside, children }: {
  readonly title: string
  readonly opened?: boolean
  readonly size?: string
  readonly onClose: () => void
  readonly onSubmit: () => void
  /** The form's call, from `useSubmit`. */
  readonly submission: Pick<ReturnType<typeof useSubmit>, "error" | "busy">
  /** What its failure is titled. */
  readonly failure: string
  /** The submit button's words. */
  readonly submit: string
  readonly disabled?: boolean
  readonly aside?: React.ReactNode
  readonly children: React.ReactNode
}) => {
  const buttons = (
    <Group justify={aside === undefined ? "flex-end" : undefined}>
      <Button variant="default" onClick={onClose}>Cancel</Button>
      <Button type="submit" loading={busy} disabled={disabled === true}>{submit}</Button>
    </Group>
  )
  return (
    <Modal opened={opened} onClose={onClose} title={title} {...(size === undefined ? {} : { size })}>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          onSubmit()
        }}
      >
        <Stack>
          {children}
          <ErrorNotice error={error} title={failure} />
          {aside === undefined ? buttons : <Group justify="space-between">{aside}{buttons}</Group>}
        </Stack>
      </form>
    </Modal>
  )
}
