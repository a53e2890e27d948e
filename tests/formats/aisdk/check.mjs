// Reads UIMessages (a JSON array on stdin) through the real `ai` package: validateUIMessages,
// then convertToModelMessages; prints the model messages, or the SDK's error and exits 1.
import { validateUIMessages, convertToModelMessages } from 'ai';

let text = '';
for await (const chunk of process.stdin) text += chunk;
try {
  const messages = await validateUIMessages({ messages: JSON.parse(text) });
  process.stdout.write(JSON.stringify(await convertToModelMessages(messages)) + '\n');
} catch (error) {
  process.stderr.write(`${error.name}: ${error.message}\n`);
  process.exit(1);
}
