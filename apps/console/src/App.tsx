import { useEffect, useState } from "react"
import { Center, Loader } from "@mantine/core"
import { Router } from "wouter"
import { Shell } from "./Shell.tsx"
import { forget, type Session, signIn, storedSecret } from "./Session.ts"
import { SessionContext } from "./SessionContext.ts"
import { SignInPage } from "./pages/SignInPage.tsx"

/**
 * Signs in again with the key this tab kept (after a reload), else shows the sign-in page.
 */
export const App = () => {
  const [session, setSession] = useState<Session | null>(null)
  const [restoring, setRestoring] = useState(() => storedSecret() !== null)

  useEffect(() => {
    const secret = storedSecret()
    if (secret === null) return
    signIn(secret).then(setSession, () => forget()).finally(() => setRestoring(false))
  }, [])

  const signOut = () => {
    forget()
    void session?.client.close()
    setSession(null)
  }

  if (restoring) {
    return (
      <Center h="100vh">
        <Loader aria-label="Signing in" />
      </Center>
    )
  }
  return (
    <Router base="/ui">
      {session === null
        ? <SignInPage onSignedIn={setSession} />
        : (
          <SessionContext.Provider value={session}>
            <Shell onSignOut={signOut} />
          </SessionContext.Provider>
        )}
    </Router>
  )
}

