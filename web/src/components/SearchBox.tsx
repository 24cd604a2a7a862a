import { useState } from 'react'
import { useLocation } from 'wouter'

/** The global search box: goes to the search page with the query. */
export function SearchBox({ label = 'Search your memories' }: { label?: string }) {
  const [, navigate] = useLocation()
  const [query, setQuery] = useState('')
  return (
    <form
      role="search"
      className="searchbox"
      onSubmit={(e) => {
        e.preventDefault()
        navigate(`/search?q=${encodeURIComponent(query.trim())}`)
      }}
    >
      <label htmlFor="global-search" className="visually-hidden">
        {label}
      </label>
      <input
        id="global-search"
        type="search"
        placeholder={`${label}…`}
        value={query}
        onChange={(e) => setQuery(e.target.value)}
      />
      <button type="submit">Search</button>
    </form>
  )
}
