import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the API under /ui/.
export default defineConfig({ base: '/ui/', plugins: [react()], build: { outDir: 'dist', emptyOutDir: true } });
