// The load suite (test/load/suite.ts) on the Landlock backend.
import { scratchDir } from '../support/scratch.js'
import { describeLoad } from './suite.js'

await describeLoad('landlock', scratchDir('cordon-load-landlock'))
