import { render } from 'preact';
import { useState } from 'preact/hooks';
import CodeEditor from '../ui/src/components/code-editor';
import JsonEditor from '../ui/src/components/json-editor';
import { template } from '../ui/src/screens/functions';
function App() {
  const [v, setV] = useState(template('http','ts'));
  const [j, setJ] = useState('{"a": 1}');
  return <div><div class="fn-source" style={{width: "500px"}}><CodeEditor value={v} onChange={setV} label="src" language="ts" /></div>{(window as any).NOJSON ? null : <JsonEditor value={j} onChange={setJ} label="json" />}</div>;
}
render(<App />, document.getElementById('root')!);
