// A harness-like host process for the escape scenarios that need one of their own (started as
// root or, through setpriv, as nobody by run-as.ts): it runs one scenario and writes the result
// as JSON to a file (its stdout may be the very file or terminal under attack).
// argv: <scenario> <result file> <JSON arguments>.
import type { SandboxBackendName } from '../../../src/sandbox/probe.js'
import { type InheritedCase, inheritedFile, inheritedTerminal } from '../descriptors/inherited-scenario.js'
import { hostToKill, type LifetimeCase, lifetimeCases } from '../processes/lifetime-scenario.js'
import { rootIdentity } from '../roots/roots-scenario.js'
import { rulesetLifetime } from '../roots/rulesets-scenario.js'
import { writeResultFile } from './result-file.js'

interface Args {
  cases: LifetimeCase[] & InheritedCase[]
  ready?: string
  file?: string
  /** roots: the host runs in a private mount namespace and may mount pseudo-filesystems. */
  privateMounts?: boolean
}

const [scenario, resultFile, json] = process.argv.slice(2)
if (!scenario || !resultFile || !json) throw new Error('usage: scenario-host <scenario> <result file> <json>')
const args = JSON.parse(json) as Args

async function run(): Promise<unknown> {
  switch (scenario) {
    case 'lifetime':
      return lifetimeCases(args.cases)
    case 'host-to-kill':
      return hostToKill(args.cases, args.ready!)
    case 'inherited-file':
      return inheritedFile(args.cases, args.file!)
    case 'inherited-terminal':
      return inheritedTerminal(args.cases)
    case 'rulesets':
      return Promise.all(args.cases.map((c) => rulesetLifetime(c.backend as SandboxBackendName, c.root)))
    case 'roots':
      return Promise.all(
        args.cases.map((c) => rootIdentity(c.backend as SandboxBackendName, c.root, args.privateMounts === true)),
      )
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
}

await writeResultFile(resultFile, run)
