/**
 * The denial text each backend's kernel mechanisms produce (errno strings, lower case): EACCES
 * for Landlock; EROFS for bubblewrap's read-only binds, and EACCES for the Landlock write domain
 * cordon layers inside (existing FIFOs, reopens); EPERM for Seatbelt.
 */
export const DENIAL_SIGNATURES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['permission denied'],
  bubblewrap: ['read-only file system', 'permission denied', 'device or resource busy'],
  seatbelt: ['operation not permitted'],
}

/** The same refusals' errno codes, as tools print them bare (`npm error code EACCES`). */
export const DENIAL_CODES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['EACCES'],
  bubblewrap: ['EROFS', 'EACCES'],
  seatbelt: ['EPERM'],
}
