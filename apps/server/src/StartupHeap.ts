/**
 * Start-up leaves V8's young generation at its largest: loading and building the server survives
 * most of its scavenges, so V8 doubles the semi-spaces up to 16 MB each (about 30 MB resident) and
 * keeps them while the gateway idles. V8 gives such memory back by itself through its memory
 * reducer (a mark-compact that shrinks the young generation and releases freed pages, started a
 * few seconds after the heap last grew, once allocation is low), but nothing after start-up wakes
 * it: without a request the old generation never grows again, and the gateway sat at start-up's
 * size for good (`pnpm bench`'s idle RSS). A throw-away `vm` context, made once the gateway is
 * ready, is that growth: a few hundred kilobytes in the old generation, and V8 reduces the heap
 * within about half a minute of idling. It costs nothing per request; under load the collections
 * that load causes wake the reducer as usual.
 */
import * as Vm from "node:vm"

/** Once, when the gateway is ready: lets V8 give back the young generation start-up grew. */
export const letV8Shrink = (): void => {
  Vm.createContext()
}
