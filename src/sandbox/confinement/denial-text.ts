/** The dialect of a Landlock run that sees the host through a read-only view (native/mount-view.h). */
export const LANDLOCK_VIEW = 'landlock-view'

/**
 * The denial text each backend's kernel mechanisms produce (errno strings, lower case): EACCES
 * for Landlock, and EROFS too where a read-only run's mount view refuses first (LANDLOCK_VIEW);
 * EROFS for bubblewrap's read-only binds, and EACCES for the Landlock write domain cordon layers
 * inside (existing FIFOs, reopens); EPERM for Seatbelt.
 */
export const DENIAL_SIGNATURES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['permission denied'],
  [LANDLOCK_VIEW]: ['permission denied', 'read-only file system'],
  bubblewrap: ['read-only file system', 'permission denied', 'device or resource busy'],
  seatbelt: ['operation not permitted'],
}

/** The same refusals' errno codes, as tools print them bare (`npm error code EACCES`). */
export const DENIAL_CODES: Readonly<Record<string, readonly string[]>> = {
  landlock: ['EACCES'],
  [LANDLOCK_VIEW]: ['EACCES', 'EROFS'],
  bubblewrap: ['EROFS', 'EACCES'],
  seatbelt: ['EPERM'],
}
