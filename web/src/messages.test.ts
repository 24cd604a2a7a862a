import { describe, expect, it } from 'vitest'
import { readable } from './messages'

describe('messages a person reads', () => {
  it('never start with a field name', () => {
    expect(
      readable(
        'code: this sign-in link was already used or has expired; restart `make run` for a new one, or paste the API key',
      ),
    ).toBe('This sign-in link was already used or has expired; restart `make run` for a new one, or paste the API key')
    expect(readable('title: must be at most 500 characters')).toBe('Title must be at most 500 characters')
    expect(readable('forget_after: must be in the future')).toBe('Forget after must be in the future')
    expect(readable('metadata.tags: must be a list of strings')).toBe('Tags must be a list of strings')
    expect(readable('messages.0.content: must not be blank')).toBe('Content must not be blank')
    expect(readable("baseUrl: refused 'http://127.0.0.1:8000/': 127.0.0.1 is a loopback address; to index docs")).toBe(
      "Refused 'http://127.0.0.1:8000/': 127.0.0.1 is a loopback address; to index docs",
    )
    expect(readable('name: must not be blank; description: must be at most 2000 characters')).toBe(
      'Name must not be blank; Description must be at most 2000 characters',
    )
  })

  it('leave a message without a field as it is, capitalised', () => {
    expect(readable('invalid or revoked API key')).toBe('Invalid or revoked API key')
    expect(readable('Cannot reach memlane: the server is down')).toBe('Cannot reach memlane: the server is down')
    expect(readable('too many sign-in attempts; retry after 12 s')).toBe('Too many sign-in attempts; retry after 12 s')
  })
})
