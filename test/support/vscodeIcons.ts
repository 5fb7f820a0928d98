/**
 * What VS Code draws from a string where it draws `$(name)` as an icon (a quick pick item, an input box's prompt, the
 * status bar). Its rule (renderLabelWithIcons in src/vs/base/browser/ui/iconLabel/iconLabels.ts, with the name and
 * modifier expressions of ThemeIcon in src/vs/base/common/themables.ts), written here as a fact: it finds
 * `(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)` from left to right; a match without the backslash is drawn as the icon
 * it names, one with the backslash as the words `$(name)` (the backslash dropped); the text between is shown as it is.
 */
const VS_CODE_ICONS = /(\\)?\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

/** The icons VS Code draws from `text`, and the words it shows. */
export function drawn(text: string): { icons: string[]; shown: string } {
  const icons: string[] = [];
  const shown = text.replace(VS_CODE_ICONS, (_match: string, escaped: string | undefined, name: string) => {
    if (escaped) return `$(${name})`;
    icons.push(name);
    return '';
  });
  return { icons, shown };
}
