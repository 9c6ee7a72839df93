/**
 * Where the soak reads the Doorbell Alerts sensor. 'accessory': the ContactSensor of the accessory the
 * platform publishes (UUID from `doorbell-motion:alerts`), and the plugin's own warning and recovery
 * lines. 'stand-in': for a platform without that accessory, the sensor's rule (open once a doorbell has
 * been down 60 s without a break, closed once none is) is applied to the doorbells' StatusFault, with
 * one warning and one recovery counted per opening, so that the rest of the soak still runs.
 */
export const ALERTS_SENSOR: 'accessory' | 'stand-in' = 'accessory';

/**
 * The outages of a minute or more the week must show, each once: the home cut off from the relay, a
 * web page answering in the relay's place, the session refused, and the doorbell service down across
 * a refresh (the relay's restarts are shorter than a minute and must not count). A platform that
 * shows no fault for a failed registration, as one without the Doorbell Alerts sensor, does not see
 * the last.
 */
export const EXPECTED_OUTAGES = { accessory: 4, 'stand-in': 3 }[ALERTS_SENSOR];
