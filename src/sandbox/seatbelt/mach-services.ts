/**
 * The mach-lookup allow-list: which host daemons a Seatbelt-confined command may talk to.
 *
 * On macOS most services a process uses (user lookups, preferences, TLS trust, the keychain,
 * launching apps) are daemons reached by mach-lookup, so the allow-list is where the `ipc`,
 * `keyrings` and part of the `network` class are decided. The default list is data
 * (`profiles/seatbelt/mach-services.json`, one reason per entry), read once at module load.
 */
import fs from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { PACKAGE_ROOT } from '../../policy/package-root.js'
import { onDemand, zod } from '../../policy/schema/zod-on-demand.js'

/** A mach service name: reverse-DNS words, nothing SBPL or a shell could read as syntax. */
export const MACH_SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** Where the default allow-list lives (derived from the package root). */
export const MACH_SERVICES_URL = pathToFileURL(path.join(PACKAGE_ROOT, 'profiles/seatbelt/mach-services.json'))

/** One allowed service and why a command needs it. */
export interface MachServiceEntry {
  readonly name: string
  readonly why: string
  /** The service carries or resolves network traffic: left out under `network: 'deny'`. */
  readonly network?: boolean | undefined
}

/** The table's schema (built on first use): the unit tests hold the checked-in file to it, the runtime trusts it. */
export const machServicesTableSchema = onDemand(() => {
  const { z } = zod()
  return z
    .object({
      $comment: z.string().optional(),
      version: z.literal(1),
      services: z.array(
        z
          .object({
            name: z.string().regex(MACH_SERVICE_NAME),
            why: z.string().min(1),
            network: z.boolean().optional(),
          })
          .strict(),
      ),
    })
    .strict()
})

function loadDefaults(): readonly MachServiceEntry[] {
  const table = JSON.parse(fs.readFileSync(MACH_SERVICES_URL, 'utf8')) as { version?: unknown; services?: unknown }
  // A name that is not a service name would be SBPL syntax: that one check stays at run time.
  const services = Array.isArray(table.services) ? (table.services as MachServiceEntry[]) : undefined
  if (table.version !== 1 || services === undefined || !services.every((e) => MACH_SERVICE_NAME.test(e?.name)))
    throw new Error(`${MACH_SERVICES_URL.pathname}: not a version-1 table of mach service names`)
  return Object.freeze(services.map((s) => Object.freeze({ ...s })))
}

/** The default allow-list, in file order. */
export const DEFAULT_MACH_SERVICES: readonly MachServiceEntry[] = loadDefaults()

/**
 * Services that carry or resolve network traffic, whether or not the caller's list says so:
 * the default list's `network` entries plus the resolver daemons.
 */
export const NETWORK_MACH_SERVICES: readonly string[] = Object.freeze([
  ...DEFAULT_MACH_SERVICES.filter((s) => s.network === true).map((s) => s.name),
  'com.apple.dnssd.service',
  'com.apple.mDNSResponder',
  'com.apple.nsurlsessiond',
  'com.apple.nehelper',
  'com.apple.networkd',
])

/** Prefixes of the services that hand out keychain secrets (the macOS analogue of kernel keyrings). */
export const KEYCHAIN_MACH_SERVICE_PREFIXES: readonly string[] = Object.freeze([
  'com.apple.SecurityServer',
  'com.apple.securityd',
  'com.apple.security.',
  'com.apple.secd',
])

/** Whether `name` reaches the keychain. */
export function isKeychainService(name: string): boolean {
  return KEYCHAIN_MACH_SERVICE_PREFIXES.some((prefix) => name.startsWith(prefix))
}

/** Whether `name` carries or resolves network traffic. */
export function isNetworkService(name: string): boolean {
  return NETWORK_MACH_SERVICES.includes(name)
}
