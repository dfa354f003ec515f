import { defineConfig } from 'vite';
import preact from '@preact/preset-vite';

// The bundle is written into the Python package, which serves it at /dashboard/.
// Relative asset URLs keep it working behind a path prefix.
export default defineConfig({
  base: './',
  plugins: [preact()],
  build: {
    outDir: process.env.BERTH_DASHBOARD_OUT || '../berth/dashboard/static',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    // One file per kind keeps the committed tree small and the diff check simple.
    rollupOptions: { output: { manualChunks: undefined } },
  },
  server: { proxy: { '/v1': 'http://127.0.0.1:9517', '/dashboard/api': 'http://127.0.0.1:9517' } },
});
