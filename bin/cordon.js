#!/usr/bin/env node
'use strict'
// The `cordon` command (bin/cli-loader.js loads the CLI).
require('./cli-loader.js')
  .run(process.argv.slice(2))
  .then((status) => {
    process.exitCode = status
  })
