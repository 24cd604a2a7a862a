// @memlane/client (the built dist/) against a local memlane server on loopback, started by
// tests/integration/clients/test_typescript_client_live.py (MEMLANE_URL, MEMLANE_API_KEY), and
// against a fake server on loopback for 429 and 5xx answers.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { API_VERSION, MemlaneClient, MemlaneError, MemlaneUnreachable } from '../dist/index.js'

const url = process.env.MEMLANE_URL
const apiKey = process.env.MEMLANE_API_KEY
if (!url) throw new Error('MEMLANE_URL is not set: run through tests/integration/clients/test_typescript_client_live.py')

describe('against a memlane server', () => {
  const memlane = new MemlaneClient({ baseUrl: url, apiKey, timeoutMs: 30_000 })

  it('saves once per idempotency key, recalls with filters and says which floor applied', async () => {
    const project = await memlane.createProject({ name: 'TS travel' })
    const first = await memlane.remember('The ferry to Vashon leaves at nine from Fauntleroy.', {
      title: 'Ferry', project_id: project.id, tags: ['boat'], idempotencyKey: 'ts-ferry-1',
    })
    const again = await memlane.remember('The ferry to Vashon leaves at nine from Fauntleroy.', {
      title: 'Ferry', project_id: project.id, tags: ['boat'], idempotencyKey: 'ts-ferry-1',
    })
    assert.equal(first.status, 'ready')
    assert.equal(again.id, first.id)
    await memlane.remember('Pack the passport and the charger.', { project_id: project.id, tags: ['packing'] })

    const found = await memlane.recall('ferry Vashon Fauntleroy', {
      project_id: project.id, filters: { tags: ['boat'] }, min_relevance: 0,
    })
    assert.deepEqual(found.results.map((r) => r.document_id), [first.id])
    assert.equal(found.floor, 0)
    assert.ok(found.results[0].relevance >= 0 && found.results[0].relevance <= 1)

    const document = await memlane.document(first.id, { includeVersions: true })
    assert.equal(document.content, 'The ferry to Vashon leaves at nine from Fauntleroy.')
    const deleted = await memlane.deleteDocument(first.id)
    assert.equal((await memlane.deletion(deleted.receipt.id)).verified, true)
  })

  it("raises the server's error text with its status", async () => {
    await assert.rejects(memlane.recall('ferry', { min_relevance: 5 }), (e) => {
      assert.ok(e instanceof MemlaneError)
      assert.equal(e.status, 400)
      assert.match(e.error, /^min_relevance/)
      return true
    })
    await assert.rejects(memlane.document('00000000-0000-4000-8000-000000000000'), { status: 404 })
    const stranger = new MemlaneClient({ baseUrl: url, apiKey: 'mlk_not_a_key' })
    await assert.rejects(stranger.whoami(), { status: 401 })
  })

  it('walks every document of a project, a page at a time', async () => {
    const project = await memlane.createProject({ name: 'TS many' })
    const saved = new Set()
    for (let i = 0; i < 5; i++) saved.add((await memlane.remember(`Note ${i} about topic ${i}`, { project_id: project.id })).id)
    const listed = []
    for await (const d of memlane.iterProjectDocuments(project.id, { pageSize: 2 })) listed.push(d.id)
    assert.equal(listed.length, 5)
    assert.deepEqual(new Set(listed), saved)
  })

  it('runs an MCP tool through /mcp', async () => {
    const result = await memlane.mcpCall('whoAmI')
    assert.equal(result.isError ?? false, false)
    assert.match(result.content[0].text, /organization/i)
  })

  it('states the API version it was generated from', () => {
    assert.match(API_VERSION, /^\d+\.\d+\.\d+/)
    assert.equal(MemlaneClient.apiVersion, API_VERSION)
  })
})

describe('retries, against a fake server on loopback', () => {
  let server
  let base
  const script = []
  const seen = []

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ method: req.method, url: req.url, key: req.headers['idempotency-key'] })
      const [status, body, headers] = script.shift() ?? [500, { error: 'script ran out' }, {}]
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
      res.end(JSON.stringify(body))
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${server.address().port}`
  })
  after(() => server.close())

  const client = (sleeps, retry) =>
    new MemlaneClient({ baseUrl: base, apiKey: 'mlk_x', retry, sleep: async (ms) => { sleeps.push(ms) } })

  it('retries 429 and 5xx, waiting at least Retry-After, with one Idempotency-Key per save', async () => {
    seen.length = 0
    script.push([429, { error: 'rate limit' }, { 'Retry-After': '2' }], [503, { error: 'busy' }, {}],
      [201, { id: 'd1', status: 'ready' }, {}])
    const sleeps = []
    const saved = await client(sleeps).remember('hello')
    assert.equal(saved.id, 'd1')
    assert.equal(seen.length, 3)
    assert.ok(seen[0].key && seen.every((s) => s.key === seen[0].key))
    assert.ok(sleeps[0] >= 2000)
    assert.ok(sleeps[1] >= 0 && sleeps[1] <= 1000)
  })

  it('ends with the last error when retries are spent, and never retries a client mistake', async () => {
    seen.length = 0
    script.push([500, { error: 'internal error (r-1)' }, {}], [502, { error: 'bad gateway' }, {}],
      [500, { error: 'internal error (r-3)' }, {}])
    const sleeps = []
    await assert.rejects(client(sleeps).whoami(), { status: 500, error: 'internal error (r-3)' })
    assert.equal(sleeps.length, 2)
    script.push([400, { error: 'limit: must be at most 100' }, {}])
    await assert.rejects(client(sleeps).recall('x', { limit: 1000 }), { status: 400 })
    assert.equal(sleeps.length, 2)
  })

  it('does not wait for a Retry-After longer than a minute', async () => {
    script.push([429, { error: 'rate limit' }, { 'Retry-After': '3600' }])
    const sleeps = []
    await assert.rejects(client(sleeps).whoami(), (e) => e.status === 429 && e.retryAfterMs === 3_600_000)
    assert.deepEqual(sleeps, [])
  })

  it('reports no answer as MemlaneUnreachable', async () => {
    const down = new MemlaneClient({ baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 })
    await assert.rejects(down.whoami(), (e) => e instanceof MemlaneUnreachable && e.status === 0)
  })
})
