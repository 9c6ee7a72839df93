/** The key lives with the shared values: the session module and the settings page's server use it too. */
export { accountKey, type AccountIdentity } from '../values/account-key.js';
