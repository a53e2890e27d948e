// UIMessage arrays from the real `ai` package: streamText over a scripted mock model (a tool
// loop with reasoning), turned into UI messages by the SDK's own readUIMessageStream.
// Usage: node produce.mjs > messages.json      (NODE_PATH names the node_modules holding `ai`)
import { streamText, readUIMessageStream, tool, stepCountIs, simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});
const steps = [
  [
    { type: 'stream-start', warnings: [] },
    { type: 'reasoning-start', id: 'r1' },
    { type: 'reasoning-delta', id: 'r1', delta: 'The user wants the weather; look it up.' },
    { type: 'reasoning-end', id: 'r1' },
    { type: 'tool-call', toolCallId: 'call_weather_1', toolName: 'weather', input: '{"city":"Oslo"}' },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(40, 12) },
  ],
  [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't1' },
    { type: 'text-delta', id: 't1', delta: 'It is 4°C and raining in Oslo.' },
    { type: 'text-end', id: 't1' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(70, 9) },
  ],
];
let call = 0;
const model = new MockLanguageModelV3({
  doStream: async () => ({ stream: simulateReadableStream({ chunks: steps[Math.min(call++, steps.length - 1)] }) }),
});
const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is the weather in Oslo?' }] };
const result = streamText({
  model,
  system: 'You are a weather assistant.',
  prompt: 'What is the weather in Oslo?',
  tools: {
    weather: tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({ city, celsius: 4, sky: 'rain', report: 'rain '.repeat(200) }),
    }),
  },
  stopWhen: stepCountIs(3),
});
let assistant;
for await (const message of readUIMessageStream({ stream: result.toUIMessageStream({ generateMessageId: () => 'a1' }) })) {
  assistant = message;
}
const followUp = { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And tomorrow?' }] };
process.stdout.write(JSON.stringify([user, assistant, followUp]) + '\n');
