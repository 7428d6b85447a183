import { useEffect, useState } from "react"
import { Center, Loader } from "@mantine/core"
import { Router } from "wouter"
import type * as Me from "./Me.ts"
import { Shell } from "./Shell.tsx"
import { find, forget, type Session, signIn, signOutPerson, storedSecret } from "./Session.ts"
import { SessionContext } from "./SessionContext.ts"
import { SignInPage } from "./pages/SignInPage.tsx"

type State =
  | { readonly _tag: "Loading" }
  | { readonly _tag: "SignedOut"; readonly methods: Me.SignInMethods }
  | { readonly _tag: "SignedIn"; readonly session: Session; readonly methods: Me.SignInMethods }

const keysOnly: Me.SignInMethods = { sso: false, key: true }

/**
 * Asks the gateway who is signed in (a person's session cookie), else signs in again with the key
 * this tab kept (after a reload), else shows the sign-in page.
 */
export const App = () => {
  const [state, setState] = useState<State>({ _tag: "Loading" })

  useEffect(() => {
    let live = true
    const settle = (next: State) => {
      if (live) setState(next)
    }
    find().then(
      async (found) => {
        if (found._tag === "Person") return settle({ _tag: "SignedIn", session: found.session, methods: { sso: true, key: false } })
        const secret = storedSecret()
        if (secret === null || !found.methods.key) return settle({ _tag: "SignedOut", methods: found.methods })
        await signIn(secret).then(
          (session) => settle({ _tag: "SignedIn", session, methods: found.methods }),
          () => {
            forget()
            settle({ _tag: "SignedOut", methods: found.methods })
          }
        )
      },
      () => settle({ _tag: "SignedOut", methods: keysOnly })
    )
    return () => {
      live = false
    }
  }, [])

  const signOut = () => {
    if (state._tag !== "SignedIn") return
    const { session, methods } = state
    if (session.person !== null) return void signOutPerson(session.person)
    forget()
    void session.client.close()
    setState({ _tag: "SignedOut", methods })
  }

  if (state._tag === "Loading") {
    return (
      <Center h="100vh">
        <Loader aria-label="Signing in" />
      </Center>
    )
  }
  return (
    <Router base="/ui">
      {state._tag === "SignedOut"
        ? <SignInPage methods={state.methods} onSignedIn={(session) => setState({ _tag: "SignedIn", session, methods: state.methods })} />
        : (
          <SessionContext.Provider value={state.session}>
            <Shell onSignOut={signOut} />
          </SessionContext.Provider>
        )}
    </Router>
  )
}
