/** The host a Linux plan is built for: the addon's facts (capabilities, arch) and what the probe found. */
import type { BackendCapability } from '../../policy/backends.js'
import type { NativeAddon } from '../../subprocess/native.js'
import { portableHostCapabilities } from '../../subprocess/portable/host.js'
import { KNOWN_ABI } from '../ruleset/landlock.js'
import { hostSeccompArch } from '../seccomp/bpf.js'
import { hostBounds } from './bounds.js'
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
    bounds: hostBounds(),
  }
}

/** The plan host of one plan request: the addon's facts (or the portable path's) and the probed capability. */
export function requestHost(
  native: Pick<NativeAddon, 'hostCapabilities'> | undefined,
  cap: BackendCapability,
  namespaces: boolean,
): PlanHost {
  return landlockHost(native ?? { hostCapabilities: portableHostCapabilities }, {
    abi: cap.abi ?? 0,
    seccomp: cap.seccomp === true,
    supervisor: cap.supervisor === true,
    namespaces,
  })
}
