#!/usr/bin/env node
// The CLI, built to JavaScript in dist/ (npm run build in the repository; shipped built in the package).
import '../dist/cli/main.js';
