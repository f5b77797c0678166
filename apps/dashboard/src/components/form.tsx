import { type FormEvent, type InputHTMLAttributes, type ReactNode, useState } from 'react';
import type { useAction } from '../api/queries.js';
import { ErrorMessage, Notice } from './feedback.js';

/** A labelled form panel whose submit never reloads the page. */
export function FormPanel(props: {
  label: string;
  onSubmit: () => void | Promise<void>;
  className?: string;
  children: ReactNode;
}): ReactNode {
  const submit = (e: FormEvent): void => {
    e.preventDefault();
    void props.onSubmit();
  };
  return (
    <form className={props.className ?? 'panel form-grid'} aria-label={props.label} onSubmit={submit}>
      {props.children}
    </form>
  );
}

/** A labelled text input; extra props (pattern, placeholder…) go to the input. */
export function TextField({
  label,
  value,
  onChange,
  ...input
}: { label: string; value: string; onChange: (value: string) => void } & Omit<
  InputHTMLAttributes<HTMLInputElement>,
  'value' | 'onChange'
>): ReactNode {
  return (
    <label>
      {label}
      <input value={value} onChange={(e) => onChange(e.target.value)} {...input} />
    </label>
  );
}

export type Option<V extends string> = Readonly<{ value: V; label: ReactNode }>;

/** A labelled `<select>` over a fixed list of values. */
export function SelectField<V extends string>(props: {
  label: string;
  value: V;
  options: readonly Option<V>[];
  onChange: (value: V) => void;
  disabled?: boolean;
  empty?: string;
  className?: string;
}): ReactNode {
  return (
    <label className={props.className}>
      {props.label}
      <select value={props.value} onChange={(e) => props.onChange(e.target.value as V)} disabled={props.disabled}>
        {props.options.length === 0 && props.empty ? <option value="">{props.empty}</option> : null}
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/** What the last action said: its failure, or its success notice. */
export function ActionFeedback({ action }: { action: ReturnType<typeof useAction> }): ReactNode {
  return (
    <>
      <ErrorMessage error={action.error} action={action.action} />
      {action.notice ? <Notice tone="success">{action.notice}</Notice> : null}
    </>
  );
}

/**
 * A destructive button that asks once more in place: the first click offers "Yes" and "Cancel",
 * only "Yes" acts. `label` names the thing (it is the button's accessible name).
 */
export function ConfirmButton(props: { text: string; label: string; question: string; onConfirm: () => void }): ReactNode {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" className="danger" aria-label={props.label} onClick={() => setAsking(true)}>
        {props.text}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={props.question}>
      {props.question}{' '}
      <button
        type="button"
        className="danger"
        aria-label={`Yes: ${props.label}`}
        onClick={() => {
          setAsking(false);
          props.onConfirm();
        }}
      >
        Yes
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A secret the API returns once: shown with what to do with it, never again after a reload. */
export function ShownOnce(props: {
  label?: string;
  intro: ReactNode;
  facts?: readonly (readonly [string, ReactNode])[];
  children?: ReactNode;
}): ReactNode {
  return (
    <div className="panel secret" role="status" aria-label={props.label}>
      <p>{props.intro}</p>
      {props.facts ? (
        <dl className="facts">
          {props.facts.map(([term, value]) => (
            <FactRow key={term} term={term} value={value} />
          ))}
        </dl>
      ) : null}
      {props.children}
    </div>
  );
}

function FactRow({ term, value }: { term: string; value: ReactNode }): ReactNode {
  return (
    <>
      <dt>{term}</dt>
      <dd className={typeof value === 'string' ? 'id' : undefined}>{value}</dd>
    </>
  );
}
