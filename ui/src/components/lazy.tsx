/** A screen loaded on demand (its own chunk): a spinner meanwhile, an error with retry if it fails. */
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Spinner } from './ui';

export function lazy<P extends object>(load: () => Promise<{ default: ComponentType<P> }>): ComponentType<P> {
  let cached: ComponentType<P> | undefined;
  return function Lazy(props: P) {
    const [state, setState] = useState<{ C?: ComponentType<P>; error?: Error }>({ C: cached });
    const [tick, setTick] = useState(0);
    useEffect(() => {
      if (cached) return;
      load().then(
        (m) => setState({ C: (cached = m.default) }),
        (error: Error) => setState({ error }),
      );
    }, [tick]);
    if (state.error) {
      return (
        <ErrorBox
          error={state.error}
          retry={() => {
            setState({});
            setTick(tick + 1);
          }}
        />
      );
    }
    if (!state.C) return <Spinner />;
    const C = state.C;
    return <C {...props} />;
  };
}
