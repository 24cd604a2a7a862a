// @memlane/client/ai with the real `ai` package (generateText and streamText, a mock model from
// `ai/test`: nothing leaves the machine) against a local memlane server on loopback.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { generateText, simulateReadableStream, stepCountIs, streamText } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { MemlaneClient } from '../dist/index.js'
import { DATA_NOTICE, memlaneTools } from '../dist/ai.js'

const memlane = new MemlaneClient({ baseUrl: process.env.MEMLANE_URL, apiKey: process.env.MEMLANE_API_KEY })
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

/** A model that calls `toolName` with `input` first, then answers with the tool's output in view. */
function callsTool(toolName, input) {
  const prompts = []
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      if (prompts.length === 1) {
        return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName, input: JSON.stringify(input) }],
          finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
      }
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
    },
  })
  return { model, prompts }
}

describe('memory tools for the AI SDK', () => {
  it('saveMemory saves into the project and conversation; searchMemory finds it as data', async () => {
    const project = await memlane.createProject({ name: 'AI SDK' })
    const tools = memlaneTools(memlane, { projectId: project.id, conversationId: 'chat-7', minRelevance: 0 })

    const save = callsTool('saveMemory', { content: 'The user is allergic to peanuts.', title: 'Allergy', tags: ['health'] })
    const saved = await generateText({ model: save.model, tools, stopWhen: stepCountIs(2), prompt: 'Remember my allergy' })
    assert.equal(saved.text, 'done')
    const toolResult = saved.steps[0].toolResults[0]
    assert.equal(toolResult.toolName, 'saveMemory')
    const doc = await memlane.document(toolResult.output.id)
    assert.equal(doc.content, 'The user is allergic to peanuts.')
    assert.equal(doc.project_id, project.id)
    assert.equal(doc.conversation_id, 'chat-7')

    const search = callsTool('searchMemory', { query: 'allergic peanuts', limit: 3 })
    const found = await generateText({ model: search.model, tools, stopWhen: stepCountIs(2), prompt: 'What am I allergic to?' })
    const output = found.steps[0].toolResults[0].output
    assert.equal(output.notice, DATA_NOTICE)
    assert.deepEqual(output.results.map((r) => r.title), ['Allergy'])
    assert.match(output.results[0].text, /allergic to peanuts/)
    // the model's second step sees the tool's output
    assert.match(JSON.stringify(search.prompts[1]), /allergic to peanuts/)
  })

  it('memoryContext packs context for streamText', async () => {
    const project = await memlane.createProject({ name: 'AI SDK stream' })
    await memlane.remember('Standup is at 9:30 on weekdays in room Juniper.', { title: 'Standup', project_id: project.id })
    const tools = memlaneTools(memlane, { projectId: project.id, minRelevance: 0 })
    let calls = 0
    const model = new MockLanguageModelV3({
      doStream: async () => {
        calls += 1
        const chunks = calls === 1
          ? [{ type: 'tool-call', toolCallId: 'c1', toolName: 'memoryContext', input: JSON.stringify({ query: 'standup room weekdays' }) },
             { type: 'finish', finishReason: { unified: 'tool-calls', raw: undefined }, usage }]
          : [{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Juniper at 9:30.' },
             { type: 'text-end', id: 't' }, { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage }]
        return { stream: simulateReadableStream({ chunks }) }
      },
    })
    const result = streamText({ model, tools, stopWhen: stepCountIs(2), prompt: 'Where is standup?' })
    assert.equal(await result.text, 'Juniper at 9:30.')
    const steps = await result.steps
    const pack = steps[0].toolResults[0].output
    assert.equal(pack.notice, DATA_NOTICE)
    assert.match(pack.text, /room Juniper/)
    assert.deepEqual(pack.sources.map((s) => s.title), ['Standup'])
  })
})
