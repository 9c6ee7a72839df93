/** Names over Matter: at most 32 characters, the doorbell's part cut so that the device's suffix survives. */
import { describe, expect, it } from '@jest/globals';
import { MATTER_NAME_LIMIT, matterName } from '../../src/matter/matter-name.js';

describe('matterName', () => {
  it('keeps a short name and its suffix as they are', () => {
    expect(matterName('Front Door')).toBe('Front Door');
    expect(matterName('Front Door', ' Doorbell')).toBe('Front Door Doorbell');
  });

  it('cuts the doorbell\'s part of a long name so that the whole is 32 characters and the suffix survives', () => {
    const long = 'Garage Side Entrance by the Driveway Gate';

    expect(matterName(long)).toBe('Garage Side Entrance by the Driv');
    expect(matterName(long, ' Doorbell')).toBe('Garage Side Entrance by Doorbell');
    expect(matterName(long, ' Doorbell')).toHaveLength(MATTER_NAME_LIMIT);
  });

  it('leaves no space before the suffix where the cut falls after a word', () => {
    // The 23 characters left for the doorbell end in a space.
    expect(matterName('Garage Side Entrance b and the rest', ' Doorbell')).toBe('Garage Side Entrance b Doorbell');
  });

  it('counts characters, not UTF-16 units: a cut never splits one', () => {
    const name = `${'Ä'.repeat(20)}🚪${'x'.repeat(20)}`;

    expect([...matterName(name, ' Doorbell')]).toHaveLength(MATTER_NAME_LIMIT);
    expect(matterName(name, ' Doorbell')).toBe(`${'Ä'.repeat(20)}🚪xx Doorbell`);
  });
});
