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
 * A client for the gateway that served this page. One retry by default: a person is waiting and
 * sees the server's message. Model calls a person sends by hand take `retries: 0`, so one click
 * is one request.
 */
export const clientFor = (secret: string, retries = 1): Switchyard =>
  new Switchyard({ baseUrl: window.location.origin, apiKey: secret, retry: { retries } })

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
