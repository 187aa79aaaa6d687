// The load suite (test/load/suite.ts) on the bubblewrap backend.
import { scratchDir } from '../support/scratch.js'
import { describeLoad } from './suite.js'

await describeLoad('bubblewrap', scratchDir('cordon-load-bubblewrap'))
