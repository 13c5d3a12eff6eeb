// Render markdown as JupyterLab 4 does: `marked` with the options of @jupyterlab/markedparser-extension
// (`gfm: true`, `async: true`). Its two plugins (marked-gfm-heading-id, marked-mangle) only add heading
// ids and obfuscate e-mail links, so they cannot change what is emphasis; its custom renderer only
// highlights fenced code. Reads a JSON list of markdown texts on stdin, writes the list of HTML on stdout.
// Used by tests/test_markdown_rendering.py.
import { marked } from 'marked';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const html = [];
for (const text of JSON.parse(input)) html.push(await marked.parse(text, { async: true, gfm: true }));
process.stdout.write(JSON.stringify(html));
