import * as Monitoring from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1"
import * as ClientModels from "@kubernetes/client-node/dist/gen/models/all.js"
import { assert, describe, it } from "@effect/vitest"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import { Effect } from "effect"
import * as Apps from "kubernetes-models/apps/v1"
import * as Autoscaling from "kubernetes-models/autoscaling/v2"
import * as Networking from "kubernetes-models/networking.k8s.io/v1"
import * as Policy from "kubernetes-models/policy/v1"
import * as Core from "kubernetes-models/v1"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Yaml from "yaml"
import * as Drain from "../../src/http/Drain.ts"
import * as MemoryBudget from "../../src/http/MemoryBudget.ts"
import * as Settings from "../../src/Settings.ts"
import { startStoreRelay } from "../support/StoreRelay.ts"
import { dropDatabase, freshDatabase, postgresReachable, startServer, tempDir } from "../support/TestServer.ts"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const deployDir = NodePath.join(repoRoot, "deploy", "kubernetes")

/** `kubectl`'s path when it runs here: the manifests are rendered by `kubectl kustomize`, with no cluster. */
const kubectl = ChildProcess.spawnSync("kubectl", ["version", "--client"], { encoding: "utf8" }).status === 0 ? "kubectl" : undefined

type Manifest = { apiVersion: string; kind: string; metadata: { name: string }; spec?: any; data?: Record<string, string> }

/** Renders a kustomization directory into its objects. */
const render = (dir: string): Array<Manifest> => {
  const run = ChildProcess.spawnSync(kubectl!, ["kustomize", dir], { encoding: "utf8" })
  if (run.status !== 0) throw new Error(`kubectl kustomize ${NodePath.relative(repoRoot, dir)} failed:\n${run.stderr}`)
  return Yaml.parseAllDocuments(run.stdout).map((doc) => doc.toJSON() as Manifest).filter((m) => m !== null)
}

/** An overlay with the ServiceMonitor component added, as an operator's kustomization would. */
const withServiceMonitor = (overlay: string): Array<Manifest> => {
  const dir = tempDir("kustomize")
  const relative = (to: string) => NodePath.relative(dir, NodePath.join(deployDir, to))
  Fs.writeFileSync(NodePath.join(dir, "kustomization.yaml"), Yaml.stringify({
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: [relative(`overlays/${overlay}`)],
    components: [relative("components/service-monitor")]
  }))
  return render(dir)
}

/** The kubernetes-models classes by apiVersion: the JSON Schemas of Kubernetes 1.34 (and the Prometheus Operator's CRD). */
const schemas: Record<string, Record<string, unknown>> = {
  v1: Core,
  "apps/v1": Apps,
  "autoscaling/v2": Autoscaling,
  "networking.k8s.io/v1": Networking,
  "policy/v1": Policy,
  "monitoring.coreos.com/v1": Monitoring
}

/** Validates against the schema: a missing required field, a wrong type or a value outside an enum throws. */
const validate = (m: Manifest) => {
  const model = schemas[m.apiVersion]?.[m.kind] as (new(data: unknown) => { validate: () => void }) | undefined
  if (model === undefined) throw new Error(`${m.kind} ${m.metadata.name}: no schema for ${m.apiVersion} ${m.kind}`)
  new model(m).validate()
}

const clientModels = ClientModels as unknown as Record<string, { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> }>

/**
 * The fields the schemas do not know, found through the Kubernetes client's models, which list
 * each type's fields (kubernetes-models' schemas, like the API's OpenAPI document, allow any
 * extra field). A typo such as `readinesProbe` is caught here.
 */
const unknownFields = (value: unknown, type: string, path: string): Array<string> => {
  if (value === null || value === undefined) return []
  const array = /^Array<(.+)>$/u.exec(type)
  if (array !== null) return Array.isArray(value) ? value.flatMap((v, i) => unknownFields(v, array[1]!, `${path}[${i}]`)) : []
  const map = /^\{ \[key: string\]: (.+); \}$/u.exec(type)
  if (map !== null) return Object.entries(value as object).flatMap(([k, v]) => unknownFields(v, map[1]!, `${path}.${k}`))
  const fields = clientModels[type]?.getAttributeTypeMap?.()
  if (fields === undefined || typeof value !== "object") return []
  const known = new Map(fields.map((f) => [f.baseName, f.type]))
  return Object.entries(value as object).flatMap(([k, v]) =>
    known.has(k) ? unknownFields(v, known.get(k)!, `${path}.${k}`) : [`${path}.${k}`]
  )
}

const clientType = (m: Manifest) => {
  const version = m.apiVersion.split("/").at(-1)!
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${m.kind}`
}

const workloadOf = (objects: Array<Manifest>) => {
  const workloads = objects.filter((m) => m.kind === "Deployment" || m.kind === "StatefulSet")
  assert.strictEqual(workloads.length, 1, "one workload")
  const workload = workloads[0]!
  const pod = workload.spec.template.spec
  const container = pod.containers.find((c: any) => c.name === "switchyard")
  assert.isDefined(container, "the container switchyard")
  return { workload, pod, container }
}

const envOf = (container: any): Map<string, any> => new Map(container.env.map((e: any) => [e.name, e]))

/** A quantity (`512Mi`, `1`, `500m`) in bytes or cores. */
const quantity = (text: string): number => {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$/u.exec(String(text))
  if (match === null) throw new Error(`not a quantity this test reads: ${text}`)
  const factor = { m: 0.001, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[match[2] as "m"] ?? 1
  return Number(match[1]) * factor
}

/** The variables docs/kubernetes.md names as left to the operator. */
const leftToOperator = (() => {
  const page = Fs.readFileSync(NodePath.join(repoRoot, "docs", "kubernetes.md"), "utf8")
  const start = page.indexOf("\n## Settings left to you\n")
  assert.isAtLeast(start, 0, "docs/kubernetes.md has a section \"Settings left to you\"")
  const end = page.indexOf("\n## ", start + 5)
  const section = page.slice(start, end === -1 ? undefined : end)
  return new Set([...section.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/gu)].map((m) => m[1]!))
})()

/** The Dockerfile's instructions of the run stage, by name. */
const dockerfile = (() => {
  const text = Fs.readFileSync(NodePath.join(repoRoot, "Dockerfile"), "utf8").replace(/\\\n/gu, " ")
  const runStage = text.slice(text.lastIndexOf("\nFROM "))
  const lines = runStage.split("\n").filter((l) => /^[A-Z]+ /u.test(l))
  const all = (word: string) => lines.filter((l) => l.startsWith(`${word} `)).map((l) => l.slice(word.length + 1).trim())
  const env = new Map<string, string>()
  for (const line of all("ENV")) for (const m of line.matchAll(/([A-Z_]+)=(\S+)/gu)) env.set(m[1]!, m[2]!)
  return { user: all("USER").at(-1), expose: all("EXPOSE"), volume: all("VOLUME").at(-1), cmd: all("CMD").at(-1), env }
})()

const overlays = ["embedded", "scale-out"] as const

describe.skipIf(kubectl === undefined)(
  `deploy/kubernetes rendered by kubectl kustomize${kubectl === undefined ? " (skipped: kubectl is not installed)" : ""}`,
  () => {
    const rendered: Map<string, Array<Manifest>> = kubectl === undefined ? new Map() : new Map(overlays.map((o) => [o, render(NodePath.join(deployDir, "overlays", o))]))
    const monitored: Map<string, Array<Manifest>> = kubectl === undefined ? new Map() : new Map(overlays.map((o) => [o, withServiceMonitor(o)]))

    it("renders every overlay, with and without the ServiceMonitor, into objects valid against the API schemas: no missing required field, no wrong type, no unknown field", () => {
      for (const [name, objects] of [...rendered, ...[...monitored].map(([o, m]) => [`${o} + service-monitor`, m] as const)]) {
        assert.isAtLeast(objects.length, 5, name)
        for (const m of objects) {
          assert.doesNotThrow(() => validate(m), undefined, `${name}: ${m.kind} ${m.metadata.name}`)
          // The ServiceMonitor is a CRD's: the client has no model of it.
          if (m.apiVersion !== "monitoring.coreos.com/v1") {
            assert.isDefined(clientModels[clientType(m)], `${clientType(m)} is a model of the client`)
            assert.deepStrictEqual(unknownFields(m, clientType(m), m.kind), [], `${name}: ${m.kind} ${m.metadata.name}`)
          }
        }
      }
    })

    it("catches what it is there to catch: a missing field, a wrong type, an unknown field", () => {
      const { workload } = workloadOf(rendered.get("scale-out")!)
      const broken = structuredClone(workload)
      delete broken.spec.selector
      assert.throws(() => validate(broken), /selector/u)
      const mistyped = structuredClone(workload)
      mistyped.spec.template.spec.terminationGracePeriodSeconds = "60"
      assert.throws(() => validate(mistyped), /terminationGracePeriodSeconds/u)
      const misspelt = structuredClone(workload)
      misspelt.spec.template.spec.containers[0].readinesProbe = {}
      assert.deepStrictEqual(unknownFields(misspelt, "V1Deployment", "Deployment"), ["Deployment.spec.template.spec.containers[0].readinesProbe"])
    })

    it("gives the pod a grace period longer than the stop the gateway documents: preStop, drain grace, the requests' 25 s, an attempt", () => {
      for (const [name, objects] of rendered) {
        const { pod, container } = workloadOf(objects)
        const env = envOf(container)
        const preStopMillis = (container.lifecycle.preStop.sleep.seconds as number) * 1000
        const grace = Number(env.get("SWITCHYARD_DRAIN_GRACE_MS")?.value)
        const attempt = Number(env.get("SWITCHYARD_ATTEMPT_TIMEOUT_MS")?.value)
        assert.isTrue(Number.isInteger(grace) && Number.isInteger(attempt), `${name}: the drain grace and the attempt limit are set, so the figure is known`)
        const stop = preStopMillis + Drain.longestMillis(grace, attempt)
        assert.isAbove(pod.terminationGracePeriodSeconds * 1000, stop, `${name}: ${stop} ms of stop`)
        // Room for the ledger's last write, not minutes of a hung process.
        assert.isAtMost(pod.terminationGracePeriodSeconds * 1000, stop + 15_000, name)
      }
    })

    it("probes readiness on /api/v1/health and liveness on /livez, at the container's port", () => {
      for (const [name, objects] of rendered) {
        const { container } = workloadOf(objects)
        assert.strictEqual(container.readinessProbe.httpGet.path, "/api/v1/health", name)
        assert.strictEqual(container.livenessProbe.httpGet.path, "/livez", name)
        assert.strictEqual(container.startupProbe.httpGet.path, "/livez", name)
        for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
          assert.strictEqual(probe.httpGet.port, "http", name)
        }
        // The health check answers within 3 s (its store check gives up at 2.5 s).
        assert.isAtLeast(container.readinessProbe.timeoutSeconds, 3, name)
        assert.deepStrictEqual(container.ports, [{ name: "http", containerPort: 8080, protocol: "TCP" }], name)
      }
    })

    it("sets only variables of the gateway's settings list, each secret one from a Secret, and leaves the rest to the operator by name", () => {
      const names = new Set(Settings.all.map((s) => s.name))
      const secret = new Set(Settings.all.filter((s) => s.secret).map((s) => s.name))
      for (const [name, objects] of [...rendered, ...monitored]) {
        const { container } = workloadOf(objects)
        assert.isUndefined(container.envFrom, `${name}: every variable by name`)
        const env = envOf(container)
        for (const [variable, entry] of env) {
          assert.isTrue(names.has(variable), `${name}: ${variable} is not a setting of the gateway (Settings.ts)`)
          if (secret.has(variable)) assert.isDefined(entry.valueFrom?.secretKeyRef, `${name}: ${variable} comes from a Secret, never a value`)
        }
        const unaccounted = Settings.all.map((s) => s.name).filter((n) => !env.has(n) && !leftToOperator.has(n))
        assert.deepStrictEqual(unaccounted, [], `${name}: neither set nor named in docs/kubernetes.md's "Settings left to you"`)
      }
      for (const variable of leftToOperator) assert.isTrue(names.has(variable), `docs/kubernetes.md names ${variable}, not a setting`)
      // The built-in providers' keys all have their Secret reference.
      const { container } = workloadOf(rendered.get("scale-out")!)
      for (const key of Settings.providerKeys) assert.isDefined(envOf(container).get(key)?.valueFrom?.secretKeyRef, key)
    })

    it("sizes the memory budget from the limit, and the workers from the CPU limit", () => {
      for (const [name, objects] of rendered) {
        const { container } = workloadOf(objects)
        const limit = quantity(container.resources.limits.memory)
        assert.strictEqual(quantity(container.resources.requests.memory), limit, `${name}: memory is requested as it is limited`)
        // The workers the CPU limit makes share the memory limit; a request of the largest body the
        // embeddings route takes fits the budget each of them derives.
        const workers = Math.ceil(quantity(container.resources.limits.cpu))
        assert.isAtLeast(workers, 1, name)
        assert.isAtLeast(MemoryBudget.budgetFor(limit, limit, workers), MemoryBudget.chargeFor(8 * 1024 * 1024), name)
        assert.deepStrictEqual(envOf(container).get("SWITCHYARD_WORKERS").valueFrom.resourceFieldRef, {
          containerName: "switchyard",
          resource: "limits.cpu",
          divisor: "1"
        }, name)
      }
    })

    it("runs as a non-root user with a read-only root file system, the data directory on a volume, no account token", () => {
      for (const [name, objects] of rendered) {
        const { container, pod } = workloadOf(objects)
        assert.isFalse(pod.automountServiceAccountToken, name)
        assert.isTrue(pod.securityContext.runAsNonRoot, name)
        assert.isTrue(container.securityContext.readOnlyRootFilesystem, name)
        assert.isFalse(container.securityContext.allowPrivilegeEscalation, name)
        const data = envOf(container).get("SWITCHYARD_DATA_DIR").value
        assert.include(container.volumeMounts.map((v: any) => v.mountPath), data, name)
      }
    })

    it("matches the Dockerfile: its user, port, data directory, console directory and command", () => {
      const [uid, gid] = dockerfile.user!.split(":").map(Number)
      assert.deepStrictEqual(dockerfile.expose, ["8080"])
      for (const [name, objects] of rendered) {
        const { container, pod } = workloadOf(objects)
        const env = envOf(container)
        assert.deepStrictEqual([pod.securityContext.runAsUser, pod.securityContext.runAsGroup, pod.securityContext.fsGroup], [uid, gid, gid], name)
        assert.strictEqual(String(container.ports[0].containerPort), dockerfile.expose[0], name)
        for (const variable of ["SWITCHYARD_PORT", "SWITCHYARD_HOST", "SWITCHYARD_DATA_DIR", "SWITCHYARD_CONSOLE_DIR"]) {
          assert.strictEqual(env.get(variable).value, dockerfile.env.get(variable), `${name}: ${variable}`)
        }
        assert.strictEqual(dockerfile.volume, JSON.stringify([env.get("SWITCHYARD_DATA_DIR").value]), name)
        // The image's command runs: Node as PID 1, which receives SIGTERM itself.
        assert.isUndefined(container.command, name)
        assert.strictEqual(dockerfile.cmd, "[\"node\", \"dist/main.mjs\"]")
      }
    })

    it("mounts a config file the gateway accepts where SWITCHYARD_CONFIG names it", () =>
      Effect.gen(function*() {
        for (const [name, objects] of rendered) {
          const { container, pod } = workloadOf(objects)
          const path = envOf(container).get("SWITCHYARD_CONFIG").value as string
          const mount = container.volumeMounts.find((v: any) => path.startsWith(`${v.mountPath}/`))
          const volume = pod.volumes.find((v: any) => v.name === mount.name)
          const map = objects.find((m) => m.kind === "ConfigMap" && m.metadata.name === volume.configMap.name)!
          const text = map.data![NodePath.basename(path)]!
          assert.isString(text, name)
          yield* Catalog.decode(Yaml.parse(text))
        }
      }))

    it("embedded: one StatefulSet pod, its own claim from a template, nothing that scales it, an update that removes the old pod first", () => {
      const objects = rendered.get("embedded")!
      const { workload, pod, container } = workloadOf(objects)
      assert.strictEqual(workload.kind, "StatefulSet")
      assert.strictEqual(workload.spec.replicas, 1)
      assert.strictEqual(workload.spec.podManagementPolicy ?? "OrderedReady", "OrderedReady")
      assert.include(["RollingUpdate", "OnDelete"], workload.spec.updateStrategy.type)
      assert.isUndefined(workload.spec.updateStrategy.rollingUpdate?.maxUnavailable, "one pod at a time, never two")
      assert.isFalse(objects.some((m) => m.kind === "HorizontalPodAutoscaler"), "no autoscaler")
      assert.isFalse(objects.some((m) => m.kind === "PersistentVolumeClaim"), "no claim two pods could name")
      const data = container.volumeMounts.find((v: any) => v.mountPath === envOf(container).get("SWITCHYARD_DATA_DIR").value)
      const claims = workload.spec.volumeClaimTemplates.map((t: any) => t.metadata.name)
      assert.deepStrictEqual(claims, [data.name], "the data directory is the pod's own claim")
      assert.isFalse((pod.volumes ?? []).some((v: any) => v.name === data.name || v.persistentVolumeClaim !== undefined), "no shared claim in the pod")
      for (const template of workload.spec.volumeClaimTemplates) {
        assert.includeMembers(["ReadWriteOnce", "ReadWriteOncePod"], template.spec.accessModes)
      }
      assert.isUndefined(envOf(container).get("DATABASE_URL"))
    })

    it("scale-out: PostgreSQL and Redis from a Secret, several replicas, one new at a time and none lost, spread over nodes", () => {
      const objects = rendered.get("scale-out")!
      const { workload, pod, container } = workloadOf(objects)
      assert.strictEqual(workload.kind, "Deployment")
      assert.isUndefined(workload.spec.replicas, "the autoscaler owns the count")
      const env = envOf(container)
      for (const variable of ["DATABASE_URL", "REDIS_URL", "SWITCHYARD_SECRET_KEY"]) {
        assert.isDefined(env.get(variable).valueFrom.secretKeyRef, variable)
        assert.notStrictEqual(env.get(variable).valueFrom.secretKeyRef.optional, true, `${variable} is required`)
      }
      const hpa = objects.find((m) => m.kind === "HorizontalPodAutoscaler")!
      assert.deepStrictEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: workload.metadata.name })
      assert.isAtLeast(hpa.spec.minReplicas, 2)
      assert.deepStrictEqual(hpa.spec.metrics.map((m: any) => m.resource.name), ["cpu"])
      assert.deepStrictEqual(workload.spec.strategy, { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } })
      const pdb = objects.find((m) => m.kind === "PodDisruptionBudget")!
      assert.strictEqual(pdb.spec.maxUnavailable, 1)
      assert.isTrue(pod.topologySpreadConstraints.some((c: any) => c.topologyKey === "kubernetes.io/hostname" && c.whenUnsatisfiable === "DoNotSchedule"))
      const egressPorts = objects.find((m) => m.kind === "NetworkPolicy")!.spec.egress.flatMap((r: any) => r.ports.map((p: any) => p.port))
      assert.includeMembers(egressPorts, [53, 443, 5432, 6379])
      // Every selector picks the gateway's pods by the labels they carry.
      const labels = workload.spec.template.metadata.labels
      for (const selector of [workload.spec.selector.matchLabels, pdb.spec.selector.matchLabels, objects.find((m) => m.kind === "Service")!.spec.selector]) {
        for (const [k, v] of Object.entries(selector)) assert.strictEqual(labels[k], v, k)
      }
    })
  }
)

describe("the probes the manifests name, on a started gateway", () => {
  it("readiness (/api/v1/health) answers 503 while the store is away and liveness (/livez) 200, then both 200", async (context) => {
    if (!(await postgresReachable())) {
      if (process.env.CI !== undefined) throw new Error("PostgreSQL is not reachable")
      return context.skip()
    }
    const database = await freshDatabase()
    const link = await startStoreRelay(database)
    const server = await startServer({ databaseUrl: link.url })
    const get = async (path: string) => (await fetch(`${server.origin}${path}`, { signal: AbortSignal.timeout(15_000) })).status
    try {
      assert.deepStrictEqual([await get("/api/v1/health"), await get("/livez")], [200, 200])
      await link.cut()
      assert.deepStrictEqual([await get("/api/v1/health"), await get("/livez")], [503, 200])
      const body = await (await fetch(`${server.origin}/livez`)).json()
      assert.deepStrictEqual(body, { status: "alive" })
      await link.open()
      let ready = await get("/api/v1/health")
      // The pool may hand out one connection the cut broke before it finds out.
      for (let i = 0; i < 20 && ready !== 200; i++) ready = await get("/api/v1/health")
      assert.strictEqual(ready, 200)
    } finally {
      await link.open().catch(() => undefined)
      await server.close().catch(() => undefined)
      await dropDatabase(database)
    }
  }, 60_000)
})
