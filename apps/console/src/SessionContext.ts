import { createContext, useContext } from "react"
import type { Session } from "./Session.ts"

export const SessionContext = createContext<Session | null>(null)

export const useSession = (): Session => {
  const session = useContext(SessionContext)
  if (session === null) throw new Error("useSession outside a signed-in console")
  return session
}
