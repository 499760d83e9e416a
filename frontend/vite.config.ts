import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// Django serves the built files under its static URL and answers every
// non-API path with dist/index.html, so only the build uses the /static/ base.
// The dev server proxies the API to `manage.py runserver` so the session and
// CSRF cookies stay same-origin.
const djangoDevServer = process.env.DJANGO_DEV_SERVER ?? "http://127.0.0.1:8000";

export default defineConfig(({ command }) => ({
  base: command === "build" ? "/static/" : "/",
  plugins: [react()],
  build: {
    outDir: "dist",
    assetsDir: "assets",
    emptyOutDir: true,
    sourcemap: true,
    rolldownOptions: {
      // "name.hash.ext": the form Django's WHITENOISE_IMMUTABLE_FILE_TEST
      // recognises, so fingerprinted files are cached for good.
      output: {
        entryFileNames: "assets/[name].[hash].js",
        chunkFileNames: "assets/[name].[hash].js",
        assetFileNames: "assets/[name].[hash][extname]",
      },
    },
  },
  server: {
    host: "127.0.0.1",
    proxy: {
      "/api": { target: djangoDevServer },
    },
  },
  test: {
    environment: "jsdom",
    setupFiles: ["./src/test/setup.ts"],
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
    // Generous for a loaded CI machine; a test that really hangs still fails.
    testTimeout: 20_000,
    unstubGlobals: true,
  },
}));
