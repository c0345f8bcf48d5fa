/** The Plinth console: a Preact app on the dashboard API, served at /_/ by the API itself. */
import { render } from 'preact';
import './styles.css';
import './lib/theme';
import { App } from './app';

render(<App />, document.getElementById('app')!);
