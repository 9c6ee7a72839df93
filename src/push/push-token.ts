/**
 * The push_notification_token registered with the doorbell service: the address a notification is
 * delivered to. Knowing it is what authorises a delivery, so it is a secret. The plugin registers it
 * and the settings page's test motion sends to it, so both compute it here.
 */

/** Direct mode: the receiver's capability URL. */
export function directPushToken(publicUrl: string, receiverSecret: string): string {
  return `${publicUrl}/push/${receiverSecret}`;
}

/**
 * Relay mode: the topic URL, as a UnifiedPush endpoint. `up=1` makes a relay with subscriber-based
 * rate limiting (ntfy.sh) charge this subscriber, not the doorbell cloud every user shares, and keeps
 * the body as it is (never an attachment, never forwarded to a phone push service).
 */
export function relayPushToken(relayUrl: string, topic: string): string {
  return `${relayUrl}/${topic}?up=1`;
}
