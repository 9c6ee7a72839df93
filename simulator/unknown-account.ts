/** The simulator holds no account with this e-mail. */
export class UnknownAccount extends Error {
  override readonly name = 'UnknownAccount';

  constructor(readonly email: string) {
    super(`the simulator holds no account ${email}`);
  }
}
