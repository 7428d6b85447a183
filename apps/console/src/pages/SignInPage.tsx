import { Alert, Anchor, Button, Center, Paper, PasswordInput, Stack, Text, Title } from "@mantine/core"
import { useState } from "react"
import { type Session, signIn } from "../Session.ts"
import { serverMessage } from "../ServerMessage.ts"

export const SignInPage = ({ onSignedIn }: { readonly onSignedIn: (session: Session) => void }) => {
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
    <Center mih="100vh" p="md" component="main">
      <Paper withBorder shadow="sm" p="xl" w="100%" maw={460}>
        <form onSubmit={submit} aria-labelledby="sign-in-title">
          <Stack>
            <Title order={1} size="h2" id="sign-in-title">Switchyard console</Title>
            <Text size="sm" c="dimmed">
              Sign in with a Switchyard key. A management key manages its user's keys, workspaces and credits; a
              standard key shows its own usage and limits. The key stays in this browser tab only and is
              forgotten when the tab closes.
            </Text>
            <PasswordInput
              label="API key"
              placeholder="sk-sy-v1-…"
              autoComplete="off"
              required
              autoFocus
              value={secret}
              onChange={(event) => setSecret(event.currentTarget.value)}
            />
            {error !== null && (
              <Alert color="red" title="Sign-in failed" role="alert">
                {error}
              </Alert>
            )}
            <Button type="submit" loading={busy} disabled={secret.trim().length === 0}>Sign in</Button>
            <Text size="xs" c="dimmed">
              First start prints a management key and an API key; the <Anchor href="/api/v1/openapi.json" underline="always">OpenAPI document</Anchor> lists
              every operation.
            </Text>
          </Stack>
        </form>
      </Paper>
    </Center>
  )
}
