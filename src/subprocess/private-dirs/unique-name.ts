/**
 * Name suffixes for the files cordon creates in its own directories (spill files, failure logs).
 * They need to be unguessable to other processes, not cryptographic: every such file is created
 * with O_EXCL (a planted name fails, never followed) or read with O_NOFOLLOW. Math.random keeps
 * node:crypto out of a command's start-up (loading it costs ~2 ms).
 */

/** 12 hex digits (48 bits) nobody outside this process can predict. */
export function uniqueSuffix(): string {
  const draw = () =>
    Math.floor(Math.random() * 0x1000000)
      .toString(16)
      .padStart(6, '0')
  return draw() + draw()
}
