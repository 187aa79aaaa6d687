// The one way tests catch a boundary error: it must be an InvalidRequestError (any realm).
import { expect } from 'vitest'
import { isInvalidRequestError, type InvalidRequestError } from '../../src/policy/errors.js'

/** Runs `fn`, which must throw an InvalidRequestError; returns it. */
export function invalid(fn: () => unknown): InvalidRequestError {
  try {
    fn()
  } catch (error) {
    expect(isInvalidRequestError(error)).toBe(true)
    return error as InvalidRequestError
  }
  throw new Error('expected an InvalidRequestError')
}
