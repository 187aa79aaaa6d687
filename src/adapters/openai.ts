/**
 * cordon's tools for the `openai` client (majors 6 and 7): strict function tools for the Responses
 * API or for Chat Completions, and the way back, a model's function call run into the item or
 * message that carries its result. Only the package's types are imported, so this works with
 * whichever major the harness installed.
 *
 * @example
 * const cordon = toOpenAITools(createBashTools({ executor }).tools, { api: 'responses', cwd })
 * const response = await client.responses.create({ model, input, tools: cordon.tools })
 * const outputs = await cordon.runAll(response.output)
 * await client.responses.create({ model, previous_response_id: response.id, input: outputs, tools: cordon.tools })
 */
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageToolCall,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions'
import type {
  FunctionTool,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputItem,
} from 'openai/resources/responses/responses'
import { zod } from '../policy/schema/zod-on-demand.js'
import type { ModelTool } from '../tool/model-tool.js'
import {
  checkAdapterInput,
  type RunOptions,
  runJsonCall,
  SESSION_FIELDS,
  type SessionContext,
  type ToolRunner,
  toolRunner,
} from './session.js'

export type { RunOptions, SessionContext } from './session.js'

const { z } = zod()

/** Options of toOpenAITools: which API, and the session every call runs in. */
export interface OpenAIToolsOptions<Api extends 'responses' | 'chat'> extends SessionContext {
  /** `responses`: the Responses API's flat function tools; `chat`: Chat Completions' `{ type: 'function', function }`. */
  api: Api
}

/** cordon's tools for the Responses API. */
export interface OpenAIResponsesTools {
  /** The function tools (`strict: true`) to pass as `tools` to `client.responses.create`. */
  readonly tools: FunctionTool[]
  /** Whether a function call is for one of these tools (a harness's own are not). */
  owns(name: string): boolean
  /** Runs one `function_call` item; its result is the `function_call_output` item to send back. */
  run(call: ResponseFunctionToolCall, options?: RunOptions): Promise<ResponseInputItem.FunctionCallOutput>
  /** Runs, in order, every `function_call` of `output` that is for these tools; the others are left to the harness. */
  runAll(output: readonly ResponseOutputItem[], options?: RunOptions): Promise<ResponseInputItem.FunctionCallOutput[]>
}

/** cordon's tools for Chat Completions. */
export interface OpenAIChatTools {
  /** The function tools (`strict: true`) to pass as `tools` to `client.chat.completions.create`. */
  readonly tools: ChatCompletionFunctionTool[]
  /** Whether a tool call is for one of these tools (a harness's own are not). */
  owns(name: string): boolean
  /** Runs one entry of a message's `tool_calls`; its result is the `tool` message to send back. */
  run(call: ChatCompletionMessageFunctionToolCall, options?: RunOptions): Promise<ChatCompletionToolMessageParam>
  /** Runs, in order, every function call of `toolCalls` that is for these tools; the others are left to the harness. */
  runAll(
    toolCalls: readonly ChatCompletionMessageToolCall[] | null | undefined,
    options?: RunOptions,
  ): Promise<ChatCompletionToolMessageParam[]>
}

const OptionsSchema = z.strictObject(
  {
    api: z.enum(['responses', 'chat'], { error: "must be 'responses' or 'chat'" }),
    ...SESSION_FIELDS,
  },
  { error: "expected { api: 'responses' | 'chat', agent?, sessionId?, cwd?, sessionMode? }" },
)

/** The tools as the Responses API's strict function tools, and their calls run into `function_call_output` items. */
export function toOpenAITools(
  tools: readonly ModelTool[],
  options: OpenAIToolsOptions<'responses'>,
): OpenAIResponsesTools
/** The tools as Chat Completions' strict function tools, and their calls run into `tool` messages. */
export function toOpenAITools(tools: readonly ModelTool[], options: OpenAIToolsOptions<'chat'>): OpenAIChatTools
/** Either shape, by `options.api` (checked: a bad option or tool list throws InvalidRequestError). */
export function toOpenAITools(
  tools: readonly ModelTool[],
  options: OpenAIToolsOptions<'responses' | 'chat'>,
): OpenAIResponsesTools | OpenAIChatTools
export function toOpenAITools(
  tools: readonly ModelTool[],
  options: OpenAIToolsOptions<'responses' | 'chat'>,
): OpenAIResponsesTools | OpenAIChatTools {
  const { api, ...session } = checkAdapterInput('toOpenAITools', tools, options, OptionsSchema)
  const runner = toolRunner(tools, session)
  return api === 'responses' ? responsesTools(tools, runner) : chatTools(tools, runner)
}

/** The Responses API's face of `tools`. */
function responsesTools(tools: readonly ModelTool[], runner: ToolRunner): OpenAIResponsesTools {
  const run = async (call: ResponseFunctionToolCall, options?: RunOptions) => {
    const result = await runJsonCall(
      runner,
      { name: call.name, arguments: call.arguments, callId: call.call_id },
      options,
    )
    return { type: 'function_call_output' as const, call_id: call.call_id, output: result.content }
  }
  return {
    tools: tools.map((tool) => ({
      type: 'function' as const,
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema,
      strict: true,
    })),
    owns: runner.owns,
    run,
    async runAll(output, options) {
      const results: ResponseInputItem.FunctionCallOutput[] = []
      for (const item of output)
        if (item.type === 'function_call' && runner.owns(item.name)) results.push(await run(item, options))
      return results
    },
  }
}

/** Chat Completions' face of `tools`. */
function chatTools(tools: readonly ModelTool[], runner: ToolRunner): OpenAIChatTools {
  const run = async (call: ChatCompletionMessageFunctionToolCall, options?: RunOptions) => {
    const { name, arguments: args } = call.function
    const result = await runJsonCall(runner, { name, arguments: args, callId: call.id }, options)
    return { role: 'tool' as const, tool_call_id: call.id, content: result.content }
  }
  return {
    tools: tools.map((tool) => ({
      type: 'function' as const,
      function: { name: tool.name, description: tool.description, parameters: tool.inputSchema, strict: true },
    })),
    owns: runner.owns,
    run,
    async runAll(toolCalls, options) {
      const results: ChatCompletionToolMessageParam[] = []
      for (const call of toolCalls ?? [])
        if (call.type === 'function' && runner.owns(call.function.name)) results.push(await run(call, options))
      return results
    },
  }
}
