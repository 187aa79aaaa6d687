/**
 * What a person can do when a backend cannot confine here, in one place: every remedy text the
 * probe, the verdicts and SANDBOX_UNAVAILABLE show. Where the last resort is choosing
 * danger-full-access, it is said the same way (the default keeps the reference's own words).
 */

/** The last resort every remedy ends with. */
export const LAST_RESORT = 'or choose danger-full-access'

/** When no backend can enforce a confined mode: the reference's text, for the platforms cordon runs on. */
export const DEFAULT_SANDBOX_REMEDY =
  'Install bubblewrap or run a Landlock-enforcing kernel (Linux), or ensure sandbox-exec is usable (macOS) — otherwise switch the consumer to danger-full-access.'

/** After a runner failure at run time: nothing ran. */
export const REMEDY_RUNNER_FAILED = `Nothing was run. Re-probe the host (clearProbeCache(), then LocalSandbox.create) to see which backend still works, ${LAST_RESORT}.`

/** A Linux-only backend on another platform. */
export const REMEDY_LINUX_ONLY = `Use a Linux host, ${LAST_RESORT}.`

/** Landlock on another platform. */
export const REMEDY_LINUX_LANDLOCK = `Use a Linux host with Landlock, ${LAST_RESORT}.`

/** An architecture cordon has no syscall table for. */
export const REMEDY_ARCH = `Run on x86_64 or aarch64, ${LAST_RESORT}.`

/** The kernel has no Landlock at all. */
export const REMEDY_NO_LANDLOCK = `Boot a Linux kernel >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y (ABI 6+, Linux 6.12+, for full enforcement), install bubblewrap for the bubblewrap backend, ${LAST_RESORT}.`

/** Landlock is built in but not enabled at boot. */
export const REMEDY_LANDLOCK_DISABLED = `Landlock is built into this kernel but not enabled: add "landlock" to the lsm= kernel parameter (e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot, ${LAST_RESORT}.`

/** The native addon or the cordon-exec helper is missing. */
export const REMEDY_BUILD_HELPER =
  'Build the native parts with `npm run build:native` (needs python3, make and a C++ compiler), or reinstall cordon.'

/** A confinement step (no_new_privs, seccomp) failed before the canary ran. */
export const REMEDY_CHECK_SECCOMP = `Check that the kernel allows no_new_privs and seccomp filters (CONFIG_SECCOMP_FILTER), ${LAST_RESORT}.`

/** The backend accepted the plan but its canary was not refused: something on this host defeats it. */
export function remedyDefeated(backend: string, why: string): string {
  return `Do not rely on ${backend} on this host (${why}); use another backend ${LAST_RESORT}.`
}

/** Landlock's ABI is older than the signal scope. */
export const REMEDY_LANDLOCK_ABI_6 = 'upgrade the kernel to 6.12+ (Landlock ABI 6) for the signal scope'

/** Landlock is partial under workspace-write (metadata outside the roots). */
export const REMEDY_LANDLOCK_WORKSPACE_WRITE =
  'workspace-write is partial under Landlock (metadata outside the root); the bubblewrap backend enforces it fully.'

/** No `bwrap` on the PATH. */
export const REMEDY_INSTALL_BUBBLEWRAP = `install bubblewrap: apt-get install -y bubblewrap (Debian/Ubuntu), dnf install -y bubblewrap (Fedora), apk add bubblewrap (Alpine), and put it on PATH; ${LAST_RESORT}.`

/** User namespaces are refused, and `how` says which switch allows them. */
export function remedyUserNamespaces(how: string): string {
  return `unprivileged user namespaces are disabled or refused: ${how}; or use the landlock backend, ${LAST_RESORT}.`
}

/** bwrap refused to build the sandbox for another reason. */
export const REMEDY_BWRAP_REFUSED = `bwrap cannot build the sandbox on this host; run \`bwrap --ro-bind / / true\` to see why, use the landlock backend, ${LAST_RESORT}.`

/** Under bubblewrap without seccomp. */
export const REMEDY_BWRAP_NO_SECCOMP =
  'seccomp filters do not load here: keyrings and terminal injection are ungoverned (make bwrap non-setuid, or enable CONFIG_SECCOMP_FILTER)'

/** sandbox-exec is missing or cannot apply a profile (macOS). */
export const REMEDY_SANDBOX_EXEC = `Seatbelt needs /usr/bin/sandbox-exec, which every macOS ships: check that it exists and runs (\`/usr/bin/sandbox-exec -p "(version 1)(allow default)" /usr/bin/true\`); inside another sandbox (an agent harness, an app sandbox) a nested profile cannot be applied: run cordon outside it, ${LAST_RESORT}.`

/** The Seatbelt profile refuses what it must allow on this macOS version. */
export const REMEDY_SEATBELT_OVERREACH =
  'The profile refuses what it must allow on this macOS version: report it with `cordon explain --backend seatbelt`, and choose another backend or danger-full-access.'

/** This macOS does not enforce the Seatbelt profile as written. */
export const REMEDY_SEATBELT_UNENFORCED =
  'Do not rely on Seatbelt on this host (this macOS version does not enforce the profile as written); choose danger-full-access only knowingly.'

/** A program the host would run (bwrap, cordon-exec, sandbox-exec) failed the trusted-program check. */
export const REMEDY_UNTRUSTED_PROGRAM = `cordon runs only programs owned by root or by you and writable by neither group nor others, the file and every directory above it: install bubblewrap from the system's packages (/usr/bin/bwrap) or point CORDON_BWRAP (or the \`programs.bwrap\` option) at such a file, fix the ownership or mode named above, ${LAST_RESORT}.`

/** Remedy when a network allow-list cannot be enforced: it never falls back to the host's network. */
export const REMEDY_ALLOW_LIST = `A network allow-list needs a private network namespace whose only way out is cordon's proxy: on Linux, run as root or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), keep the native addon built (npm rebuild cordon), or use network "deny"; ${LAST_RESORT}.`

/**
 * The `cordon run` flags that open each class a backend closes whole (src/sandbox/closed-classes/):
 * bubblewrap gives each run a /dev/shm and a /dev/pts of its own (Landlock closes /dev), and a cut
 * network refuses socket(AF_UNIX) (every socket() without a private network namespace).
 */
export const CLOSED_CLASS_REMEDIES = Object.freeze({
  'shared-memory': '--backend bubblewrap',
  terminals: '--backend bubblewrap',
  'unix-sockets': '--network inherit',
  sockets: '--network inherit',
  /** Under an allow-list, which `--network inherit` cannot be added to. */
  allowList: 'drop --allow-host and --deny-host (an allow-list cuts unix sockets as --network deny does)',
} as const)

/** A project config wider than the defaults and the user config: it may only narrow them. */
export const REMEDY_CONFIG_LAYERS =
  'A project config may only narrow: give the wider setting in your user config, in --config FILE or as a flag, or remove it from the project config.'

/** A project config changed wider since cordon last loaded it (a run may have changed it). */
export const REMEDY_CONFIG_CHANGED =
  'If you made this change, accept it once with --accept-config (API: acceptChanged: true), which records the file as it is now; otherwise restore the file.'

/** cordon cannot make its private directories (a full disk, a read-only or refused parent): nothing ran. */
export const REMEDY_PRIVATE_DIR = `Nothing was run. Free space where cordon keeps its private directories, or point CORDON_PRIVATE_DIR at a directory of yours (mode 0700) with room, ${LAST_RESORT}.`
