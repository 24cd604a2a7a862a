import { lazy, Suspense, useEffect, useState } from 'react'
import { Link, Redirect, Route, Switch, useLocation } from 'wouter'
import { api, isOffline, onOfflineChange, setUnauthorizedHandler, type WhoAmI } from './api'
import { getKey, signOut } from './auth'
import { ErrorBox, Loading, OfflineBanner } from './components/feedback'
import { Dashboard } from './pages/Dashboard'
import { Login } from './pages/Login'

// The dashboard (the first page) and the login page are in the first chunk; every other page is
// loaded when first opened, so the first load parses less script. The graph page carries d3.
const Graph = lazy(() => import('./pages/Graph'))
const DeletionPage = lazy(() => import('./pages/Deletion').then((m) => ({ default: m.DeletionPage })))
const MemoryPage = lazy(() => import('./pages/Memory').then((m) => ({ default: m.MemoryPage })))
const ProjectPage = lazy(() => import('./pages/Project').then((m) => ({ default: m.ProjectPage })))
const ProjectSettings = lazy(() => import('./pages/ProjectSettings').then((m) => ({ default: m.ProjectSettings })))
const Projects = lazy(() => import('./pages/Projects').then((m) => ({ default: m.Projects })))
const Search = lazy(() => import('./pages/Search').then((m) => ({ default: m.Search })))
const ProfilePage = lazy(() => import('./pages/Profile').then((m) => ({ default: m.ProfilePage })))
const Settings = lazy(() => import('./pages/Settings').then((m) => ({ default: m.Settings })))
const ConfirmConnection = lazy(() =>
  import('./pages/ConfirmConnection').then((m) => ({ default: m.ConfirmConnection })),
)

const NAV = [
  ['/', 'Dashboard'],
  ['/projects', 'Projects'],
  ['/search', 'Search'],
  ['/graph', 'Graph'],
  ['/profile', 'Profile'],
  ['/settings', 'Settings'],
] as const

export function App() {
  const [location, navigate] = useLocation()
  const [signedIn, setSignedIn] = useState(() => getKey() !== null)

  useEffect(() => {
    const toLogin = () => {
      setSignedIn(false)
      if (window.location.pathname === '/login') return // the login page reports a refused key itself
      navigate(`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`)
    }
    setUnauthorizedHandler(toLogin)
    // Signed out in another tab (the key left this origin's storage): this tab follows, and says why.
    const onStorage = (event: StorageEvent) => {
      if (event.key !== null && event.key !== 'memlane.apiKey') return
      if (getKey() !== null) return
      signOut('elsewhere')
      toLogin()
    }
    window.addEventListener('storage', onStorage)
    return () => window.removeEventListener('storage', onStorage)
  }, [navigate])

  if (location === '/login') {
    return <Login onSignedIn={() => setSignedIn(true)} />
  }
  if (!signedIn) {
    return <Redirect to={`/login?next=${encodeURIComponent(location + window.location.search)}`} replace />
  }
  return (
    <Shell
      onSignOut={() => {
        signOut('you')
        setSignedIn(false)
        navigate('/login')
      }}
    >
      <Suspense fallback={<Loading what="page" />}>
        <Switch>
          <Route path="/" component={Dashboard} />
          <Route path="/projects" component={Projects} />
          <Route path="/projects/:id/settings">{(p) => <ProjectSettings id={p.id} />}</Route>
          <Route path="/projects/:id">{(p) => <ProjectPage id={p.id} />}</Route>
          <Route path="/search" component={Search} />
          <Route path="/memories/:id">{(p) => <MemoryPage key={p.id} id={p.id} />}</Route>
          <Route path="/deletions/:id">{(p) => <DeletionPage key={p.id} id={p.id} />}</Route>
          <Route path="/graph" component={Graph} />
          <Route path="/profile" component={ProfilePage} />
          <Route path="/settings" component={Settings} />
          <Route path="/connections/confirm" component={ConfirmConnection} />
          <Route>
            <main id="main" className="page">
              <h1>Page not found</h1>
              <p>
                There is no page at <code>{location}</code>. <Link href="/">Back to the dashboard</Link>
              </p>
            </main>
          </Route>
        </Switch>
      </Suspense>
    </Shell>
  )
}

function Shell({ children, onSignOut }: { children: React.ReactNode; onSignOut: () => void }) {
  const [location] = useLocation()
  const [who, setWho] = useState<WhoAmI | null>(null)
  const [error, setError] = useState<Error | null>(null)
  const [offline, setOffline] = useState(isOffline)
  const [checking, setChecking] = useState(false)
  // Bumped by Retry once the server answers again: the page is mounted afresh and loads again.
  const [attempt, setAttempt] = useState(0)
  useEffect(() => onOfflineChange(setOffline), [])
  useEffect(() => {
    api.whoami().then(
      (w) => {
        setWho(w)
        setError(null)
      },
      setError,
    )
  }, [attempt])
  const retry = () => {
    setChecking(true)
    api.whoami().then(
      () => {
        setChecking(false)
        setAttempt((n) => n + 1)
      },
      () => setChecking(false),
    )
  }
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link href="/" className="brand">
          memlane
        </Link>
        <nav aria-label="Main">
          <ul>
            {NAV.map(([href, label]) => {
              const current = href === '/' ? location === '/' : location === href || location.startsWith(`${href}/`)
              return (
                <li key={href}>
                  <Link href={href} aria-current={current ? 'page' : undefined}>
                    {label}
                  </Link>
                </li>
              )
            })}
          </ul>
        </nav>
        <div className="who">
          {who && <span title={`key ${who.key_id}`}>{who.organization_name}</span>}
          <button type="button" className="secondary" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      {offline && <OfflineBanner onRetry={retry} checking={checking} />}
      {error && <ErrorBox error={error} />}
      <div key={attempt} className="content">
        {children}
      </div>
    </>
  )
}
