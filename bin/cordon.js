#!/usr/bin/env node
// The `cordon` command: a thin launcher for the compiled CLI.
import { main } from '../dist/cli/main.js'

process.exitCode = await main(process.argv.slice(2))
