/** The host a Linux plan is built for: the addon's facts (capabilities, arch) and what the probe found. */
import type { NativeAddon } from '../../subprocess/native.js'
import { KNOWN_ABI } from '../ruleset/landlock.js'
import { hostSeccompArch } from '../seccomp/bpf.js'
import type { PlanHost } from './plan.js'

/** The host facts a Landlock plan needs, from the addon and what the probe found. */
export function landlockHost(
  native: Pick<NativeAddon, 'hostCapabilities'>,
  facts: { abi: number; seccomp: boolean; supervisor: boolean; namespaces: boolean },
): PlanHost {
  const caps = native.hostCapabilities()
  const uid = process.getuid?.() ?? 0
  return {
    arch: hostSeccompArch() ?? 'x86_64',
    abi: Math.min(facts.abi, KNOWN_ABI),
    seccomp: facts.seccomp,
    supervisor: facts.supervisor,
    setpcap: caps.setpcap,
    capLast: caps.capLast,
    uid,
    namespaces: { available: facts.namespaces, viaUserNamespace: uid !== 0 },
  }
}
