// The SDK scenario of tests/sdk through the TypeScript Agent SDK: one query() with a Bash call,
// agent-repl (or, as the control, Claude Code) as the engine, the emulator as the model.
// Not part of the suite.
//
//   node benchmarks/agent_sdk_ts.mjs [ENGINE]     ENGINE: agent-repl's entry point (default
//                                                 .venv/bin/agent-repl) or /usr/bin/claude
//
// Needs node and @anthropic-ai/claude-agent-sdk (npm install it here or globally); without the
// package it says so and exits 0.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

let sdk;
try {
  sdk = await import("@anthropic-ai/claude-agent-sdk");
} catch {
  console.log("skipped: @anthropic-ai/claude-agent-sdk is not installed (npm install @anthropic-ai/claude-agent-sdk)");
  process.exit(0);
}

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const engine = process.argv[2] ?? path.join(root, ".venv/bin/agent-repl");
const work = mkdtempSync(path.join(tmpdir(), "agent-sdk-ts-"));
const scenario = path.join(work, "scenario.json");
writeFileSync(scenario, JSON.stringify({
  steps: [
    { tools: [{ name: "Bash", input: { command: "echo hi-there" } }] },
    { text: "All done." },
  ],
}));

// The emulator prints "listening on URL" once it is bound.
const emulator = spawn(path.join(root, ".venv/bin/python"), ["-m", "agent_repl.emulator", "--policy", `script:${scenario}`]);
const baseUrl = await new Promise((resolve, reject) => {
  emulator.stdout.on("data", (chunk) => {
    const found = /listening on (\S+)/.exec(String(chunk));
    if (found) resolve(found[1]);
  });
  emulator.on("exit", () => reject(new Error("the emulator exited before listening")));
});

const seen = [];
try {
  const home = path.join(work, "home");
  for await (const message of sdk.query({
    prompt: "say hello",
    options: {
      pathToClaudeCodeExecutable: engine,
      cwd: work,
      model: "claude-sonnet-4-5",
      permissionMode: "bypassPermissions",
      env: {
        ...process.env,
        ANTHROPIC_BASE_URL: baseUrl,
        ANTHROPIC_API_KEY: "sk-ant-ts-sdk-key",
        HOME: home,
        AGENT_REPL_HOME: path.join(home, ".agent_repl"),
        IS_SANDBOX: "1",
      },
    },
  })) {
    seen.push(message.type + (message.subtype ? `:${message.subtype}` : ""));
    if (message.type === "result") console.log("result:", message.subtype, JSON.stringify(message.result));
  }
} finally {
  emulator.kill();
}
console.log("messages:", seen.join(" "));
// The scripted emulator answers side requests from its steps too, so with Claude Code as the
// engine the answer may differ; agent-repl makes no side requests here.
