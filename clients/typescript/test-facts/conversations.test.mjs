// @memlane/client's conversation calls and the AI SDK's memoryProfile tool against a local memlane
// server on loopback whose LLM is the fake OpenAI-compatible server on loopback, both started by
// tests/integration/clients/test_typescript_client_live.py (MEMLANE_URL, MEMLANE_API_KEY). The fake
// LLM draws "Sam lives in Lisbon" from "I live in Lisbon." and "Sam lives in Porto" from "We moved to
// Porto!", and reconciles the second as an update of the first.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { MemlaneClient, mcpTool } from '../dist/index.js'
import { DATA_NOTICE, memlaneTools } from '../dist/ai.js'

const url = process.env.MEMLANE_URL
if (!url) throw new Error('MEMLANE_URL is not set: run through tests/integration/clients/test_typescript_client_live.py')
const memlane = new MemlaneClient({ baseUrl: url, apiKey: process.env.MEMLANE_API_KEY, timeoutMs: 30_000 })
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

async function finished(extractionId) {
  const deadline = Date.now() + 30_000
  for (;;) {
    const record = await memlane.extraction(extractionId)
    if (['done', 'failed'].includes(record.status) || Date.now() > deadline) return record
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const contents = (recalled) => recalled.results.map((r) => r.chunks[0].content)

describe('conversations, facts and the profile', () => {
  it('stores a conversation sent again whole (a new key each time) once, and only its new messages', async () => {
    const history = [{ role: 'user', content: 'Which platform for the Porto train?' },
      { role: 'assistant', content: 'Platform 4, at 10:12.' }]
    const first = await memlane.saveConversation({ conversation_id: 'ts-platform', extract: false, messages: history })
    const again = await memlane.saveConversation({ conversation_id: 'ts-platform', extract: false,
      messages: [...history, { role: 'user', content: 'ok' }] })
    assert.deepEqual([first.saved, again.saved, again.duplicates], [2, 1, 2])
    assert.deepEqual(again.messages.slice(0, 2).map((m) => m.id), first.messages.map((m) => m.id))
    assert.deepEqual(again.messages.map((m) => m.duplicate), [true, true, false])
    const stored = (await memlane.conversation('ts-platform')).messages.map((m) => m.content)
    assert.deepEqual(stored, ['Which platform for the Porto train?', 'Platform 4, at 10:12.', 'ok'])
  })

  it('saves a conversation once per key, reads it back in order, follows the extraction, recalls by kind and asOf', async () => {
    const body = { conversation_id: 'ts-trip', messages: [
      { speaker: 'Sam', content: 'I live in Lisbon.', time: '2026-11-01T09:00:00Z' },
      { role: 'assistant', content: 'Lovely city.' },
      { role: 'user', content: 'Three more days of holiday.' },
    ] }
    const first = await memlane.saveConversation(body, { idempotencyKey: 'ts-trip-1' })
    const again = await memlane.saveConversation(body, { idempotencyKey: 'ts-trip-1' })
    assert.deepEqual(again, first) // the first answer replayed: no second extraction
    assert.equal(first.saved, 3)
    assert.equal(first.extraction.status, 'queued')
    const lisbon = await finished(first.extraction.id)
    assert.equal(lisbon.status, 'done')
    assert.deepEqual(lisbon.facts.map((f) => f.text), ['Sam lives in Lisbon'])

    const page = await memlane.conversation('ts-trip', { limit: 2 })
    assert.deepEqual(page.messages.map((m) => [m.speaker ?? m.role, m.content]),
      [['Sam', 'I live in Lisbon.'], ['assistant', 'Lovely city.']])
    assert.ok(page.next_cursor)
    const all = []
    for await (const m of memlane.iterConversation('ts-trip', { pageSize: 2 })) all.push(m.content)
    assert.deepEqual(all, ['I live in Lisbon.', 'Lovely city.', 'Three more days of holiday.'])
    await assert.rejects(memlane.conversation('never said'), (e) => e.status === 404 && /never said/.test(e.error))
    await memlane.saveConversation({ conversation_id: 'team/standup', extract: false,
      messages: [{ speaker: 'Kim', content: 'A conversation id with a slash.' }] })
    assert.deepEqual((await memlane.conversation('team/standup')).messages.map((m) => m.speaker), ['Kim'])

    const before = (await memlane.document(lisbon.facts[0].fact_id)).created_at
    await new Promise((resolve) => setTimeout(resolve, 50))
    const moved = await memlane.saveConversation({ conversation_id: 'ts-trip-2',
      messages: [{ speaker: 'Sam', content: 'We moved to Porto!' }] })
    const porto = await finished(moved.extraction.id)
    assert.equal(porto.facts[0].outcome, 'update')
    assert.equal(porto.facts[0].decision.supersedes, lisbon.facts[0].fact_id)

    assert.deepEqual(contents(await memlane.recall('where does Sam live', { kind: 'fact', min_relevance: 0 })),
      ['Sam lives in Porto'])
    // created_at has microseconds, a Date only milliseconds: the string itself names the moment
    assert.deepEqual(contents(await memlane.recall('where does Sam live',
      { kind: ['fact'], asOf: before, min_relevance: 0 })), ['Sam lives in Lisbon'])
    assert.deepEqual(contents(await memlane.recall('where does Sam live',
      { kind: ['fact'], asOf: new Date(), min_relevance: 0 })), ['Sam lives in Porto'])
    const messages = contents(await memlane.recall('Sam Lisbon Porto', { kind: 'message', min_relevance: 0 }))
    assert.ok(messages.includes('We moved to Porto!') && !messages.includes('Sam lives in Porto'))

    const profile = await memlane.profile({ subject: 'Sam' })
    assert.deepEqual(profile.facts.map((f) => f.text), ['Sam lives in Porto'])
    assert.equal(profile.extraction, 'on')
  })

  it("memoryProfile is the MCP profile tool: its description and schema, the server's answer", async () => {
    const project = await memlane.createProject({ name: 'TS profile' })
    const saved = await memlane.saveConversation({ conversation_id: 'cello', project_id: project.id,
      messages: [{ speaker: 'Ana', content: 'I play the cello.' }] })
    assert.equal((await finished(saved.extraction.id)).status, 'done')

    const tools = memlaneTools(memlane, { projectId: project.id })
    assert.equal(tools.memoryProfile.description, mcpTool('profile').description)
    const schema = (await tools.memoryProfile.inputSchema).jsonSchema
    assert.deepEqual(Object.keys(schema.properties), ['subject']) // the project is the tools' own
    assert.equal(Object.keys(memlaneTools(memlane).memoryProfile.inputSchema.jsonSchema.properties).sort().join(),
      'project,subject')

    const prompts = []
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(options.prompt)
        if (prompts.length === 1) {
          return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'memoryProfile',
            input: JSON.stringify({ subject: 'Ana' }) }], finishReason: { unified: 'tool-calls', raw: undefined },
          usage, warnings: [] }
        }
        return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
      },
    })
    const answer = await generateText({ model, tools, stopWhen: stepCountIs(2), prompt: 'Who is Ana?' })
    const output = answer.steps[0].toolResults[0].output
    assert.equal(output.notice, DATA_NOTICE)
    const mcp = await memlane.mcpCall('profile', { project: project.id, subject: 'Ana' })
    assert.equal(output.text, mcp.content[0].text) // what an MCP client reads
    assert.match(output.text, /Ana plays the cello/)
    assert.match(JSON.stringify(prompts[1]), /Ana plays the cello/)
  })
})
