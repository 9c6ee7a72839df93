/**
 * A failure of a settings page request, in words the user can act on: what the page shows. It never
 * holds a stack trace, a token, the code or the receiver secret.
 */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
}
