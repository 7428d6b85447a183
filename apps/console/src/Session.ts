import { Switchyard } from "@switchyard/client/Switchyard"
import type { CurrentKeyRecord } from "@switchyard/core/schema/ApiKey"

/**
 * A signed-in console: the key (kept in this browser tab's session storage only), a client of
 * the gateway that served the page, and what the gateway says about the key.
 */
export interface Session {
  readonly client: Switchyard
  readonly key: CurrentKeyRecord
  readonly isManagement: boolean
}

const storageKey = "switchyard.console.key"

export const storedSecret = (): string | null => sessionStorage.getItem(storageKey)

export const forget = (): void => sessionStorage.removeItem(storageKey)

/**
 * A client for the gateway that served this page. One retry: a person is waiting and sees the
 * server's message.
 */
export const clientFor = (secret: string): Switchyard =>
  new Switchyard({ baseUrl: window.location.origin, apiKey: secret, retry: { retries: 1 } })

/**
 * Checks the key with `GET /key` and keeps it for this tab only when the gateway accepts it.
 */
export const signIn = async (secret: string): Promise<Session> => {
  const client = clientFor(secret.trim())
  try {
    const { data } = await client.keys.current()
    sessionStorage.setItem(storageKey, secret.trim())
    return { client, key: data, isManagement: data.is_management_key }
  } catch (error) {
    await client.close()
    throw error
  }
}
