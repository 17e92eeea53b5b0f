import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIButtonComponentWithCustomId,
  type APIButtonComponentWithURL,
  ButtonStyle,
  ComponentType,
} from 'discord.js';
import { LIMITS } from './limits.js';
import { httpUrl, plainLabel } from './text.js';

export type ButtonRow = APIActionRowComponent<APIButtonComponent>;

/** A link button, or null when the URL is not http(s): nothing else may become a button. */
export function linkButton(label: string, url: string | null | undefined): APIButtonComponentWithURL | null {
  const safe = httpUrl(url);
  if (!safe) return null;
  return {
    type: ComponentType.Button,
    style: ButtonStyle.Link,
    label: plainLabel(label, LIMITS.buttonLabel),
    url: safe,
  };
}

export function actionButton(
  label: string,
  customId: string,
  options: { disabled?: boolean; style?: APIButtonComponentWithCustomId['style'] } = {},
): APIButtonComponentWithCustomId {
  if (customId.length > LIMITS.customId) throw new RangeError(`custom_id over ${LIMITS.customId} characters`);
  return {
    type: ComponentType.Button,
    style: options.style ?? ButtonStyle.Secondary,
    label: plainLabel(label, LIMITS.buttonLabel),
    custom_id: customId,
    disabled: options.disabled ?? false,
  };
}

/** Packs buttons into rows of five, at most five rows; drops nulls. */
export function rows(buttons: ReadonlyArray<APIButtonComponent | null>): ButtonRow[] {
  const present = buttons.filter((b): b is APIButtonComponent => b !== null);
  const out: ButtonRow[] = [];
  for (let i = 0; i < present.length && out.length < LIMITS.rows; i += LIMITS.buttonsPerRow) {
    out.push({ type: ComponentType.ActionRow, components: present.slice(i, i + LIMITS.buttonsPerRow) });
  }
  return out;
}
