import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app/App';
import { retryFailedStylesheets } from './app/stylesheet-retry';
import './styles.css';

retryFailedStylesheets(window);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
