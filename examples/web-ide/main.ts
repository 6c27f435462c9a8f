// A web IDE embedding webgpu-responses: the page installs the service worker, then its ordinary `openai` SDK code
// (baseURL: the worker's /v1) runs a small agent loop whose custom tool `apply_patch` edits the open file.
// The patch grammar is sent as the tool's format, so the runtime constrains the model's patches to parse.
import OpenAI from 'openai';
import { installResponsesShim } from '../../src/embed/install-responses-shim';
import { applyPatch } from '../../src/demo/demo-tools';
import { singleLineEditGrammar } from '../../src/demo/apply-patch-grammar';

const editor = document.getElementById('editor') as HTMLTextAreaElement;
const fileName = document.getElementById('file-name')!.textContent!;
const statusLine = document.getElementById('status')!;
const task = document.getElementById('task') as HTMLTextAreaElement;
const runButton = document.getElementById('run') as HTMLButtonElement;
const log = document.getElementById('log')!;

function say(text: string, className = '') {
  const p = document.createElement('p');
  p.textContent = text;
  p.className = className;
  log.append(p);
  return p;
}

/**
 * The agent's one tool. Its grammar is made from the open file at each step, so the runtime constrains the model
 * to patches that replace an existing line: every call parses and applies.
 */
function tools(): OpenAI.Responses.Tool[] {
  return [
    {
      type: 'custom',
      name: 'apply_patch',
      description: `Edit the open file ${fileName}: replace one line (*** Update File: ${fileName}, @@, -old line, +new line).`,
      format: { type: 'grammar', syntax: 'lark', definition: singleLineEditGrammar(fileName, editor.value) },
    },
  ];
}

/** Runs the agent: the model may call apply_patch (at most `maxSteps` times) and ends with a message. */
export async function runAgent(client: OpenAI, instruction: string, maxSteps = 3): Promise<{ patches: number; answer: string }> {
  let previous: string | undefined;
  let input: OpenAI.Responses.ResponseInput = [
    { role: 'developer', content: `You are a coding agent. The open file is ${fileName}:\n${editor.value}` },
    { role: 'user', content: instruction },
  ];
  let patches = 0;
  for (let step = 0; step < maxSteps; step++) {
    const stream = client.responses.stream({
      model: 'default',
      input,
      tools: tools(),
      tool_choice: step === 0 ? { type: 'custom', name: 'apply_patch' } : 'auto',
      previous_response_id: previous,
      max_output_tokens: 256,
      temperature: 0,
    });
    const live = say('');
    stream.on('response.custom_tool_call_input.delta', (e) => (live.textContent += e.delta));
    stream.on('response.output_text.delta', (e) => (live.textContent += e.delta));
    const response = await stream.finalResponse();
    previous = response.id;
    const calls = response.output.filter((o): o is OpenAI.Responses.ResponseCustomToolCall => o.type === 'custom_tool_call');
    if (calls.length === 0) return { patches, answer: response.output_text };
    live.className = 'call';
    input = calls.map((call) => {
      let output: string;
      try {
        editor.value = applyPatch(editor.value, call.input);
        patches++;
        output = 'Patch applied.';
      } catch (e) {
        output = `Patch failed: ${(e as Error).message}`;
      }
      say(`apply_patch → ${output}`);
      return { type: 'custom_tool_call_output' as const, call_id: call.call_id, output };
    });
  }
  return { patches, answer: '' };
}

async function start() {
  try {
    // The app's service worker lives at the site root (two folders up); its scope covers /v1/.
    const shim = await installResponsesShim({ serviceWorkerUrl: new URL('../../sw.js', location.href) });
    const client = new OpenAI({ apiKey: 'in-browser', baseURL: shim.baseURL, dangerouslyAllowBrowser: true });
    Object.assign(window, { ideAgent: { client, runAgent: (text: string) => runAgent(client, text) } });
    statusLine.textContent = `Ready (${shim.models.map((m) => m.id).join(', ')})`;
    runButton.disabled = false;
    runButton.onclick = async () => {
      runButton.disabled = true;
      try {
        const { patches, answer } = await runAgent(client, task.value);
        say(`Done: ${patches} patch(es) applied. ${answer}`);
      } catch (e) {
        say((e as Error).message, 'error');
      } finally {
        runButton.disabled = false;
      }
    };
  } catch (e) {
    statusLine.textContent = (e as Error).message;
    statusLine.className = 'error';
  }
}

void start();
