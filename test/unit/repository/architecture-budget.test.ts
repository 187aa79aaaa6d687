// ARCHITECTURE.md stays a ten-minute read: at most 2,500 words, no sentence over 40 words, and a
// Recipes section with the six recipes a newcomer asks for. The checker is shown to catch a long
// document, a long sentence and a missing recipe on small inputs.
//
// How it counts:
// - A word is a whitespace-separated token with a letter or a digit in it, anywhere in the file:
//   prose, headings, tables and fenced code blocks alike (everything there is read). A backticked
//   `path:symbol` is one word; `|`, `-` and `→` alone are none.
// - Sentences are taken from prose blocks only: paragraphs (lines up to a blank line) and list
//   items (each starting at `- ` or `N. `). Headings, table rows and fenced code blocks are not
//   sentences. A sentence ends after `.`, `!` or `?` followed by a space or the end of its block,
//   so a block that ends without a full stop (a list item) is a sentence too.
import fs from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const repo = path.resolve(import.meta.dirname, '..', '..', '..')
const doc = fs.readFileSync(path.join(repo, 'ARCHITECTURE.md'), 'utf8')

const MAX_WORDS = 2500
const MAX_SENTENCE_WORDS = 40
const RECIPES = [
  'Add a hidden default',
  'Add an effect class',
  'Add a backend',
  'Add a spawn stage',
  'Add a seccomp rule',
  'Add a CLI flag',
]

/** The words of `text` (tokens with a letter or digit). */
function words(text: string): string[] {
  return text.split(/\s+/).filter((t) => /[\p{L}\p{N}]/u.test(t))
}

/** The prose blocks of `markdown`: paragraphs and list items, without headings, tables and fences. */
function proseBlocks(markdown: string): string[] {
  const blocks: string[] = []
  let current: string[] = []
  let fenced = false
  const end = () => {
    if (current.length) blocks.push(current.join(' '))
    current = []
  }
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) {
      end()
      fenced = !fenced
      continue
    }
    if (fenced) continue
    if (line.trim() === '' || /^\s*#/.test(line) || /^\s*\|/.test(line)) {
      end()
      continue
    }
    if (/^\s*(?:[-*]|\d+\.)\s/.test(line)) end()
    current.push(line.trim())
  }
  end()
  return blocks
}

/** The sentences of `markdown`'s prose. */
function sentences(markdown: string): string[] {
  return proseBlocks(markdown)
    .flatMap((block) => block.split(/(?<=[.!?])\s+/))
    .map((s) => s.trim())
    .filter((s) => words(s).length > 0)
}

/** The `### ` headings of the `## Recipes` section. */
function recipesOf(markdown: string): string[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Recipes\n'))
  if (section === undefined) return []
  return [...section.matchAll(/^### (.+)$/gm)].map((m) => m[1]!.trim())
}

/** Every way `markdown` breaks the budget (empty when it keeps it). */
function budgetProblems(markdown: string, maxWords = MAX_WORDS, maxSentence = MAX_SENTENCE_WORDS): string[] {
  const problems: string[] = []
  const total = words(markdown).length
  if (total > maxWords) problems.push(`${total} words (at most ${maxWords})`)
  for (const s of sentences(markdown)) {
    const n = words(s).length
    if (n > maxSentence) problems.push(`a sentence of ${n} words (at most ${maxSentence}): ${s.slice(0, 80)}…`)
  }
  const recipes = recipesOf(markdown)
  for (const r of RECIPES) if (!recipes.includes(r)) problems.push(`no recipe "${r}"`)
  return problems
}

describe('ARCHITECTURE.md budget', () => {
  it(`has at most ${MAX_WORDS} words, no sentence over ${MAX_SENTENCE_WORDS} words, and the six recipes`, () => {
    expect(budgetProblems(doc)).toEqual([])
  })

  it('every recipe names the files to touch and a test to add', () => {
    const section = doc.split(/^## /m).find((s) => s.startsWith('Recipes\n')) ?? ''
    for (const recipe of section.split(/^### /m).slice(1)) {
      const title = recipe.split('\n')[0]
      expect(recipe.match(/`(?:src|native|profiles)\/[^`]+`/g)?.length ?? 0, title).toBeGreaterThanOrEqual(2)
      expect(recipe, title).toMatch(/`test\/[^`]+\.ts`/)
    }
  })

  it('the checker counts words and sentences as its comment says', () => {
    const md = [
      '# A heading is not a sentence but its words count',
      '',
      'One two three. Four `src/a.ts:b` six? Seven — eight',
      'nine.',
      '',
      '- a list item without a full stop',
      '- another, e.g. with an abbreviation',
      '',
      '| a table row | is not a sentence |',
      '',
      '```',
      'code is not a sentence. its words count',
      '```',
    ].join('\n')
    expect(sentences(md)).toEqual([
      'One two three.',
      'Four `src/a.ts:b` six?',
      'Seven — eight nine.',
      '- a list item without a full stop',
      '- another, e.g.',
      'with an abbreviation',
    ])
    expect(words(md)).toHaveLength(10 + 9 + 7 + 6 + 7 + 7)
  })

  it('the checker catches too many words, a long sentence and a missing recipe', () => {
    const recipes = `## Recipes\n\n${RECIPES.map((r) => `### ${r}\n`).join('\n')}`
    expect(budgetProblems(recipes)).toEqual([])
    const long = `${Array.from({ length: 41 }, (_, i) => `w${i}`).join(' ')}.`
    const forty = `${Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ')}.`
    expect(budgetProblems(`${forty}\n\n${recipes}`)).toEqual([])
    expect(budgetProblems(`${long}\n\n${recipes}`)).toEqual([expect.stringMatching(/^a sentence of 41 words/)])
    // A table row or a code line of 41 words is not a sentence.
    expect(budgetProblems(`| ${long} |\n\n\`\`\`\n${long}\n\`\`\`\n\n${recipes}`)).toEqual([])
    expect(budgetProblems(`${forty}\n\n${recipes}`, 45)).toEqual([expect.stringMatching(/^\d+ words \(at most 45\)/)])
    expect(budgetProblems(recipes.replace('### Add a backend\n', ''))).toEqual(['no recipe "Add a backend"'])
  })
})
