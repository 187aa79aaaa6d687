/**
 * cordon's tools for `@anthropic-ai/sdk`: client tools (`input_schema`) for `messages.create`,
 * and the way back, a `tool_use` block run into the `tool_result` block that answers it
 * (`is_error` when the tool's result is an error). Only the package's types are imported.
 *
 * @example
 * const cordon = toAnthropicTools(createBashTools({ executor }).tools, { cwd })
 * const message = await client.messages.create({ model, max_tokens, messages, tools: cordon.tools })
 * messages.push({ role: 'assistant', content: message.content })
 * messages.push({ role: 'user', content: await cordon.runAll(message.content) })
 */
import type { ContentBlock, Tool, ToolResultBlockParam, ToolUseBlock } from '@anthropic-ai/sdk/resources/messages'
import { zod } from '../policy/schema/zod-on-demand.js'
import type { ModelTool } from '../tool/model-tool.js'
import { checkAdapterInput, type RunOptions, SESSION_FIELDS, type SessionContext, toolRunner } from './session.js'

export type { RunOptions, SessionContext } from './session.js'

const { z } = zod()

/** cordon's tools for the Messages API. */
export interface AnthropicTools {
  /** The client tools to pass as `tools` to `client.messages.create`. */
  readonly tools: Tool[]
  /** Whether a `tool_use` block is for one of these tools (a harness's own are not). */
  owns(name: string): boolean
  /** Runs one `tool_use` block; its result is the `tool_result` block to send back in a user message. */
  run(block: ToolUseBlock, options?: RunOptions): Promise<ToolResultBlockParam>
  /** Runs, in order, every `tool_use` block of `content` that is for these tools; the others are left to the harness. */
  runAll(content: readonly ContentBlock[], options?: RunOptions): Promise<ToolResultBlockParam[]>
}

const OptionsSchema = z.strictObject(SESSION_FIELDS, {
  error: 'expected { agent?, sessionId?, cwd?, sessionMode? }',
})

/** The tools as Anthropic client tools, and their calls run into `tool_result` blocks (checked: a bad argument throws InvalidRequestError). */
export function toAnthropicTools(tools: readonly ModelTool[], options?: SessionContext): AnthropicTools {
  const session = checkAdapterInput('toAnthropicTools', tools, options, OptionsSchema)
  const runner = toolRunner(tools, session)
  const run = async (block: ToolUseBlock, runOptions?: RunOptions): Promise<ToolResultBlockParam> => {
    const result = await runner.run(block.name, block.input, block.id, runOptions)
    const answer: ToolResultBlockParam = { type: 'tool_result', tool_use_id: block.id, content: result.content }
    if (result.isError) answer.is_error = true
    return answer
  }
  return {
    tools: tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema })),
    owns: runner.owns,
    run,
    async runAll(content, runOptions) {
      const results: ToolResultBlockParam[] = []
      for (const block of content)
        if (block.type === 'tool_use' && runner.owns(block.name)) results.push(await run(block, runOptions))
      return results
    },
  }
}
