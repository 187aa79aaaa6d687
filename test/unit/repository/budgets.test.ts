// The house's size budgets, held by a ratchet: at most 400 lines per src file, at most 12 files per
// folder of src/ and test/, no three files of one folder sharing a prefix, and Biome's function
// length and cognitive complexity limits. A place over budget today is listed at its size
// (budget-allowances.json, and Biome's per-file overrides in biome.json); the guard fails when it
// grows, when it shrinks without its allowance being lowered with it, and when the lists name a
// place that was not over budget when the guard landed (a move renames an entry, nothing adds one).
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  BUDGET,
  type Allowances,
  allowanceProblems,
  biomeAllowances,
  filesPerFolder,
  functionMeasures,
  linesPerFile,
  sharedPrefixes,
  prefixGroups,
} from '../../support/repository/budgets.js'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const allowances = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, 'budget-allowances.json'), 'utf8'),
) as Allowances
const biome = biomeAllowances(JSON.parse(fs.readFileSync(path.join(repo, 'biome.json'), 'utf8')))

/**
 * The places over budget when the guard landed (renamed by the move commits that renamed them).
 * An allowance may only name one of these: new code meets the budget.
 */
const LANDED: Readonly<Record<keyof Allowances | 'functionLines' | 'cognitiveComplexity', readonly string[]>> = {
  linesPerFile: [],
  filesPerFolder: [],
  filesSharingPrefix: [],
  functionLines: [
    'src/cli/explain.ts',
    'src/cli/run.ts',
    'src/sandbox/landlock/account.ts',
    'src/sandbox/bubblewrap/probe.ts',
    'src/sandbox/landlock/probe.ts',
    'src/sandbox/view/protected-paths.ts',
    'src/sandbox/seatbelt/account.ts',
    'src/sandbox/seatbelt/probe.ts',
    'src/tool/bash-tool.ts',
  ],
  cognitiveComplexity: [
    'src/cli/explain.ts',
    'src/cli/policy-options.ts',
    'src/cli/probe.ts',
    'src/cli/run.ts',
    'src/policy/grants.ts',
    'src/policy/resolve.ts',
    'src/sandbox/bubblewrap/argv.ts',
    'src/sandbox/landlock/account.ts',
    'src/sandbox/bubblewrap/probe.ts',
    'src/sandbox/landlock/probe.ts',
    'src/sandbox/view/protected-paths.ts',
    'src/sandbox/view/read-view.ts',
    'src/sandbox/seatbelt/profile.ts',
    'src/tool/bash-tool.ts',
  ],
}

describe('size budgets', () => {
  it('no src file is over 400 lines but those allowed, each at its size', () => {
    expect(
      allowanceProblems('lines', linesPerFile(repo), BUDGET.linesPerFile, allowances.linesPerFile, LANDED.linesPerFile),
    ).toEqual([])
  })

  it('no folder of src/ or test/ holds over 12 files but those allowed, each at its count', () => {
    expect(
      allowanceProblems(
        'files',
        filesPerFolder(repo),
        BUDGET.filesPerFolder,
        allowances.filesPerFolder,
        LANDED.filesPerFolder,
      ),
    ).toEqual([])
  })

  it('no three files of one folder share a prefix but those allowed', () => {
    expect(
      allowanceProblems(
        'files sharing the prefix',
        sharedPrefixes(repo),
        BUDGET.filesSharingPrefix,
        allowances.filesSharingPrefix,
        LANDED.filesSharingPrefix,
      ),
    ).toEqual([])
  })

  it("Biome's per-file function allowances are each file's longest and most complex function", () => {
    const measured = functionMeasures(repo)
    expect(biome.base).toEqual({ functionLines: BUDGET.functionLines, cognitiveComplexity: BUDGET.cognitiveComplexity })
    expect([
      ...allowanceProblems(
        'lines in its longest function',
        measured.functionLines,
        BUDGET.functionLines,
        biome.functionLines,
        LANDED.functionLines,
      ),
      ...allowanceProblems(
        'cognitive complexity in its most complex function',
        measured.cognitiveComplexity,
        BUDGET.cognitiveComplexity,
        biome.cognitiveComplexity,
        LANDED.cognitiveComplexity,
      ),
    ]).toEqual([])
  })
})

describe('the ratchet', () => {
  const measured = new Map([
    ['a.ts', 500],
    ['b.ts', 450],
    ['c.ts', 300],
    ['d.ts', 420],
  ])
  it('reports a place over budget, one that grew, one that shrank, one no longer there and one never listed', () => {
    const problems = allowanceProblems(
      'lines',
      measured,
      400,
      { 'a.ts': 480, 'b.ts': 460, 'c.ts': 410, 'gone.ts': 500, 'd.ts': 420 },
      ['a.ts', 'b.ts', 'c.ts', 'gone.ts'],
    )
    expect(problems).toEqual([
      'a.ts: 500 lines, over its allowance of 480',
      'b.ts: 450 lines, under its allowance of 460: lower the allowance to 450',
      'c.ts: 300 lines, within the budget of 400: remove its allowance',
      'gone.ts: allowed 500 lines, but it is not there (renamed? rename the entry)',
      'd.ts: allowed though it was not over budget when the guard landed: bring it within 400 lines',
    ])
    expect(allowanceProblems('lines', measured, 400, {}, [])).toEqual([
      'a.ts: 500 lines, over the budget of 400',
      'b.ts: 450 lines, over the budget of 400',
      'd.ts: 420 lines, over the budget of 400',
    ])
  })

  it('groups the files of a folder by the text before their first - or ., and counts each group of two or more', () => {
    const groups = prefixGroups([
      'src/a/probe.ts',
      'src/a/probe-landlock.ts',
      'src/a/probe-bubblewrap.ts',
      'src/a/seccomp.ts',
      'src/a/seccomp-policy.ts',
      'src/a/plan.ts',
      'src/b/probe.ts',
    ])
    expect(groups).toEqual(
      new Map([
        ['src/a/probe*', 3],
        ['src/a/seccomp*', 2],
      ]),
    )
    expect(allowanceProblems('files sharing the prefix', groups, 2, {}, [])).toEqual([
      'src/a/probe*: 3 files sharing the prefix, over the budget of 2',
    ])
  })

  it("reads Biome's base limits and per-file overrides", () => {
    const read = biomeAllowances({
      overrides: [
        {
          includes: ['src/**'],
          linter: {
            rules: {
              complexity: {
                noExcessiveLinesPerFunction: { level: 'error', options: { maxLines: 60 } },
                noExcessiveCognitiveComplexity: { level: 'error', options: { maxAllowedComplexity: 20 } },
              },
            },
          },
        },
        {
          includes: ['src/x.ts'],
          linter: {
            rules: { complexity: { noExcessiveLinesPerFunction: { level: 'error', options: { maxLines: 90 } } } },
          },
        },
      ],
    })
    expect(read).toEqual({
      base: { functionLines: 60, cognitiveComplexity: 20 },
      functionLines: { 'src/x.ts': 90 },
      cognitiveComplexity: {},
    })
  })
})
