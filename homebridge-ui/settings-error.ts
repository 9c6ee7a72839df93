/**
 * A failure of a settings page request, in words the user can act on: what the page shows. It never
 * holds a stack trace, a token, the code or the receiver secret.
 */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';

  constructor(
    message: string,
    readonly details: SettingsErrorDetails = {},
  ) {
    super(message);
  }
}

/** What the page needs to know besides the message. */
export interface SettingsErrorDetails {
  /**
   * A sign-in's code can no longer be used: the account service has answered it, or it was spent
   * before. The page then empties its code field, so that a second press does not send it again.
   */
  codeSpent?: boolean;
}
