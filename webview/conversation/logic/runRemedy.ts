/** Whether a failed run's cure is *Set API Key*: no key was set, or the server refused the one sent. */
export function needsApiKey(failure: string, status: number | undefined, message: string): boolean {
  return failure === 'no-key' || (failure === 'http' && status === 401) || /\bNo API key is set\b/.test(message);
}
