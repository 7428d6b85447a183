import { Button, Stack, Title } from "@mantine/core"
import type { ProviderTestResult } from "@switchyard/core/catalog/ManagedProvider"
import type { ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { useState } from "react"
import { EndpointTable } from "../EndpointTable.tsx"
import * as EndpointStatus from "../EndpointStatus.ts"
import { NoticeAlert, useNotice } from "../Notice.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { AddProviderModal, DeleteProviderModal, EditProviderModal, RotateKeyModal, TestResults } from "../ProviderAdmin.tsx"
import { type ProviderActions, ProviderTable } from "../ProviderTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

type Dialog =
  | { readonly _tag: "Add" }
  | { readonly _tag: "Edit"; readonly slug: string }
  | { readonly _tag: "Rotate"; readonly provider: ProviderRecord }
  | { readonly _tag: "Delete"; readonly provider: ProviderRecord }

const described = "Upstream providers, their endpoints and prices, and what this gateway measured of them in the last 30 minutes."

/**
 * What the page loads: the providers, their endpoints' figures, and the workspace's own keys (for
 * those the access rule lets see them: management keys).
 */
const useProviders = () => {
  const { client, access, person } = useSession()
  const ownProviderKeys = access.seeOwnProviderKeys
  const providers = useLoad(["providers", client], (signal) => client.providers.list(undefined, { signal }))
  const endpoints = useLoad(["endpoints", client], (signal) => EndpointStatus.load(client, signal, person !== null))
  const byok = useLoad(
    ["byok", client, ownProviderKeys],
    (signal) => (ownProviderKeys ? client.byok.list({ query: {} }, { signal }).then((list) => list.data) : Promise.resolve(null))
  )
  const list = providers.data?.data ?? []
  // The gateway adds `source` (and the upstream key's whereabouts) to each provider for those who
  // may see the instance's providers whole; of them, those the access rule lets change providers
  // get the actions.
  const detailed = list.some((provider) => provider.source !== undefined)
  return {
    list,
    endpoints: endpoints.data ?? [],
    loading: providers.loading,
    error: providers.error ?? endpoints.error ?? byok.error,
    detailed,
    administrator: detailed && access.manageProviders,
    // Providers' health is for everyone who oversees the gateway: administrators and people.
    showHealth: detailed || person !== null,
    ownKey: ownProviderKeys
      ? (slug: string) => (byok.data ?? []).find((key) => key.provider === slug && !key.disabled)?.label
      : undefined,
    reload: () => {
      providers.reload()
      endpoints.reload()
    }
  }
}

export const ProvidersPage = () => {
  const { client } = useSession()
  const loaded = useProviders()
  const [dialog, setDialog] = useState<Dialog | null>(null)
  const notices = useNotice()
  const [testing, setTesting] = useState<string | null>(null)
  const [tested, setTested] = useState<{ readonly name: string; readonly result: ProviderTestResult["data"] } | null>(null)

  const done = (text: string) => {
    setDialog(null)
    notices.done(text)
    loaded.reload()
  }
  const actions: ProviderActions = {
    testing,
    test: (provider) => {
      notices.clear()
      setTested(null)
      setTesting(provider.slug)
      client.providerAdmin.test({ params: { slug: provider.slug } })
        .then((answer) => setTested({ name: provider.name, result: answer.data }), notices.failed(provider.name))
        .finally(() => setTesting(null))
    },
    edit: (provider) => setDialog({ _tag: "Edit", slug: provider.slug }),
    rotate: (provider) => setDialog({ _tag: "Rotate", provider }),
    setEnabled: (provider, enabled) => {
      notices.clear()
      client.providerAdmin.update({ params: { slug: provider.slug }, payload: { enabled } }).then(
        () => done(enabled ? `Enabled ${provider.name}.` : `Disabled ${provider.name}: no request is routed to it.`),
        notices.failed(provider.name)
      )
    },
    remove: (provider) => setDialog({ _tag: "Delete", provider })
  }

  return (
    <>
      <PageHeader
        title="Providers"
        description={loaded.administrator
          ? `${described} Providers of the config file are read-only here; those added here route on every replica within a second.`
          : described}
      >
        {loaded.administrator && <Button onClick={() => setDialog({ _tag: "Add" })}>Add provider</Button>}
      </PageHeader>
      <Stack>
        <ErrorNotice error={loaded.error} />
        <NoticeAlert notice={notices.notice} onClose={notices.clear} />
        <section aria-labelledby="providers-title">
          <Title order={2} size="h4" id="providers-title" mb="xs">Providers</Title>
          <ProviderTable
            providers={loaded.list}
            loading={loaded.loading}
            detailed={loaded.detailed}
            showHealth={loaded.showHealth}
            administrator={loaded.administrator}
            ownKey={loaded.ownKey}
            endpoints={loaded.endpoints}
            actions={actions}
          />
        </section>
        {tested !== null && <TestResults name={tested.name} result={tested.result} onClose={() => setTested(null)} />}
        <section aria-labelledby="endpoints-title">
          <Title order={2} size="h4" id="endpoints-title" mb="xs">Endpoints</Title>
          <EndpointTable endpoints={loaded.endpoints} />
        </section>
      </Stack>
      <AddProviderModal
        opened={dialog?._tag === "Add"}
        onClose={() => setDialog(null)}
        onAdded={(slug) => done(`Added ${slug}: it routes now.`)}
      />
      {dialog?._tag === "Edit" && (
        <EditProviderModal
          slug={dialog.slug}
          onClose={() => setDialog(null)}
          onSaved={(changed) => done(changed === 0 ? `Nothing changed in ${dialog.slug}.` : `Saved ${dialog.slug}.`)}
        />
      )}
      {dialog?._tag === "Rotate" && <RotateKeyModal provider={dialog.provider} onClose={() => setDialog(null)} onSaved={done} />}
      {dialog?._tag === "Delete" && (
        <DeleteProviderModal provider={dialog.provider} onClose={() => setDialog(null)} onDeleted={() => done(`Deleted ${dialog.provider.name}.`)} />
      )}
    </>
  )
}
