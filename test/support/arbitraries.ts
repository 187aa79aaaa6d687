/** fast-check arbitraries the boundary property tests share. */
import fc from 'fast-check'

/** Any JSON-ish value a caller could pass where a field is expected (plus the `extra` words given). */
export function anyValueOf(...extra: readonly unknown[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant({}),
    fc.constant([]),
    fc.constant(Object.create(null)),
    ...extra.map((v) => fc.constant(v)),
  )
}
