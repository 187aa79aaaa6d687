// placeholder: replaced by the proxy branch
import type { NetworkFacts } from '../../policy/network/facts.js'
import type { NetworkAllowList } from '../../policy/vocabulary.js'

export interface ProxiedRun {
  facts(): NetworkFacts
  finish(): NetworkFacts
}
export class NetworkProxy {
  attach(_listener: number, _list: NetworkAllowList): ProxiedRun {
    throw new Error('not yet')
  }
  async close(): Promise<void> {}
}
