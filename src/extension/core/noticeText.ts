/** A notification's message that draws no link (notices.ts says why); without VS Code, so it is unit-tested. */

/** `text` with every `](` written `] (`: `[a](command:x)` is drawn as the words `[a] (command:x)`, not as a link. */
export function plainNotice(text: string): string {
  return text.replace(/\]\(/g, '] (');
}
