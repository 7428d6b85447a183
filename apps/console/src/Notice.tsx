import { Alert } from "@mantine/core"
import { useState } from "react"
import { serverMessage } from "./ServerMessage.ts"

/**
 * What a page says after an action on one of its rows: that it was done (a status), or that it
 * failed, in the gateway's words (an alert). One at a time; the next action clears it.
 */
interface Notice {
  readonly ok: boolean
  readonly text: string
}

export const useNotice = () => {
  const [notice, setNotice] = useState<Notice | null>(null)
  return {
    notice,
    clear: () => setNotice(null),
    done: (text: string) => setNotice({ ok: true, text }),
    /** The failure of an action on `subject`, worded as the gateway worded it. */
    failed: (subject: string) => (error: unknown) => setNotice({ ok: false, text: `${subject}: ${serverMessage(error)}` })
  }
}

export const NoticeAlert = ({ notice, onClose, mb }: {
  readonly notice: Notice | null
  readonly onClose: () => void
  readonly mb?: string
}) =>
  notice === null ? null : (
    <Alert color={notice.ok ? "teal" : "red"} role={notice.ok ? "status" : "alert"} {...(mb === undefined ? {} : { mb })} withCloseButton onClose={onClose}>
      {notice.text}
    </Alert>
  )
