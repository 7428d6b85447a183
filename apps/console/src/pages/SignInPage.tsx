import { Alert, Anchor, Button, Center, Divider, Paper, PasswordInput, Stack, Text, Title } from "@mantine/core"
import { useState } from "react"
import type * as Me from "../Me.ts"
import { type Session, signIn } from "../Session.ts"
import { serverMessage } from "../ServerMessage.ts"

const KeyForm = ({ onSignedIn, first }: { readonly onSignedIn: (session: Session) => void; readonly first: boolean }) => {
  const [secret, setSecret] = useState("")
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    signIn(secret).then(onSignedIn, (cause: unknown) => setError(serverMessage(cause))).finally(() => setBusy(false))
  }

  return (
    <form onSubmit={submit} aria-label="Sign in with a key">
      <Stack>
        <Text size="sm" c="dimmed">
          Sign in with a Switchyard key. A management key manages its user's keys, workspaces and credits; a standard key
          shows its own usage and limits. The key stays in this browser tab only and is forgotten when the tab closes.
        </Text>
        <PasswordInput
          label="API key"
          placeholder="sk-sy-v1-…"
          autoComplete="off"
          required
          autoFocus={first}
          value={secret}
          onChange={(event) => setSecret(event.currentTarget.value)}
        />
        {error !== null && (
          <Alert color="red" title="Sign-in failed" role="alert">
            {error}
          </Alert>
        )}
        <Button type="submit" variant={first ? "filled" : "default"} loading={busy} disabled={secret.trim().length === 0}>
          Sign in
        </Button>
      </Stack>
    </form>
  )
}

/**
 * Single sign-on when the gateway has an identity provider (`/ui/auth/login` goes there and comes
 * back signed in), and the key form when the gateway takes keys here.
 */
export const SignInPage = ({ methods, onSignedIn }: {
  readonly methods: Me.SignInMethods
  readonly onSignedIn: (session: Session) => void
}) => (
  <Center mih="100vh" p="md" component="main">
    <Paper withBorder shadow="sm" p="xl" w="100%" maw={460}>
      <Stack aria-labelledby="sign-in-title" component="section">
        <Title order={1} size="h2" id="sign-in-title">Switchyard console</Title>
        {methods.sso && (
          <>
            <Text size="sm" c="dimmed">
              Sign in with your organisation's account. What you see here follows your groups at the identity provider.
            </Text>
            <Button component="a" href="/ui/auth/login">Sign in with single sign-on</Button>
          </>
        )}
        {methods.sso && methods.key && <Divider label="or" labelPosition="center" />}
        {methods.key && <KeyForm onSignedIn={onSignedIn} first={!methods.sso} />}
        <Text size="xs" c="dimmed">
          {methods.key && "First start prints a management key and an API key; the "}
          {!methods.key && "The "}
          <Anchor href="/api/v1/openapi.json" underline="always">OpenAPI document</Anchor> lists every operation.
        </Text>
      </Stack>
    </Paper>
  </Center>
)
