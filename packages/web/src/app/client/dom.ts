// Small DOM helpers. Text is always set as text, never parsed as HTML.

type Child = Node | string | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined>;

/** Properties set directly on the element; everything else becomes an attribute. */
const PROPERTIES = new Set(['className', 'type', 'value', 'checked', 'hidden', 'disabled', 'open']);

/** `el('p', { className: 'x', text: 'y' }, child, ...)`. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (PROPERTIES.has(key)) Reflect.set(node, key, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/** The element with this id, of the expected type; a missing one is a bug in the page, so it throws. */
export function byId<T extends HTMLElement>(id: string, type: abstract new () => T): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`#${id} is missing from the page`);
  return node;
}

/** A button of the given class and label. */
export const button = (label: string, className = '', extra: Props = {}): HTMLButtonElement =>
  el('button', { type: 'button', className, text: label, ...extra });
