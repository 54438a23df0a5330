// Providers, the sign-in gate and the page routes.
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Suspense } from 'react';
import { Redirect, Route, Router, Switch, useLocation } from 'wouter';
import { AuthProvider, useAuth } from '../auth/auth';
import { session } from '../auth/session';
import { SignInPage } from '../auth/SignInPage';
import { EmptyState, Loading } from '../ui/layout';
import { PageErrorBoundary } from './PageErrorBoundary';
import { ROUTES } from './routes';
import { Shell } from './Shell';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      // 4xx answers are final; only network and server failures are worth a second try.
      retry: (count, err) =>
        count < 2 && !((err as { status?: number }).status! >= 400 && (err as { status?: number }).status! < 500),
    },
  },
});

function NotFoundPage() {
  return <EmptyState title="Page not found">There is nothing at this address. Pick a page from the menu.</EmptyState>;
}

function Gate() {
  const { me, checking } = useAuth();
  const [location] = useLocation();
  if (checking) return <Loading what="Checking your session" />;
  if (!me)
    return (
      <Switch>
        <Route path="/sign-in" component={SignInPage} />
        <Route>
          <RememberAndSignIn />
        </Route>
      </Switch>
    );
  return (
    <Shell>
      <PageErrorBoundary key={location}>
        <Suspense fallback={<Loading />}>
          <Switch>
            <Route path="/">
              <Redirect to="/runs" replace />
            </Route>
            <Route path="/sign-in">
              <Redirect to="/runs" replace />
            </Route>
            {ROUTES.map((r) => (
              <Route key={r.path} path={r.path} component={r.component} />
            ))}
            <Route component={NotFoundPage} />
          </Switch>
        </Suspense>
      </PageErrorBoundary>
    </Shell>
  );
}

/** A signed-out visit to a page (a bookmark, a link): back there after signing in. */
function RememberAndSignIn() {
  const here = window.location.pathname.replace(/^\/ui/, '') + window.location.search;
  if (here !== '/' && here !== '') session.rememberPage(here);
  return <Redirect to={`/sign-in${window.location.hash}`} replace />;
}

export function App() {
  return (
    <QueryClientProvider client={queryClient}>
      <Router base="/ui">
        <AuthProvider>
          <Gate />
        </AuthProvider>
      </Router>
    </QueryClientProvider>
  );
}
