// Runs the four fake upstreams for manual or end-to-end runs: `node test/fakes/serve.ts [basePort]`.
// With a base port P they listen on P (OpenAI), P+1 (Cohere), P+2 (Voyage), P+3 (Gemini); otherwise on free ports.
import * as FakeCohere from "./FakeCohere.ts"
import * as FakeGemini from "./FakeGemini.ts"
import * as FakeOpenAi from "./FakeOpenAi.ts"
import * as FakeVoyage from "./FakeVoyage.ts"

const base = process.argv[2] === undefined ? undefined : Number(process.argv[2])
const port = (offset: number) => (base === undefined ? {} : { port: base + offset })

const servers = {
  openai: await FakeOpenAi.start(port(0)),
  cohere: await FakeCohere.start(port(1)),
  voyage: await FakeVoyage.start(port(2)),
  gemini: await FakeGemini.start(port(3))
}

console.log(JSON.stringify(
  {
    openai: { url: servers.openai.url, key: "sk-fake" },
    cohere: { url: servers.cohere.url, key: "co-fake" },
    voyage: { url: servers.voyage.url, key: "pa-fake" },
    gemini: { url: servers.gemini.url, key: "AIza-fake" }
  },
  null,
  2
))

const stop = () => {
  void Promise.all(Object.values(servers).map((server) => server.close())).then(() => process.exit(0))
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
