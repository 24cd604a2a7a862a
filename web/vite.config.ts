/// <reference types="vitest/config" />
import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// micromark decodes named character references (`&amp;`, `&copy;`) with
// decode-named-character-reference, whose browser build assigns the reference to an element's
// innerHTML. The app's Content-Security-Policy requires Trusted Types and allows no policy, so that
// assignment throws and a memory holding `Tom &amp; Jerry` rendered as a blank page. The package's
// default build looks the name up in the character-entities table instead: no DOM, nothing to refuse.
const decodeNamedReference = decodeURIComponent(
  new URL('./node_modules/decode-named-character-reference/index.js', import.meta.url).pathname,
)

// The app is served from the root of its origin (the local server, or CloudFront), next to the API.
export default defineConfig({
  plugins: [react()],
  base: '/',
  resolve: {
    alias: [{ find: /^decode-named-character-reference$/, replacement: decodeNamedReference }],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    // No inline <script> or data: module: the Content-Security-Policy allows scripts from 'self' only.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 400,
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test-setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
  },
})
