// The load suite (test/load/suite.ts) unconfined (danger-full-access): the baseline of the others.
import { scratchDir } from '../support/scratch.js'
import { describeUnconfined } from './suite.js'

describeUnconfined(scratchDir('cordon-load-unconfined'))
