import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The dashboard is built into web/dist and served by the API role at `/` (src/http/plugins/dashboard.ts).
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
