/**
 * The push_notification_token registered with the doorbell service: the address a notification is
 * delivered to. Knowing it is what authorises a delivery, so it is a secret. The plugin registers it
 * and the settings page's test motion sends to it, so both compute it here.
 */

/** Direct mode: the receiver's capability URL. */
export function directPushToken(publicUrl: string, receiverSecret: string): string {
  return `${publicUrl}/push/${receiverSecret}`;
}
