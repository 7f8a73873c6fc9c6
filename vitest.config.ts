import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["js/tests/**/*.test.ts"],
    environment: "happy-dom",
    // The 256- and 4096-device renders take ~4 s on a loaded 2-core machine (CI's size); 5 s is too tight.
    testTimeout: 30_000,
  },
});
