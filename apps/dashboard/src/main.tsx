import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Router } from 'wouter';
import { createQueryClient } from './api/queries.js';
import { App } from './app.js';
import { BASE } from './routes.js';
import './styles.css';

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <QueryClientProvider client={createQueryClient()}>
        <Router base={BASE}>
          <App />
        </Router>
      </QueryClientProvider>
    </StrictMode>,
  );
}
